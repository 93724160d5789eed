// Command benchtable turns `go test -bench` output of the internal/bench
// benchmarks (a raw results file of `make bench`, or stdin) into Markdown
// tables and SVG plots.
//
// By default it prints the table of all figures (per benchmark and figure:
// both sides' medians over the pairs, the median and range of the per-pair
// ratios kinformer / client-go, the reading, the target and whether it is
// met, the floor) and the scaling tables (Sync by pods, Events by
// handlers). With -machine it first prints the machine; with -tee it copies
// its input to stderr as it reads it. With -relist it prints instead the
// tables of BenchmarkRelistModes.
//
// It fails (exit status 1, with the reasons on stderr) when the input holds
// no benchmark result, reports a failure (a "--- FAIL", "FAIL", "panic:" or
// "fatal error:" line, or a benchmark line that says FAIL), or has a figure
// missing from a result line of its benchmark; with -full also when a
// benchmark or figure of the protocol (bench.ProtocolBenchmarks) is missing.
//
// With -out DIR it also writes DIR/tables.md (the report: the run's header,
// the commands, the tables and the plots) and one SVG plot per scaling
// figure into DIR. With -update FILE it replaces the lines between
// "<!-- bench:begin -->" and "<!-- bench:end -->" in FILE with the same
// report, its links relative to FILE; it fails, before writing anything,
// when the markers are missing. -out and -update need exactly one input
// file, whose "# commit:" header line names the commit.
//
// With -aa FILE it judges the readings and targets against the A/A
// controls of FILE (the raw output of `make bench-aa`, in which both sides
// of every scenario run kinformer): a row reads kinformer better or worse
// only when its median ratio lies beyond the spread its scenario's control
// shows for the figure, and only with at least 10 pairs on the run and on
// the control (bench.Results.Rows); without -aa, only the input's own A/A
// control rows (named "aa=<engine>") count, and the other rows read "not
// judged". The report of -out and -update links FILE. FILE is refused as
// the input is (a failure, an unpaired figure).
//
// With -header it prints the header lines a raw results file starts with
// (commit, start time, machine, load average, sizes, command) and reads no
// input.
//
// Usage:
//
//	go run ./internal/bench/cmd/benchtable -header -commit <commit> -sizes full -command 'make bench' > internal/bench/results/bench-<commit>.txt
//	go run ./internal/bench/cmd/benchtable -full -aa internal/bench/results/bench-aa-<commit>.txt -out internal/bench/results/bench-<commit> -update BENCHMARKS.md internal/bench/results/bench-<commit>.txt
//	go test -run '^$' -bench Events -benchtime 1x -count 3 ./internal/bench | go run ./internal/bench/cmd/benchtable -tee -machine
//	go run ./internal/bench/cmd/benchtable -relist -machine internal/bench/results/relist-<commit>.txt
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kinformer/kinformer/internal/bench"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// run is the command with its arguments (flags first) and streams.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	machine := fs.Bool("machine", false, "print the machine (CPUs, CPU model, Go version, load) before the table")
	tee := fs.Bool("tee", false, "copy the input to stderr while reading it")
	relist := fs.Bool("relist", false, "print the tables of BenchmarkRelistModes instead")
	full := fs.Bool("full", false, "fail when a benchmark or figure of the protocol is missing (a full `make bench` run)")
	outDir := fs.String("out", "", "write tables.md and the SVG plots into this folder")
	update := fs.String("update", "", "replace the block between the bench:begin and bench:end marker lines of this Markdown file")
	header := fs.Bool("header", false, "print the header lines of a raw results file and read no input")
	aaFile := fs.String("aa", "", "judge readings and targets against the A/A controls of this raw results file (make bench-aa)")
	commit := fs.String("commit", "", "with -header: the commit measured")
	sizes := fs.String("sizes", "", "with -header: full or reduced")
	command := fs.String("command", "", "with -header: the command that makes the run")
	if err := fs.Parse(args); err != nil {
		return err
	}

	if *header {
		if *commit == "" {
			return errors.New("-header needs -commit")
		}
		_, err := io.WriteString(stdout, headerLines(*commit, *sizes, *command, time.Now()))
		return err
	}

	var in io.Reader = stdin
	if fs.NArg() > 0 {
		var readers []io.Reader
		for _, name := range fs.Args() {
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			readers = append(readers, f)
		}
		in = io.MultiReader(readers...)
	}
	if (*outDir != "" || *update != "") && fs.NArg() != 1 {
		return errors.New("-out and -update need exactly one raw results file as argument")
	}
	if *update != "" && *outDir == "" {
		return errors.New("-update needs -out, the folder of the plots it links")
	}
	if *tee {
		in = io.TeeReader(in, stderr)
	}
	res, err := bench.ParseBench(in)
	if err != nil {
		return err
	}
	if err := res.Check(*full); err != nil {
		return err
	}
	if *aaFile != "" {
		f, err := os.Open(*aaFile)
		if err != nil {
			return err
		}
		aa, err := bench.ParseBench(f)
		f.Close()
		if err != nil {
			return err
		}
		if err := aa.Check(false); err != nil {
			return fmt.Errorf("the A/A controls %s: %w", *aaFile, err)
		}
		res.AA = aa
	}

	// Everything that can fail is done before anything is written.
	var doc, block string
	if *update != "" {
		b, err := os.ReadFile(*update)
		if err != nil {
			return err
		}
		report, err := report(res, fs.Arg(0), *aaFile, filepath.Dir(*update), *outDir)
		if err != nil {
			return err
		}
		if doc, err = bench.ReplaceBlock(string(b), report); err != nil {
			return fmt.Errorf("%s: %w", *update, err)
		}
	}
	if *outDir != "" {
		if block, err = report(res, fs.Arg(0), *aaFile, *outDir, *outDir); err != nil {
			return err
		}
	}

	var tables bytes.Buffer
	if *machine {
		tables.WriteString(machineLine())
	}
	if *relist {
		if err := bench.WriteRelistTables(&tables, res); err != nil {
			return err
		}
	} else {
		if err := bench.WriteTable(&tables, res.Rows()); err != nil {
			return err
		}
		if series := res.Scaling(); len(series) > 0 {
			tables.WriteString("\n")
			if err := bench.WriteScalingTables(&tables, series); err != nil {
				return err
			}
		}
	}
	if _, err := stdout.Write(tables.Bytes()); err != nil {
		return err
	}

	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*outDir, "tables.md"), []byte(block), 0o644); err != nil {
			return err
		}
		for _, s := range res.Scaling() {
			var svg bytes.Buffer
			if err := bench.WritePlot(&svg, s, res.Header[bench.HeaderCommit]); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(*outDir, bench.PlotFileName(s)), svg.Bytes(), 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(stderr, "benchtable: wrote %s\n", *outDir)
	}
	if *update != "" {
		if err := os.WriteFile(*update, []byte(doc), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "benchtable: updated the generated block of %s\n", *update)
	}
	return nil
}

