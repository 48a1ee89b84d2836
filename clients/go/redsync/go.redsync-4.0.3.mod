// The module file this adapter is built with for the pinned release 4.0.3 of redsync
// (pinned-releases: go build -modfile=redsync/go.redsync-4.0.3.mod -tags redsync40), instead of
// clients/go/go.mod: the same module and source, with redsync v4.0.3 and go-redis v8.1.1 as that
// release pinned it. Its checksums are in go.redsync-4.0.3.sum beside it (the go command's rule
// for -modfile). Only ./redsync is built with it.
module lockpick/clients/go

go 1.26.0

require (
	github.com/go-redis/redis/v8 v8.1.1
	github.com/go-redsync/redsync/v4 v4.0.3
)

require (
	github.com/cespare/xxhash/v2 v2.1.1 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.0 // indirect
	go.opentelemetry.io/otel v0.11.0 // indirect
)
