//go:build redsync40

// The names main.go uses, bound to redsync's 4.0 line (4.0.3, 4.0.4: go.redsync-4.0.x.mod),
// whose README's client is go-redis v8. These releases have no Mutex.Until (the adapter
// reports no lease: the library states none) and no RedisError: Unlock and Extend return
// false with the nodes' errors joined, or with nil when every node answered that the key was
// not ours.

package main

import (
	"time"

	"github.com/go-redis/redis/v8"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v8"

	"lockpick/clients/go/protocol"
)

// newPool is the 4.0 README's pool: a go-redis v8 client with default options on one node.
func newPool(addr string) redsyncredis.Pool {
	return goredis.NewPool(redis.NewClient(&redis.Options{Addr: addr}))
}

// validity: the 4.0 line keeps its validity to itself (no Until), so the reply claims none.
func validity(*redsync.Mutex) *time.Duration { return nil }

// owner: the 4.0 line keeps the value it SET to itself (no Mutex.Value), so the reply names none.
func owner(*redsync.Mutex) string { return "" }

// notOurs answers an Unlock or Extend that reached no quorum: an error from a node (a
// timeout, a reset) may hide that it did it: unknown; no error means every node answered that
// the key was not ours.
func notOurs(reason string, err error) protocol.Reply {
	if err != nil {
		return protocol.Info(reason + "?: " + err.Error())
	}
	return protocol.Fail(reason)
}
