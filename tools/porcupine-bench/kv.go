// The kv histories (one EDN map per line) as Porcupine's own test suite reads them, with its kv
// model: a key's state is its string, partitioned per key, states hashed with FNV-1a.

package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

type kvKind uint8

const (
	kvGet kvKind = iota
	kvPut
	kvAppend
)

type kvInput struct {
	kind  kvKind
	key   string
	value string
}

type kvOutput struct {
	value string // a get's result
}

var kvModel = porcupine.Model{
	PartitionEvent: func(history []porcupine.Event) [][]porcupine.Event {
		byKey := map[string][]porcupine.Event{}
		keyOf := map[int]string{} // call id -> key, for the returns
		var keys []string
		for _, e := range history {
			key, called := keyOf[e.Id]
			if e.Kind == porcupine.CallEvent {
				key = e.Value.(kvInput).key
				keyOf[e.Id] = key
			} else if !called {
				panic("a return without a call")
			}
			if _, seen := byKey[key]; !seen {
				keys = append(keys, key)
			}
			byKey[key] = append(byKey[key], e)
		}
		parts := make([][]porcupine.Event, len(keys))
		for i, k := range keys {
			parts[i] = byKey[k]
		}
		return parts
	},
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st := state.(string)
		in := input.(kvInput)
		switch in.kind {
		case kvGet:
			return output.(kvOutput).value == st, st
		case kvPut:
			return true, in.value
		default:
			return true, st + in.value
		}
	},
	Hash: func(state interface{}) uint64 {
		h := fnv.New64a()
		h.Write([]byte(state.(string)))
		return h.Sum64()
	},
}

// ednFields reads one flat EDN map of keyword keys, `{:a 1, :b "x", :c :k}`, into its fields
// as text (strings unquoted, keywords with their colon). The kv files hold no escapes inside strings.
func ednFields(line string) (map[string]string, error) {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, fmt.Errorf("not a map")
	}
	s = s[1 : len(s)-1]
	fields := map[string]string{}
	for s = strings.TrimLeft(s, " ,"); s != ""; s = strings.TrimLeft(s, " ,") {
		name, rest, ok := strings.Cut(s, " ")
		if !ok || !strings.HasPrefix(name, ":") {
			return nil, fmt.Errorf("expected a keyword at %q", s)
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated string at %q", rest)
			}
			value, s = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexAny(rest, ", ")
			if end < 0 {
				end = len(rest)
			}
			value, s = rest[:end], rest[end:]
		}
		fields[name[1:]] = value
	}
	return fields, nil
}

func readKv(path string) ([]porcupine.Event, error) {
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
		if strings.TrimSpace(lines.Text()) == "" {
			continue
		}
		m, err := ednFields(lines.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		proc, err := strconv.Atoi(m["process"])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: process: %v", path, n, err)
		}
		switch m["type"] {
		case ":invoke":
			in := kvInput{key: m["key"], value: m["value"]}
			switch m["f"] {
			case ":get":
				in.kind = kvGet
			case ":put":
				in.kind = kvPut
			case ":append":
				in.kind = kvAppend
			default:
				return nil, fmt.Errorf("%s:%d: unknown operation %s", path, n, m["f"])
			}
			events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.CallEvent, Value: in, Id: next})
			pending[proc] = next
			next++
		case ":ok":
			id, open := pending[proc]
			if !open {
				return nil, fmt.Errorf("%s:%d: a return without a call", path, n)
			}
			delete(pending, proc)
			var out kvOutput
			if m["f"] == ":get" {
				out.value = m["value"]
			}
			events = append(events, porcupine.Event{ClientId: proc, Kind: porcupine.ReturnEvent, Value: out, Id: id})
		default:
			return nil, fmt.Errorf("%s:%d: unexpected type %s", path, n, m["type"])
		}
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	return closeOpen(events, pending, kvOutput{}), nil
}
