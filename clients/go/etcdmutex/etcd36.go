//go:build !etcd34 && !etcd35

// The etcd client's names main.go uses, bound to the client as released from 3.6 on
// (go.etcd.io/etcd/client/v3, the version go.mod pins). etcd35.go and etcd34.go bind the same
// names for the 3.5 and 3.4 lines.

package main

import (
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
	// Lock's answer when its own key was gone after the wait (the session's lease ended:
	// etcd #11456's fix, in 3.5.0), and Unlock's when the mutex holds nothing (3.6).
	errSessionExpired = concurrency.ErrSessionExpired
	errLockReleased   = concurrency.ErrLockReleased
)

// events: each session's Done is told as a `lost` event.
var events = []string{"lost"}
