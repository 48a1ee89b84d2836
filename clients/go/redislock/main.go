// Command redislock is the lockpick adapter for bsm/redislock (docs/client-protocol.md), used
// as its README shows: redislock.New(goredis client), locker.Obtain(ctx, key, ttl,
// &redislock.Options{RetryStrategy: ...}), lock.Release(ctx), lock.Refresh(ctx, ttl, nil)
// (renew; redislock has no automatic refresh). One Redis (the first node). No fencing token:
// the lock's "token" is its random value, not a number a resource can order.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"lockpick/clients/go/protocol"
)

// library is the module under test, whose version the hello reports.
const library = "github.com/bsm/redislock"

// extra is every `[client] init` key this adapter accepts (none); any other is an error.
type extra struct{}

func main() { protocol.Serve(library, start) }

func start(init *protocol.Init) (*protocol.Adapter, error) {
	var x extra
	if err := protocol.DecodeExtra(init, &x); err != nil {
		return nil, err
	}
	// The README's client: default options.
	locker := redislock.New(redis.NewClient(&redis.Options{Addr: init.Nodes[0]}))
	key := "lockpick:lock:" + init.Lock
	ttl := init.TTL()
	delay := init.MeanRetryDelay()
	// The README's strategies: a linear backoff, limited to as many tries as fill
	// acquire_timeout_ms. When they run out Obtain returns ErrNotObtained, which the library
	// knows; a deadline on the context stops it only if the tries themselves are slow, and
	// then the last SET's outcome is unknown.
	tries := max(1, int(init.AcquireTimeout()/delay))
	var held *redislock.Lock

	acquire := func(protocol.Request) protocol.Reply {
		ctx, cancel := context.WithTimeout(context.Background(), init.AcquireTimeout()+init.OpTimeout()/2)
		defer cancel()
		lock, err := locker.Obtain(ctx, key, ttl, &redislock.Options{
			RetryStrategy: redislock.LimitRetry(redislock.LinearBackoff(delay), tries),
		})
		switch {
		case err == nil:
			held = lock
			// No lease claim: Obtain returns the lock and nothing about how long it has.
			// Asking (Lock.TTL) is one more round trip before the grant is reported; under
			// latency that reported the grant after its key expired, and the trusting client
			// wrote on it (10-seed library matrix, go-redislock x latency: a double holder the
			// adapter made). renew asks, since Refresh has just run. The key's value is the
			// lock's token (Lock.Token), by which the server's record knows this holder.
			return protocol.OK(nil, nil, "").WithOwner(lock.Token())
		case errors.Is(err, redislock.ErrNotObtained):
			return protocol.Fail("timeout-waiting")
		default:
			fmt.Fprintf(os.Stderr, "adapter: Obtain: %v\n", err)
			return protocol.Info(err.Error())
		}
	}

	release := func(protocol.Request) protocol.Reply {
		lock := held
		held = nil
		if lock == nil {
			return protocol.Fail("not-owner")
		}
		ctx, cancel := context.WithTimeout(context.Background(), init.OpTimeout())
		defer cancel()
		switch err := lock.Release(ctx); {
		case err == nil:
			return protocol.OK(nil, nil, "")
		case errors.Is(err, redislock.ErrLockNotHeld):
			// The compare-and-delete found another value or none: not ours any more.
			return protocol.Fail("not-owner")
		default:
			return protocol.Info(err.Error())
		}
	}

	renew := func(protocol.Request) protocol.Reply {
		if held == nil {
			return protocol.Fail("lost")
		}
		ctx, cancel := context.WithTimeout(context.Background(), init.OpTimeout())
		defer cancel()
		switch err := held.Refresh(ctx, ttl, nil); {
		case err == nil:
			return protocol.OK(nil, leaseOf(ctx, held), "")
		case errors.Is(err, redislock.ErrNotObtained):
			return protocol.Fail("lost")
		default:
			return protocol.Info(err.Error())
		}
	}

	return &protocol.Adapter{
		Name:    "go-redislock",
		Acquire: acquire,
		Release: release,
		Renew:   renew,
	}, nil
}

// leaseOf is the lease the library says the lock has left: Lock.TTL, which the README shows
// (a PTTL of the key while it still holds our token); none when it cannot say.
func leaseOf(ctx context.Context, lock *redislock.Lock) *time.Duration {
	left, err := lock.TTL(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "adapter: TTL: %v\n", err)
		return nil
	}
	return protocol.Lease(left)
}
