//go:build !redsync40

// The names main.go uses, bound to redsync as go.mod pins it: go-redis v9, Mutex.Until, and
// RedisError for a node that did not answer. redsync_v40.go binds them for the 4.0 line.

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"

	"lockpick/clients/go/protocol"
)

// newPool is the README's pool: a go-redis client with default options on one node.
func newPool(addr string) redis.Pool {
	return goredis.NewPool(goredislib.NewClient(&goredislib.Options{Addr: addr}))
}

// validity is what the library says is left of the mutex's lease (Until, set by Lock and by
// Extend).
func validity(m *redsync.Mutex) *time.Duration {
	return protocol.Lease(time.Until(m.Until()))
}

// owner is the value the mutex SET on every master (Mutex.Value), by which the server's record
// knows this holder.
func owner(m *redsync.Mutex) string {
	return m.Value()
}

// notOurs answers an Unlock or Extend that reached no quorum. Masters that answered "not our
// value" or "no key" (ErrNodeTaken, ErrTaken, ErrLockAlreadyExpired, or no error at all) say
// the lock is not ours: fail with reason. A master that did not answer (RedisError: a
// timeout, a reset) may have done it: unknown.
func notOurs(reason string, err error) protocol.Reply {
	var redisErr *redsync.RedisError
	if errors.As(err, &redisErr) {
		return protocol.Info(fmt.Sprintf("%s?: %v", reason, err))
	}
	if err != nil {
		return protocol.Fail(reason + ": " + err.Error())
	}
	return protocol.Fail(reason)
}
