// Command etcdmutex (etcd client 3.4.3) is clients/go/etcdmutex, the lockpick adapter for
// etcd's concurrency.Mutex, built against the etcd client as released in v3.4.3 (module
// go.etcd.io/etcd at the v3.4.3 tag's commit, 3cf2f69b5738: the 3.4 line has no /v3 module
// path, so it is required by its pseudo-version), for the known-bug catalogue
// (scenarios/known-bugs/): etcd issue #11456, Mutex.Lock returning success after its wait
// although its own key was deleted with its expired lease. The fix (ErrSessionExpired, a Get
// of its own key after the wait) was released in v3.5.0 and never backported to 3.4; the
// fixed side of the catalogue entry is clients/go/etcdmutex (v3.6.16).
//
// Same use of the library as clients/go/etcdmutex, with the 3.4 import paths; the 3.4 client
// has neither ErrSessionExpired nor ErrLockReleased, so those two cases are gone. The
// protocol helper is clients/go/protocol/protocol.go, linked into this module (a symlink), so
// that this module's go.mod pins only the 3.4.3 client and what it needs: requiring
// lockpick/clients/go would pull its gRPC 1.8x into this build.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
	"go.etcd.io/etcd/etcdserver/etcdserverpb"

	"lockpick/clients/go-pinned/etcd-client-3.4.3/protocol"
)

// library is the module under test, whose version the hello reports.
const library = "go.etcd.io/etcd"

// extra is every `[client] init` key this adapter accepts (none); any other is an error.
type extra struct{}

func main() { protocol.Serve(library, start) }

// session is a concurrency.Session, its mutex and the TTL etcd granted its lease.
type session struct {
	s     *concurrency.Session
	mutex *concurrency.Mutex
	ttl   time.Duration
}

func start(init *protocol.Init) (*protocol.Adapter, error) {
	var x extra
	if err := protocol.DecodeExtra(init, &x); err != nil {
		return nil, err
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   init.Nodes,
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client on %v: %w", init.Nodes, err)
	}
	ttlSeconds := int(protocol.Seconds(init.TTL()))
	prefix := "/lockpick/lock/" + init.Lock
	newSession := func(ctx context.Context) (*session, error) {
		s, err := concurrency.NewSession(client, concurrency.WithTTL(ttlSeconds), concurrency.WithContext(context.Background()))
		if err != nil {
			return nil, err
		}
		// etcd may grant more than asked (its minimum TTL): the lease is what it granted.
		ttl := time.Duration(ttlSeconds) * time.Second
		if live, err := client.TimeToLive(ctx, s.Lease()); err == nil && live.GrantedTTL > 0 {
			ttl = time.Duration(live.GrantedTTL) * time.Second
		}
		return &session{s: s, mutex: concurrency.NewMutex(s, prefix), ttl: ttl}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	current, err := newSession(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("etcd session on %v: %w", init.Nodes, err)
	}
	var held *session

	acquire := func(protocol.Request) protocol.Reply {
		ctx, cancel := context.WithTimeout(context.Background(), init.AcquireTimeout())
		defer cancel()
		note := ""
		select {
		case <-current.s.Done():
			// The lease is gone (expired while this process was stopped, or revoked): a
			// Mutex on it can never be granted again, so do as a user would, a new session.
			fresh, err := newSession(ctx)
			if err != nil {
				// NewSession is a lease grant (on the session's own context, which has no
				// deadline: one that hangs is cut by lockpick's limit, as info). If it failed,
				// a lease may exist that nobody keeps alive, but no key was put under the
				// prefix, so the lock is surely not ours.
				return protocol.Fail("no-session: " + err.Error())
			}
			current = fresh
			note = "new session: the previous one's lease ended"
		default:
		}
		m := current.mutex
		err := m.Lock(ctx)
		switch {
		case err == nil:
			held = current
			revision := createRevision(m)
			if note == "" {
				note = fmt.Sprintf("key %s, header revision %d", m.Key(), m.Header().Revision)
			}
			// concurrency.Mutex claims no lease of its own (the session keeps one alive in the
			// background; the mutex does not say how long it is still held): none reported, as
			// clients/go/etcdmutex does, so both sides of the catalogue entry are held to the
			// same checks.
			return protocol.OK(protocol.Token(uint64(revision)), nil, note)
		case m.Key() == "\x00":
			// Lock gave up waiting (the deadline) and its Unlock deleted our key: the
			// library does not hold the lock.
			return protocol.Fail("timeout-waiting")
		default:
			// The Txn that puts our key, or the delete after a failed wait, did not answer:
			// our key may be there.
			fmt.Fprintf(os.Stderr, "adapter: Lock: %v (key %q)\n", err, m.Key())
			return protocol.Info(err.Error())
		}
	}

	release := func(protocol.Request) protocol.Reply {
		s := held
		held = nil
		if s == nil {
			return protocol.Fail("not-owner")
		}
		ctx, cancel := context.WithTimeout(context.Background(), init.OpTimeout())
		defer cancel()
		// Unlock is a plain Delete of our key: it succeeds whether or not the key was still
		// there (a lease that expired took it already), so ok says only that the key is gone.
		switch err := s.mutex.Unlock(ctx); {
		case err == nil:
			return protocol.OK(nil, nil, "")
		default:
			return protocol.Info(err.Error())
		}
	}

	return &protocol.Adapter{
		Name:    "go-etcd-concurrency-mutex-3.4.3",
		Acquire: acquire,
		Release: release,
	}, nil
}

// createRevision is the create revision of m's key, as the library compares it in IsOwner.
func createRevision(m *concurrency.Mutex) int64 {
	cmp := m.IsOwner()
	if rev, ok := cmp.TargetUnion.(*etcdserverpb.Compare_CreateRevision); ok {
		return rev.CreateRevision
	}
	panic(fmt.Sprintf("Mutex.IsOwner compares %v, not the create revision", cmp.Target))
}
