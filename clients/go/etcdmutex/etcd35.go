//go:build etcd35

// The 3.5 line has no answer of its own for an Unlock of a mutex that holds nothing
// (ErrLockReleased arrived in 3.6): an error 3.5 never returns, so that case never matches.
// etcdv3.go binds the rest. Built with -tags etcd35 (pinned-releases).

package main

import "errors"

var errLockReleased = errors.New("etcd 3.5 has no ErrLockReleased")
