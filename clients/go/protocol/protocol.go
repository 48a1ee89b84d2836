// Package protocol is the lockpick client protocol (docs/client-protocol.md), versions 1 and 2,
// for Go adapters, as clients/python/lockpick_protocol.py and clients/node/protocol.js are for
// theirs: it reads JSON lines from stdin and answers one request at a time, strictly in order,
// on stdout; an adapter whose library tells its user of a lost lock sets Adapter.Events and
// calls Event from the library's signal (version 2). Diagnostics go to stderr; stdout carries
// protocol lines only.
//
// An adapter calls Serve with a function that builds the lock from init and returns its ops.
// Each op returns OK, Fail or Info. An op that panics is answered Info (its outcome is
// unknown), as the Python and Node helpers answer an exception.
package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Version is the protocol version of an adapter that sends no events, VersionEvents that of
// one that does; lockpick's newest is PROTOCOL_VERSION in harness/src/client/process/codec.rs,
// which init carries (a later lockpick may carry a higher one).
const (
	Version       = 1
	VersionEvents = 2
)

// Events is what an adapter may declare in Adapter.Events.
var Events = []string{"lost", "suspended", "reconnected"}

// stdout, guarded: a library's goroutine writes events while Serve writes replies. Events told
// before the hello wait in early and go out right after it.
var (
	writing   sync.Mutex
	stdout    = bufio.NewWriter(os.Stdout)
	helloSent bool
	early     []map[string]any
	// eventsOn: this lockpick takes events (init's newest_protocol is 2 or more) and the
	// adapter declared some; otherwise Event sends nothing.
	eventsOn bool
)

// Event tells lockpick, unasked, what the library just told its user: name is one of the
// adapter's Events; token (nil: none) and reason ("": none) are optional. Safe from any
// goroutine.
func Event(name string, token *uint64, reason string) {
	line := map[string]any{"type": "event", "event": name, "token": token}
	if reason != "" {
		line["reason"] = reason
	}
	writing.Lock()
	defer writing.Unlock()
	if !helloSent {
		early = append(early, line)
		return
	}
	if eventsOn {
		writeLocked(stdout, line)
	}
}

// Init is lockpick's first line: the lock to build.
type Init struct {
	ID       uint64 `json:"id"`
	Protocol int    `json:"protocol"`
	// NewestProtocol is the newest version lockpick speaks (absent before version 2: then
	// Protocol); Protocol is the oldest, which every adapter takes.
	NewestProtocol   int       `json:"newest_protocol"`
	Nodes            []string  `json:"nodes"`
	Lock             string    `json:"lock"`
	TTLMs            uint64    `json:"ttl_ms"`
	AcquireTimeoutMs uint64    `json:"acquire_timeout_ms"`
	RetryDelayMs     [2]uint64 `json:"retry_delay_ms"`
	OpTimeoutMs      uint64    `json:"op_timeout_ms"`
	Client           uint64    `json:"client"`
	Process          uint64    `json:"process"`
	Seed             uint64    `json:"seed"`
	// The scenario's `[client] init` table, as it is. Read it with DecodeExtra.
	Extra json.RawMessage `json:"extra"`
}

// TTL is the lease to ask for.
func (i *Init) TTL() time.Duration { return ms(i.TTLMs) }

// AcquireTimeout is how long one acquire may keep retrying.
func (i *Init) AcquireTimeout() time.Duration { return ms(i.AcquireTimeoutMs) }

// OpTimeout is lockpick's limit on one request other than acquire.
func (i *Init) OpTimeout() time.Duration { return ms(i.OpTimeoutMs) }

// MeanRetryDelay is the middle of retry_delay_ms, at least 1 ms: for libraries that take one
// fixed pause between tries.
func (i *Init) MeanRetryDelay() time.Duration {
	return max(time.Millisecond, ms((i.RetryDelayMs[0]+i.RetryDelayMs[1])/2))
}

func ms(n uint64) time.Duration { return time.Duration(n) * time.Millisecond }

