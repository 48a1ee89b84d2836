// Command porcupine-bench times Porcupine (github.com/anishathalye/porcupine, at the version
// go.mod pins) on the histories of ../shared/data/porcupine, so that lockpick's lin_porcupine
// bench can print both checkers' times side by side from one run on one machine.
//
// Usage: porcupine-bench -dir <data/porcupine> [-runs N] [filter]
//
// For every file of expected.tsv whose name contains the filter, it checks the history -runs
// times with porcupine.CheckEvents, the call that decides the verdict alone (CheckEventsVerbose
// would also compute partial linearizations for the visualizer, and keeps checking every
// partition after one is found illegal), and prints one tab-separated line:
//
//	file  verdict  median-ns  runs
//
// Parsing the file is not timed; partitioning and the search are, as lockpick's decide time
// covers its split into parts and its search. Lines starting with # describe the run
// (Porcupine's version, GOMAXPROCS). A verdict other than expected.tsv's exits with status 1.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// A history ready to check: Porcupine's model for it and its events.
type history struct {
	model  porcupine.Model
	events []porcupine.Event
}

func load(dir, file, model string) (history, error) {
	path := filepath.Join(dir, file)
	switch model {
	case "cas-register":
		events, err := readEtcd(path)
		return history{etcdModel, events}, err
	case "kv":
		events, err := readKv(path)
		return history{kvModel, events}, err
	}
	return history{}, fmt.Errorf("%s: no Porcupine model for %q", file, model)
}

func porcupineVersion() string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/anishathalye/porcupine" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	dir := flag.String("dir", "", "the data/porcupine folder (holds expected.tsv)")
	runs := flag.Int("runs", 5, "checks per file; the median is printed")
	flag.Parse()
	filter := flag.Arg(0)
	if *dir == "" || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	tsv, err := os.Open(filepath.Join(*dir, "expected.tsv"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer tsv.Close()
	fmt.Printf("# porcupine %s, %s, GOMAXPROCS=%d, CheckEvents, median of %d\n",
		porcupineVersion(), runtime.Version(), runtime.GOMAXPROCS(0), *runs)
	lines := bufio.NewScanner(tsv)
	lines.Scan() // the header
	wrong := 0
	for lines.Scan() {
		cols := strings.Split(lines.Text(), "\t")
		if len(cols) < 3 || !strings.Contains(cols[0], filter) {
			continue
		}
		h, err := load(*dir, cols[0], cols[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		want := cols[2] == "linearizable"
		times := make([]time.Duration, *runs)
		for r := range times {
			start := time.Now()
			ok := porcupine.CheckEvents(h.model, h.events)
			times[r] = time.Since(start)
			if ok != want {
				fmt.Fprintf(os.Stderr, "%s: Porcupine says linearizable=%v, expected.tsv says %s\n", cols[0], ok, cols[2])
				wrong++
				break
			}
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		verdict := "illegal"
		if want {
			verdict = "linearizable"
		}
		fmt.Printf("%s\t%s\t%d\t%d\n", cols[0], verdict, times[len(times)/2].Nanoseconds(), *runs)
	}
	if err := lines.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if wrong > 0 {
		os.Exit(1)
	}
}
