//go:build etcd34

// The etcd client's names main.go uses, bound to the client as released in the 3.4 line: module
// go.etcd.io/etcd (no /v3 path; the alternate module file go.etcd-3.4.3.mod pins the v3.4.3
// tag's commit by its pseudo-version), packages clientv3 and clientv3/concurrency. Built with
// -tags etcd34 (pinned-releases).

package main

import (
	"errors"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
	"go.etcd.io/etcd/etcdserver/etcdserverpb"
)

// library is the module under test, whose version the hello reports.
const library = "go.etcd.io/etcd"

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
	// The 3.4 client has neither error (ErrSessionExpired and ErrLockReleased arrived in
	// 3.5.0 with etcd #11456's fix): errors it never returns, so those two cases never match.
	errSessionExpired = errors.New("etcd 3.4 has no ErrSessionExpired")
	errLockReleased   = errors.New("etcd 3.4 has no ErrLockReleased")
)

// events: none, a protocol 1 hello. The 3.4 Session has Done too, but the known-bug
// catalogue's 3.4.3 entry (scenarios/known-bugs/etcd-11456-client-3.4.3.toml) was measured
// with an adapter that told no `lost` events; kept so that its verdicts stay comparable.
var events []string
