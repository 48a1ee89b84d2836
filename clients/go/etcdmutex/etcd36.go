//go:build !etcd34

// The etcd client's names main.go uses, bound to the client as released from 3.5 on
// (go.etcd.io/etcd/client/v3, the version go.mod pins). etcd34.go binds the same names for the
// 3.4 line.

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
	// Lock's answer when its own key was gone after the wait (the session's lease ended),
	// and Unlock's when the mutex holds nothing: both arrived in 3.5.0 (etcd #11456's fix).
	errSessionExpired = concurrency.ErrSessionExpired
	errLockReleased   = concurrency.ErrLockReleased
)

// events: each session's Done is told as a `lost` event.
var events = []string{"lost"}
