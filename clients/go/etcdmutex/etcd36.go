//go:build !etcd34 && !etcd35

// Unlock's answer when the mutex holds nothing, from 3.6 on (etcdv3.go binds the rest).

package main

import "go.etcd.io/etcd/client/v3/concurrency"

var errLockReleased = concurrency.ErrLockReleased