// DecodeExtra decodes init's extra table into into, a pointer to the adapter's struct of
// accepted keys (its json tags are the keys). A key the struct does not have, or a value of
// the wrong type, is an error: a scenario that asks for a variant the adapter does not know
// must not run a default one silently.
func DecodeExtra(init *Init, into any) error {
	if len(init.Extra) == 0 || string(init.Extra) == "null" {
		return nil
	}
	decoder := json.NewDecoder(bytes.NewReader(init.Extra))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(into); err != nil {
		return fmt.Errorf("[client] init %s: %w", init.Extra, err)
	}
	return nil
}

// Request is one request after init.
type Request struct {
	Type   string `json:"type"`
	ID     uint64 `json:"id"`
	Holder string `json:"holder"`
}

// Reply is an op's answer: build it with OK, Fail or Info.
type Reply struct {
	kind    string
	token   *uint64
	leaseMs *uint64
	note    string
	reason  string
	owner   string
}

// OK says the request happened. token is the fencing token (nil: the library has none);
// lease is the lease the library believes it holds from now (nil: no lease). A negative lease
// is reported as 0.
func OK(token *uint64, lease *time.Duration, note string) Reply {
	reply := Reply{kind: "ok", token: token, note: note}
	if lease != nil {
		n := uint64(max(0, lease.Milliseconds()))
		reply.leaseMs = &n
	}
	return reply
}

// WithOwner adds to an acquire's OK the value by which the lock's server knows this holder
// (the key's value, a lease id), when the library says it: the server's record of the lock
// attributes that value to this process (docs/server-record.md). Say it only from what the
// library exposes, never a value the adapter computed.
func (r Reply) WithOwner(owner string) Reply {
	r.owner = owner
	return r
}

// Fail says the request surely did not happen. Use "timeout-waiting" for an acquire that gave
// up, "not-owner" for a release of a lock no longer ours, "lost" for a renew of a lost lock.
func Fail(reason string) Reply { return Reply{kind: "fail", reason: reason} }

// Info says the outcome is unknown; lockpick then retires this process.
func Info(reason string) Reply { return Reply{kind: "info", reason: reason} }

// Token is a fencing token for OK.
func Token(n uint64) *uint64 { return &n }

// Lease is a lease for OK.
func Lease(d time.Duration) *time.Duration { return &d }

func (r Reply) line(id uint64) map[string]any {
	line := map[string]any{"type": r.kind, "id": id}
	if r.kind == "ok" {
		line["token"] = r.token
		line["lease_ms"] = r.leaseMs
		if r.note != "" {
			line["note"] = r.note
		}
		if r.owner != "" {
			line["owner"] = r.owner
		}
	} else {
		line["reason"] = r.reason
	}
	return line
}

// Op answers one request.
type Op func(Request) Reply

// Adapter is what an adapter's start function builds from init.
type Adapter struct {
	// Name is the adapter's own name in the hello, e.g. "go-redsync". The library's module
	// (given to Serve) and the version this binary was built with, from its build info, go
	// into the hello as library and version.
	Name    string
	Acquire Op
	Release Op
	// Renew is nil when the library cannot extend a lease by hand.
	Renew Op
	// Events are what the adapter may tell with Event (of Events); none: a version 1 hello.
	Events []string
}

// ModuleVersion is the version of module linked into this binary, from its build info: a
// dependency's (go.mod's require), or the main module's own when the lock is the adapter
// module's own code ("(devel)" for a build of its folder, as Go reports it).
func ModuleVersion(module string) (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("this binary has no build info; build it with `go build` (module mode)")
	}
	if info.Main.Path == module {
		return info.Main.Version, nil
	}
	for _, dep := range info.Deps {
		if dep.Path == module {
			if dep.Replace != nil {
				return dep.Replace.Version, nil
			}
			return dep.Version, nil
		}
	}
	return "", fmt.Errorf("module %s is neither this binary's main module (%s) nor one it links; name the module of the lock under test, as its go.mod requires it", module, info.Main.Path)
}

