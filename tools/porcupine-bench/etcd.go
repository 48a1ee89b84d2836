// The etcd Jepsen logs as Porcupine's own test suite reads them, with its etcd register model:
// a :fail :cas is a completed compare-and-set that did not swap, a read that failed with
// :timed-out returns an unknown result where it failed, and an operation with no ok or fail
// line (the :info ones) returns an unknown result after everything else.

package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

type etcdKind uint8

const (
	etcdRead etcdKind = iota
	etcdWrite
	etcdCas
)

type etcdInput struct {
	kind     etcdKind
	from, to int // a write's value is from
}

type etcdOutput struct {
	swapped bool // a cas
	isNil   bool // a read of the never written register
	value   int  // a read
	unknown bool
}

// The register's state is an int; this one stands for nil, as in Porcupine's test suite.
const etcdNil = -1000000

var etcdModel = porcupine.Model{
	Init: func() interface{} { return etcdNil },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st := state.(int)
		in := input.(etcdInput)
		out := output.(etcdOutput)
		switch in.kind {
		case etcdRead:
			fits := out.unknown || (out.isNil && st == etcdNil) || (!out.isNil && st == out.value)
			return fits, st
		case etcdWrite:
			return true, in.from
		default:
			if st != in.from {
				return out.unknown || !out.swapped, st
			}
			return out.unknown || out.swapped, in.to
		}
	},
}

// readEtcd reads lines `INFO jepsen.util - <process> :<type> :<f> <value>`.
func readEtcd(path string) ([]porcupine.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []porcupine.Event
	pending := map[int]int{} // process -> id of its open call
	next := 0
	lines := bufio.NewScanner(f)
	for n := 1; lines.Scan(); n++ {
		_, rest, found := strings.Cut(lines.Text(), "jepsen.util - ")
		if !found {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) < 4 {
			return nil, fmt.Errorf("%s:%d: too few fields", path, n)
		}
		proc, err := strconv.Atoi(fields[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: process: %v", path, n, err)
		}
		typ, op, value := fields[1], fields[2], strings.Join(fields[3:], " ")
		if typ == ":invoke" {
			var in etcdInput
			switch op {
			case ":read":
				in.kind = etcdRead
			case ":write":
				in.kind = etcdWrite
				in.from, err = strconv.Atoi(value)
			case ":cas":
				in.kind = etcdCas
				_, err = fmt.Sscanf(value, "[%d %d]", &in.from, &in.to)
			default:
				err = fmt.Errorf("unknown operation %s", op)
			}
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
			events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.CallEvent, Value: in, Id: next})
			pending[proc] = next
			next++
			continue
		}
		var out etcdOutput
		switch {
		case typ == ":ok" && op == ":read":
			if value == "nil" {
				out.isNil = true
			} else if out.value, err = strconv.Atoi(value); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
		case typ == ":ok" && op == ":write":
		case (typ == ":ok" || typ == ":fail") && op == ":cas":
			out.swapped = typ == ":ok"
		case typ == ":fail" && op == ":read":
			out.unknown = true
		default:
			continue // :info: the call stays open to the end
		}
		id, open := pending[proc]
		if !open {
			return nil, fmt.Errorf("%s:%d: a return without a call", path, n)
		}
		delete(pending, proc)
		events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: out, Id: id})
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	return closeOpen(events, pending, etcdOutput{unknown: true}), nil
}

// closeOpen appends a return with `out` for every call still open, in call order.
func closeOpen(events []porcupine.Event, pending map[int]int, out interface{}) []porcupine.Event {
	ids := make(map[int]int, len(pending)) // id -> process
	for proc, id := range pending {
		ids[id] = proc
	}
	for _, e := range events {
		if proc, open := ids[e.Id]; open && e.Kind == porcupine.CallEvent {
			events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: out, Id: e.Id})
		}
	}
	return events
}
