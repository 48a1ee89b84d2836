// The module file this adapter is built with for the pinned release 3.4.3 of etcd's Go client
// (pinned-releases: go build -modfile=etcdmutex/go.etcd-3.4.3.mod -tags etcd34), instead of
// clients/go/go.mod: the same module and source, with go.etcd.io/etcd at the v3.4.3 tag's
// commit (the 3.4 line has no /v3 module path, so it is required by that commit's
// pseudo-version) and gRPC 1.23.1 as that release pinned it. Its checksums are in
// go.etcd-3.4.3.sum beside it (the go command's rule for -modfile). Only ./etcdmutex is built
// with it.
module lockpick/clients/go

go 1.26.0

require go.etcd.io/etcd v0.0.0-20191023171146-3cf2f69b5738

require (
	github.com/coreos/go-systemd v0.0.0-20180511133405-39ca1b05acc7 // indirect
	github.com/coreos/pkg v0.0.0-20160727233714-3ac0863d7acf // indirect
	github.com/gogo/protobuf v1.2.1 // indirect
	github.com/golang/protobuf v1.3.2 // indirect
	github.com/google/uuid v1.0.0 // indirect
	go.uber.org/atomic v1.3.2 // indirect
	go.uber.org/multierr v1.1.0 // indirect
	go.uber.org/zap v1.10.0 // indirect
	golang.org/x/net v0.0.0-20190813141303-74dc4d7220e7 // indirect
	golang.org/x/sys v0.0.0-20190826190057-c7b8b68b1456 // indirect
	golang.org/x/text v0.3.0 // indirect
	google.golang.org/genproto v0.0.0-20180817151627-c66870c02cf8 // indirect
	google.golang.org/grpc v1.23.1 // indirect
)
