// Command redsync is the lockpick adapter for go-redsync/redsync v4 (docs/client-protocol.md),
// used as its README shows: a go-redis v9 client per Redis, goredis.NewPool(client),
// redsync.New(pools...), rs.NewMutex(name, options...), Lock, Unlock, Extend (renew; redsync
// has no automatic extension).
//
// One pool on the first node, or with init `redlock = true` one pool per node: Redlock, a
// majority of the masters within the validity (expiry − elapsed − 1% drift). No fencing
// token: Redlock has none.
//
// redsync_v4.go binds the library as go.mod pins it (and as the 4.12 builds of pinned-releases
// have it); redsync_v40.go binds the 4.0 line, for the known-bug catalogue's PR #61 pair.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"

	"lockpick/clients/go/protocol"
)

// library is the module under test, whose version the hello reports.
const library = "github.com/go-redsync/redsync/v4"

// extra is every `[client] init` key this adapter accepts; any other is an error.
type extra struct {
	// Redlock: one pool per node (redsync.New(pools...) over all of them) instead of one
	// pool on the first node.
	Redlock bool `json:"redlock"`
}

func main() { protocol.Serve(library, start) }

func start(init *protocol.Init) (*protocol.Adapter, error) {
	var x extra
	if err := protocol.DecodeExtra(init, &x); err != nil {
		return nil, err
	}
	nodes := init.Nodes[:1]
	name := "go-redsync"
	if x.Redlock {
		nodes = init.Nodes
		name = "go-redsync-redlock"
	}
	var pools []redis.Pool
	for _, node := range nodes {
		pools = append(pools, newPool(node))
	}
	rs := redsync.New(pools...)
	// Tries enough to fill acquire_timeout_ms at the mean pause; the deadline below ends the
	// acquire at acquire_timeout_ms whatever the tries cost.
	low, high := init.RetryDelayMs[0], init.RetryDelayMs[1]
	random := rand.New(rand.NewPCG(init.Seed, init.Process))
	tries := max(1, int(init.AcquireTimeout()/init.MeanRetryDelay()))
	expiry := init.TTL()
	// One Mutex per acquire, as a caller that locks a named resource each time would make it.
	newMutex := func() *redsync.Mutex {
		return rs.NewMutex("lockpick:lock:"+init.Lock,
			redsync.WithExpiry(expiry),
			redsync.WithTries(tries),
			redsync.WithRetryDelayFunc(func(int) time.Duration {
				return time.Duration(low+random.Uint64N(high-low+1)) * time.Millisecond
			}),
		)
	}
	var held *redsync.Mutex

	acquire := func(protocol.Request) protocol.Reply {
		mutex := newMutex()
		ctx, cancel := context.WithTimeout(context.Background(), init.AcquireTimeout())
		defer cancel()
		if err := mutex.LockContext(ctx); err != nil {
			// lockContext returns only after a try without a quorum in time, whose SETs it
			// then deleted (best effort): the library does not hold the lock, whatever the
			// masters answered.
			fmt.Fprintf(os.Stderr, "adapter: Lock: %v\n", err)
			return protocol.Fail("timeout-waiting")
		}
		held = mutex
		return protocol.OK(nil, validity(mutex), "").WithOwner(owner(mutex))
	}

	release := func(protocol.Request) protocol.Reply {
		mutex := held
		held = nil
		if mutex == nil {
			return protocol.Fail("not-owner")
		}
		ctx, cancel := context.WithTimeout(context.Background(), init.OpTimeout())
		defer cancel()
		ok, err := mutex.UnlockContext(ctx)
		if ok {
			return protocol.OK(nil, nil, "")
		}
		return notOurs("not-owner", err)
	}

	renew := func(protocol.Request) protocol.Reply {
		if held == nil {
			return protocol.Fail("lost")
		}
		ctx, cancel := context.WithTimeout(context.Background(), init.OpTimeout())
		defer cancel()
		ok, err := held.ExtendContext(ctx)
		if ok {
			return protocol.OK(nil, validity(held), "")
		}
		return notOurs("lost", err)
	}

	return &protocol.Adapter{
		Name:    name,
		Acquire: acquire,
		Release: release,
		Renew:   renew,
	}, nil
}
