//go:build etcd35

// The etcd client's names main.go uses, bound to the 3.5 line of the client
// (go.etcd.io/etcd/client/v3, pinned by the alternate module file go.etcd-3.5.0.mod): the same
// packages as etcd36.go, without ErrLockReleased, which arrived in 3.6. Built with -tags etcd35
// (pinned-releases).

package main

import (
	"errors"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// library is the module under test, whose version the hello reports.
const library = "go.etcd.io/etcd/client/v3"

type (
	clientConfig          = clientv3.Config
	etcdSession           = concurrency.Session
	etcdMutex             = concurrency.Mutex
	compareCreateRevision = etcdserverpb.Compare_CreateRevision
)

var (
	newClient   = clientv3.New
	newSession  = concurrency.NewSession
	withTTL     = concurrency.WithTTL
	withContext = concurrency.WithContext
	newMutex    = concurrency.NewMutex
	// Lock's answer when its own key was gone after the wait (the session's lease ended):
	// etcd #11456's fix, new in 3.5.0.
	errSessionExpired = concurrency.ErrSessionExpired
	// Unlock's answer when the mutex holds nothing arrived in 3.6: an error 3.5 never returns,
	// so that case never matches.
	errLockReleased = errors.New("etcd 3.5 has no ErrLockReleased")
)

// events: each session's Done is told as a `lost` event, as the 3.6 build does.
var events = []string{"lost"}
