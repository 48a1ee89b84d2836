//go:build !etcd34

// The etcd client's names main.go uses, bound to the client as released from 3.5 on
// (go.etcd.io/etcd/client/v3: go.mod pins a 3.6 release, go.etcd-3.5.0.mod the first 3.5).
// etcd34.go binds the same names for the 3.4 line; etcd35.go and etcd36.go the one name
// that differs between 3.5 and 3.6.

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
	// Lock's answer when its own key was gone after the wait (the session's lease ended):
	// etcd #11456's fix, new in 3.5.0.
	errSessionExpired = concurrency.ErrSessionExpired
)

// events: each session's Done is told as a `lost` event.
var events = []string{"lost"}
