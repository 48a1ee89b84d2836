// The README's first adapter in Go: a lock on one Redis with SET NX PX, no fencing token, on
// lockpick's Go helper (protocol/protocol.go, a copy of clients/go/protocol/protocol.go; here
// a link to it). Build: go build -o bin/my-adapter .
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"

	"example.com/mylock/protocol"
)

func main() { protocol.Serve("github.com/redis/go-redis/v9", start) }

func start(init *protocol.Init) (*protocol.Adapter, error) {
	r := redis.NewClient(&redis.Options{Addr: init.Nodes[0]}) // the proxy in front of node n1
	key, ttl := "mylock:"+init.Lock, init.TTL()
	var value string
	acquire := func(protocol.Request) protocol.Reply {
		b := make([]byte, 16)
		rand.Read(b)
		value = hex.EncodeToString(b)
		deadline := time.Now().Add(init.AcquireTimeout())
		for {
			got, err := r.SetNX(context.Background(), key, value, ttl).Result()
			if err != nil {
				return protocol.Info(err.Error()) // the SET may or may not have landed
			}
			if got {
				// No token, and no lease: SET PX does not say how long is left (see
				// docs/client-protocol.md: never a lease the adapter computed). The owner
				// is the value the server holds, so lockpick can tell whose its key is.
				return protocol.OK(nil, nil, "").WithOwner(value)
			}
			if time.Now().After(deadline) {
				return protocol.Fail("timeout-waiting")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	release := func(protocol.Request) protocol.Reply {
		ours, err := r.Eval(context.Background(), "if redis.call('GET', KEYS[1]) == ARGV[1] then "+
			"return redis.call('DEL', KEYS[1]) end return 0", []string{key}, value).Int()
		switch {
		case err != nil:
			return protocol.Info(err.Error())
		case ours == 1:
			return protocol.OK(nil, nil, "")
		default:
			return protocol.Fail("not-owner")
		}
	}
	return &protocol.Adapter{Name: "my-go-adapter", Acquire: acquire, Release: release}, nil
}
