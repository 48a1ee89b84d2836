// Command zklock is the lockpick adapter for go-zookeeper/zk's Lock (docs/client-protocol.md),
// used as its documentation shows: zk.Connect(servers, sessionTimeout), zk.NewLock(conn, path,
// zk.WorldACL(zk.PermAll)), Lock(), Unlock(). The session timeout is ttl_ms; the library
// keeps the session alive itself (its ping loop, stopped with the process during a client
// pause) and, when the session expires, silently opens a new one on the same Conn.
//
// The one signal the library gives its user is the event channel zk.Connect returns: session
// states StateDisconnected (the connection dropped; the session may live: `suspended`),
// StateExpired (the session, its lock node with it, is gone: `lost`) and StateHasSession after
// one of them (`reconnected`), each told to lockpick as it comes (protocol 2). The Lock itself
// says nothing.
//
// No fencing token: the lock node's sequence number is in the Lock's unexported seq and
// lockPath fields; the library does not expose it. No renew: there is no lease to extend.
// Lock() takes no deadline: an acquire still waiting at acquire_timeout_ms is answered info
// (the node may yet be granted), and lockpick retires the process.
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"

	"lockpick/clients/go/protocol"
)

// library is the module under test, whose version the hello reports.
const library = "github.com/go-zookeeper/zk"

// extra is every `[client] init` key this adapter accepts (none); any other is an error.
type extra struct{}

func main() { protocol.Serve(library, start) }

func start(init *protocol.Init) (*protocol.Adapter, error) {
	var x extra
	if err := protocol.DecodeExtra(init, &x); err != nil {
		return nil, err
	}
	conn, events, err := zk.Connect(init.Nodes, init.TTL())
	if err != nil {
		return nil, fmt.Errorf("zk.Connect %v: %w", init.Nodes, err)
	}
	// Connect returns at once; wait for a session so that an unreachable ensemble fails init.
	// The events go on to stderr afterwards (session expiry shows there), and draining them
	// keeps the library from dropping them.
	connected := make(chan struct{})
	go func() {
		once, cut := false, false
		for event := range events {
			fmt.Fprintf(os.Stderr, "adapter: zk event %s %s (session %#x)\n", event.Type, event.State, conn.SessionID())
			if event.Type == zk.EventSession {
				reason := fmt.Sprintf("session event %s", event.State)
				switch {
				case event.State == zk.StateExpired:
					cut = true
					protocol.Event("lost", nil, reason)
				case event.State == zk.StateDisconnected && once:
					cut = true
					protocol.Event("suspended", nil, reason)
				case event.State == zk.StateHasSession && cut:
					cut = false
					protocol.Event("reconnected", nil, reason)
				}
			}
			if event.State == zk.StateHasSession && !once {
				once = true
				close(connected)
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("no ZooKeeper session on %v within 10 s", init.Nodes)
	}
	path := "/locks/" + init.Lock
	acl := zk.WorldACL(zk.PermAll)
	var held *zk.Lock

	acquire := func(protocol.Request) protocol.Reply {
		// A Lock per acquire, as a caller would write NewLock(...).Lock() around its work: a
		// Lock whose Unlock failed keeps its path and refuses to lock again (ErrDeadlock).
		lock := zk.NewLock(conn, path, acl)
		done := make(chan error, 1)
		go func() { done <- lock.Lock() }()
		select {
		case err := <-done:
			if err != nil {
				// Its node may have been created before the error: unknown.
				fmt.Fprintf(os.Stderr, "adapter: Lock: %v\n", err)
				return protocol.Info(err.Error())
			}
			held = lock
			// zk.Lock claims no lease (the session timeout is the server's, not a validity
			// the lock promises): none reported. Its znode holds no data, so the server's
			// record knows the holder by the node's owner, this session (Conn.SessionID, in
			// hex as ZooKeeper prints it).
			return protocol.OK(nil, nil, "").WithOwner(fmt.Sprintf("%#x", conn.SessionID()))
		case <-time.After(init.AcquireTimeout()):
			return protocol.Info("timeout-waiting: zk.Lock has no deadline and is still waiting")
		}
	}

	release := func(protocol.Request) protocol.Reply {
		lock := held
		held = nil
		if lock == nil {
			return protocol.Fail("not-owner")
		}
		// Unlock deletes the node with its path and any version; the library has no deadline
		// on it either, and retries on a new connection within the session.
		done := make(chan error, 1)
		go func() { done <- lock.Unlock() }()
		select {
		case err := <-done:
			switch {
			case err == nil:
				return protocol.OK(nil, nil, "")
			case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNotLocked):
				// The node is gone: its session expired and ZooKeeper deleted it.
				return protocol.Fail("not-owner: " + err.Error())
			case errors.Is(err, zk.ErrSessionExpired):
				return protocol.Fail("not-owner: " + err.Error())
			default:
				return protocol.Info(err.Error())
			}
		case <-time.After(init.OpTimeout()):
			return protocol.Info("timeout: Unlock did not return")
		}
	}

	return &protocol.Adapter{
		Name:    "go-zookeeper-lock",
		Acquire: acquire,
		Release: release,
		Events:  []string{"lost", "suspended", "reconnected"},
	}, nil
}
