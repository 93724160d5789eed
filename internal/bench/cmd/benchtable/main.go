// Command benchtable reads `go test -bench` output of the internal/bench
// benchmarks (from stdin or the files named as arguments) and prints one
// Markdown table: for every scenario and figure, the medians of all runs for
// kinformer, client-go and the floor, the ratio kinformer / client-go, the
// issue's target and whether it is met, and kinformer as a multiple of the
// floor. With -machine it first prints the machine the figures came from.
// With -tee it copies its input to stderr as it reads it. With -relist it
// prints instead the tables of BenchmarkRelistModes (list mode × fraction
// changed: both sides' medians over the pairs, the median and range of the
// per-pair ratios, the target).
//
// Usage:
//
//	go test -run '^$' -bench . -benchtime 1x -count 3 ./internal/bench | go run ./internal/bench/cmd/benchtable -tee -machine
//	go run ./internal/bench/cmd/benchtable -relist -machine internal/bench/results/relist-<commit>.txt
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/kinformer/kinformer/internal/bench"
)

func main() {
	machine := flag.Bool("machine", false, "print the machine (CPUs, CPU model, Go version, load) before the table")
	tee := flag.Bool("tee", false, "copy the input to stderr while reading it")
	relist := flag.Bool("relist", false, "print the tables of BenchmarkRelistModes instead")
	flag.Parse()

	var in io.Reader = os.Stdin
	if flag.NArg() > 0 {
		var readers []io.Reader
		for _, name := range flag.Args() {
			f, err := os.Open(name)
			if err != nil {
				fmt.Fprintln(os.Stderr, "benchtable:", err)
				os.Exit(1)
			}
			defer f.Close()
			readers = append(readers, f)
		}
		in = io.MultiReader(readers...)
	}
	if *tee {
		in = io.TeeReader(in, os.Stderr)
	}
	res, err := bench.ParseBench(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(res.Names) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark results in the input")
		os.Exit(1)
	}
	if *machine {
		fmt.Print(machineInfo())
	}
	write := func() error { return bench.WriteTable(os.Stdout, res.Rows()) }
	if *relist {
		write = func() error { return bench.WriteRelistTables(os.Stdout, res) }
	}
	if err := write(); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// machineInfo describes the machine: CPU count, CPU model, Go version and
// the load average at the end of the run.
func machineInfo() string {
	model := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			if k, v, ok := strings.Cut(string(line), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	return fmt.Sprintf("CPUs: %d, CPU: %s, Go: %s %s/%s, load average (1/5/15 min) at the end: %s\n\n",
		runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
}