// report renders the report of res for a Markdown file in folder from:
// its links to the raw file, to the A/A controls' raw file aaRaw (empty
// for none) and to the plots in assets are relative to from.
func report(res *bench.Results, raw, aaRaw, from, assets string) (string, error) {
	rawLink, err := relative(from, raw)
	if err != nil {
		return "", err
	}
	aaLink := ""
	if aaRaw != "" {
		if aaLink, err = relative(from, aaRaw); err != nil {
			return "", err
		}
	}
	assetsLink := ""
	if assets != "" {
		if assetsLink, err = relative(from, assets); err != nil {
			return "", err
		}
	}
	if assetsLink == "." {
		assetsLink = ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- generated by internal/bench/cmd/benchtable from %s: rerun `make bench` rather than edit it -->\n\n", rawLink)
	if err := bench.WriteReport(&b, res, bench.ReportOptions{Raw: rawLink, Assets: assetsLink, AARaw: aaLink}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// relative returns target relative to the folder from, with slashes.
func relative(from, target string) (string, error) {
	absFrom, err := filepath.Abs(from)
	if err != nil {
		return "", err
	}
	absTarget, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absFrom, absTarget)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// headerLines returns the header of a raw results file started at now.
func headerLines(commit, sizes, command string, now time.Time) string {
	var b strings.Builder
	line := func(key, value string) {
		if value != "" {
			fmt.Fprintf(&b, "# %s: %s\n", key, value)
		}
	}
	line(bench.HeaderCommit, commit)
	line(bench.HeaderStarted, now.UTC().Format("2006-01-02 15:04:05 UTC"))
	line(bench.HeaderMachine, machineDescription())
	line(bench.HeaderLoadStart, loadAverage())
	line(bench.HeaderSizes, sizes)
	line(bench.HeaderCommand, command)
	return b.String()
}

// machineDescription describes the machine: CPU count, CPU model and Go
// version.
func machineDescription() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			if k, v, ok := strings.Cut(string(line), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs, %s, %s %s/%s", runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			return strings.Join(f[:3], " ")
		}
	}
	return "unknown"
}

// machineLine is what -machine prints: the machine and the load average
// now, at the end of the run.
func machineLine() string {
	return fmt.Sprintf("Machine: %s, load average (1/5/15 min) at the end: %s\n\n", machineDescription(), loadAverage())
}
