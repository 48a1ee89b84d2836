// Command etcd is etcd 3.6's own server, built from the Go module proxy at the version go.mod
// pins: the same entry point as etcd's server/main.go, so it takes etcd's flags unchanged.
// scripts/setup builds it into bin/etcd, where lockpick's `[server] version = "3.6"` finds it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