func write(out *bufio.Writer, message any) {
	writing.Lock()
	defer writing.Unlock()
	writeLocked(out, message)
}

func writeLocked(out *bufio.Writer, message any) {
	line, err := json.Marshal(message)
	if err != nil {
		fatalf("cannot encode %v: %v", message, err)
	}
	out.Write(line)
	out.WriteByte('\n')
	if err := out.Flush(); err != nil {
		fatalf("stdout: %v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "adapter: "+format+"\n", args...)
	os.Exit(1)
}

// call runs op, answering Info for a panic: the outcome of a request that blew up is unknown.
func call(op Op, request Request) (reply Reply) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "adapter: %s panicked: %v\n%s", request.Type, p, debug.Stack())
			reply = Info(fmt.Sprintf("panic: %v", p))
		}
	}()
	return op(request)
}

// Serve runs the protocol loop until stdin closes. module is the Go module of the library
// under test. start builds the lock from init; an error from it (a missing server, an unknown
// init key) is answered with a fail to init, which lockpick reports as a broken adapter with
// this line and the adapter's stderr, and the adapter exits.
//
// With the single argument --version it prints the module and the version it was built with
// and exits (scripts/setup shows it).
func Serve(module string, start func(*Init) (*Adapter, error)) {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		version, err := ModuleVersion(module)
		if err != nil {
			fatalf("%v", err)
		}
		fmt.Println(module, version)
		return
	}
	in := bufio.NewReader(os.Stdin)
	out := stdout
	var adapter *Adapter
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return // lockpick closed our stdin: done
			}
			continue
		}
		if adapter == nil {
			var init Init
			err := json.Unmarshal(line, &init)
			if err != nil {
				err = fmt.Errorf("not an init this helper reads (%w): %s", err, bytes.TrimSpace(line))
			}
			if err == nil && init.Protocol < Version {
				err = fmt.Errorf("init asks for protocol %d; this helper speaks %d and %d", init.Protocol, Version, VersionEvents)
			}
			var version string
			if err == nil {
				version, err = ModuleVersion(module)
			}
			var built *Adapter
			if err == nil {
				built, err = start(&init)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "adapter: init: %v\n", err)
				write(out, Fail("init: "+err.Error()).line(init.ID))
				os.Exit(2)
			}
			adapter = built
			ops := []string{"acquire", "release"}
			if adapter.Renew != nil {
				ops = append(ops, "renew")
			}
			hello := map[string]any{
				"type":     "hello",
				"id":       init.ID,
				"protocol": Version,
				"adapter":  adapter.Name,
				"library":  module,
				"version":  version,
				"ops":      ops,
			}
			newest := init.NewestProtocol
			if newest == 0 {
				newest = init.Protocol
			}
			on := len(adapter.Events) > 0 && newest >= VersionEvents
			if len(adapter.Events) > 0 && !on {
				fmt.Fprintf(os.Stderr, "adapter: lockpick speaks protocol %d at most: no events sent\n", newest)
			}
			if on {
				hello["protocol"] = VersionEvents
				hello["events"] = adapter.Events
			}
			writing.Lock()
			writeLocked(out, hello)
			helloSent = true
			eventsOn = on
			if on {
				for _, line := range early {
					writeLocked(out, line)
				}
			}
			early = nil
			writing.Unlock()
			continue
		}
		var request Request
		if err := json.Unmarshal(line, &request); err != nil {
			fatalf("request is not JSON (%v): %s", err, line)
		}
		var op Op
		switch request.Type {
		case "acquire":
			op = adapter.Acquire
		case "release":
			op = adapter.Release
		case "renew":
			op = adapter.Renew
		}
		if op == nil {
			fatalf("unexpected request %s", strings.TrimSpace(string(line)))
		}
		write(out, call(op, request).line(request.ID))
	}
}

// Seconds is d in whole seconds, rounded up (etcd leases and some libraries' TTLs are whole
// seconds); at least 1.
func Seconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}
