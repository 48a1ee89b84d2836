// The module file this adapter is built with for the pinned release 3.5.0 of etcd's Go client
// (pinned-releases: go build -modfile=etcdmutex/go.etcd-3.5.0.mod -tags etcd35), instead of
// clients/go/go.mod: the same module and source (etcdv3.go and etcd35.go bind its names: the
// /v3 module paths began with 3.5), with go.etcd.io/etcd/client/v3 at v3.5.0, the first release
// with the fix for etcd #11456 (the known-bug catalogue's fixed twin), and what it requires.
// Its checksums are in go.etcd-3.5.0.sum beside it. Only ./etcdmutex is built with it.
module lockpick/clients/go

go 1.26.0

require (
	go.etcd.io/etcd/api/v3 v3.5.0
	go.etcd.io/etcd/client/v3 v3.5.0
)

require (
	github.com/coreos/go-semver v0.3.0 // indirect
	github.com/coreos/go-systemd/v22 v22.3.2 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.2 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.5.0 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.6.0 // indirect
	go.uber.org/zap v1.17.0 // indirect
	golang.org/x/net v0.0.0-20210405180319-a5a99cb37ef4 // indirect
	golang.org/x/sys v0.0.0-20210603081109-ebe580a85c40 // indirect
	golang.org/x/text v0.3.5 // indirect
	google.golang.org/genproto v0.0.0-20210602131652-f16073e35f0c // indirect
	google.golang.org/grpc v1.38.0 // indirect
	google.golang.org/protobuf v1.26.0 // indirect
)
