// Command etcdmutex is the lockpick adapter for etcd's own lock, the etcd Go client's
// concurrency.Mutex (docs/client-protocol.md), used as its documentation shows: clientv3.New
// on every node, concurrency.NewSession(client, concurrency.WithTTL(seconds)),
// concurrency.NewMutex(session, prefix), Lock(ctx), Unlock(ctx). The session's lease, kept
// alive by the client library in the background, is the lock's lease: its TTL is ttl_ms
// rounded up to whole seconds (etcd leases are whole seconds). No renew: there is nothing to
// extend by hand.
//
// The library tells its user that the session (and any lock held on it) is gone by closing
// Session.Done(): the keep-alive stopped, the lease expired or was revoked. Each session's
// Done is told to lockpick as a `lost` event (protocol 2) the moment it closes (not in the
// 3.4 build: etcd34.go says why).
//
// The fencing token is the create revision of the mutex's key, the number the library itself
// compares to prove ownership (Mutex.IsOwner: CreateRevision(Key()) == myRev), read from that
// comparison, with no extra request. Mutex.Header().Revision is not it: after a wait it is the
// revision of the Get that saw the lock free, later than the create revision.
//
// One source for every client release it is built against: by default go.etcd.io/etcd/client/v3
// as go.mod pins it; the releases in pinned-releases with their own module file and build tag
// (tag etcd34 for the 3.4 line, whose import paths differ; etcd35 for 3.5). The library's
// names this file uses (newClient, newSession, etcdMutex, ...) are bound to the library in
// etcdv3.go, etcd36.go, etcd35.go and etcd34.go, the only files that import it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"lockpick/clients/go/protocol"
)

// extra is every `[client] init` key this adapter accepts (none); any other is an error.
type extra struct{}

func main() { protocol.Serve(library, start) }

// session is a concurrency.Session, its mutex and the TTL etcd granted its lease.
type session struct {
	s     *etcdSession
	mutex *etcdMutex
	ttl   time.Duration
}

func start(init *protocol.Init) (*protocol.Adapter, error) {
	var x extra
	if err := protocol.DecodeExtra(init, &x); err != nil {
		return nil, err
	}
	client, err := newClient(clientConfig{
		Endpoints:   init.Nodes,
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client on %v: %w", init.Nodes, err)
	}
	ttlSeconds := int(protocol.Seconds(init.TTL()))
	prefix := "/lockpick/lock/" + init.Lock
	newSession := func(ctx context.Context) (*session, error) {
		s, err := newSession(client, withTTL(ttlSeconds), withContext(context.Background()))
		if err != nil {
			return nil, err
		}
		if len(events) > 0 {
			go func() {
				<-s.Done()
				fmt.Fprintf(os.Stderr, "adapter: session %x Done (its lease ended)\n", s.Lease())
				protocol.Event("lost", nil, fmt.Sprintf("Session.Done: the keep-alive of lease %x stopped", s.Lease()))
			}()
		}
		// etcd may grant more than asked (its minimum TTL): the lease is what it granted.
		ttl := time.Duration(ttlSeconds) * time.Second
		if live, err := client.TimeToLive(ctx, s.Lease()); err == nil && live.GrantedTTL > 0 {
			ttl = time.Duration(live.GrantedTTL) * time.Second
		}
		return &session{s: s, mutex: newMutex(s, prefix), ttl: ttl}, nil
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
			// background; the mutex does not say how long it is still held): none reported.
			// The key is named after the session's lease and holds no value: the server's
			// record knows the holder by that lease (docs/server-record.md).
			return protocol.OK(protocol.Token(uint64(revision)), nil, note).
				WithOwner(fmt.Sprintf("lease:%x", current.s.Lease()))
		case errors.Is(err, errSessionExpired):
			// Lock saw its own key gone after the wait: the session's lease ended.
			return protocol.Fail("session-expired")
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
		case errors.Is(err, errLockReleased):
			return protocol.Fail("not-owner")
		default:
			return protocol.Info(err.Error())
		}
	}

	return &protocol.Adapter{
		Name:    "go-etcd-concurrency-mutex",
		Acquire: acquire,
		Release: release,
		Events:  events,
	}, nil
}

// createRevision is the create revision of m's key, as the library compares it in IsOwner.
func createRevision(m *etcdMutex) int64 {
	cmp := m.IsOwner()
	if rev, ok := cmp.TargetUnion.(*compareCreateRevision); ok {
		return rev.CreateRevision
	}
	panic(fmt.Sprintf("Mutex.IsOwner compares %v, not the create revision", cmp.Target))
}
