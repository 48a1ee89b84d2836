// The module file this adapter is built with for the pinned release 4.12.0 of redsync
// (pinned-releases: go build -modfile=redsync/go.redsync-4.12.0.mod), instead of clients/go/go.mod:
// the same module and source (redsync_v4.go: this release has Mutex.Until and RedisError),
// with redsync v4.12.0 and go-redis v9.4.0 as that release pinned it. Its checksums are in
// go.redsync-4.12.0.sum beside it (the go command's rule for -modfile). Only ./redsync is built
// with it.
module lockpick/clients/go

go 1.26.0

require (
	github.com/go-redsync/redsync/v4 v4.12.0
	github.com/redis/go-redis/v9 v9.4.0
)

require (
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
)
