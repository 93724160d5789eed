package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

// The child-process harness. A benchmark whose figures include a heap runs
// every side in a process of its own, so that one side's garbage and
// caches never count against the other, and what the parent holds (a
// server's encoded pods, the other side's informer) counts against
// neither:
//
//   - the parent (the benchmark) starts the test binary again with
//     childEnv holding a JSON childSpec (scenario, side, sizes, the
//     server's URL and credentials);
//   - TestMain sees childEnv and calls runChildProcess instead of the
//     tests: it runs the spec's scenario for the spec's side (childJob)
//     and prints at most one line "ready" (when the scenario asks the
//     parent to act, see childJob) and then exactly one line "result
//     <JSON>" on stdout, and exits 0; on failure it writes why on stderr
//     and exits non-zero;
//   - the parent reads the lines (calling its onReady on "ready"), checks
//     the exit status and, on failure, reports the last 64 KiB of the
//     child's stderr.
//
// Profiling: -test.cpuprofile and the like profile the parent only. With
// profileDirEnv set, every child writes a CPU profile and a heap profile
// (at the end of its job) of its side into that directory, named
// <scenario>-<side>-<pid>.cpu.pprof and .heap.pprof; KINFORMER_BENCH_SIDES
// restricts the sides that run (sideOrder).

const (
	// childEnv holds the JSON childSpec of a child process.
	childEnv = "KINFORMER_BENCH_CHILD"
	// profileDirEnv names a directory where every child writes profiles
	// of its side (see above).
	profileDirEnv = "KINFORMER_BENCH_PROFILE_DIR"
	// childTimeout bounds every wait of a child, and the parent's wait on
	// it (twice that).
	childTimeout = 5 * time.Minute
)

// Scenarios a child runs (childSpec.Scenario).
const (
	childSync         = "sync"          // syncChild
	childRelist       = "relist"        // relistChild
	childClientset    = "clientset"     // clientsetSyncChild (HTTP and API server)
	childLeanTyped    = "lean-typed"    // leanChild
	childLeanMetadata = "lean-metadata" // leanChild
	childRelistModes  = "relist-modes"  // relistModesChild
	childSharded      = "sharded"       // shardedChild
)

// childSpec tells a child process what to run.
type childSpec struct {
	Scenario string
	// Side is SideKinformer, SideClientGo or SideFloor.
	Side string
	Pods int
	// URL is the server's base URL, for the scenarios over a clientset;
	// BearerToken and CAFile authenticate to it (the real API server),
	// ContentType is the clientset's content type ("" for its default).
	URL, BearerToken, CAFile, ContentType string
	// Pagewise builds kinformer's informer with RelistPageByPage (the
	// relist scenario's pagewise row).
	Pagewise bool
	// FloorStreams makes the clientset scenario's floor read the pods
	// with a streaming list (a WATCH with sendInitialEvents), as both
	// informers do against a server that offers it (the real API server),
	// instead of one LIST.
	FloorStreams bool
	// Projection builds the projection rows' sides (BenchmarkProjection,
	// BenchmarkAPIServer's projection row): kinformer with
	// BenchProjection, client-go with the transform Baseline names
	// (baselineSameFields when empty, or baselineManagedFieldsOnly);
	// Dynamic, their dynamic factories' informers (JSON).
	Projection, Dynamic bool
	Baseline            string
	// APIMachineryDecoding builds kinformer's informer with apimachinery's
	// decoder (the typed factory's WithAPIMachineryDecoding; the dynamic
	// factory without WithRESTConfig): the rows with kinformer's decoders
	// off. Without it, a Dynamic row's kinformer side decodes with
	// kinformer's unstructured decoder (WithRESTConfig).
	APIMachineryDecoding bool
	// BaseRV is the resourceVersion of the pod set before a relist;
	// Changed pods have a newer one after it (relist modes).
	BaseRV, Changed int
	// Group names the sharding group of the sharded scenario's op, whose
	// replica Replica of Replicas the child is.
	Group             string
	Replica, Replicas int
}

// childFigures are the figures one side reports, by name without the side
// prefix ("sync-ms", ...).
type childFigures map[string]float64

// childJob runs one side of one scenario in the child process. It calls
// ready (at most once) when the parent must act before the job can go on
// (relist modes: expire the server's versions); the parent's onReady has
// then run or is running. It returns what the child prints as its result.
type childJob func(s childSpec, ready func() error) (any, error)

// childJobFor returns the job of scenario.
func childJobFor(scenario string) (childJob, error) {
	switch scenario {
	case childSync:
		return syncChild, nil
	case childRelist:
		return relistChild, nil
	case childClientset:
		return clientsetSyncChild, nil
	case childLeanTyped, childLeanMetadata:
		return leanChild, nil
	case childRelistModes:
		return relistModesChild, nil
	case childSharded:
		return shardedChild, nil
	}
	return nil, fmt.Errorf("unknown scenario %q", scenario)
}

// runChildProcess is the child's main (called by TestMain when childEnv is
// set): it runs the job spec names and prints its result. It returns the
// exit code.
func runChildProcess(spec string) int {
	var s childSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "bench child: bad spec:", err)
		return 2
	}
	job, err := childJobFor(s.Scenario)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 2
	}
	readied := false
	ready := func() error {
		if readied {
			return errors.New("ready twice")
		}
		readied = true
		_, err := fmt.Fprintln(os.Stdout, "ready")
		return err
	}
	stopProfiles, err := startChildProfiles(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child: profiles:", err)
		return 1
	}
	res, err := job(s, ready)
	err = errors.Join(err, stopProfiles())
	if err == nil {
		var out []byte
		if out, err = json.Marshal(res); err == nil {
			_, err = fmt.Printf("result %s\n", out)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench child %s/%s: %v\n", s.Scenario, s.Side, err)
		return 1
	}
	return 0
}

// startChildProfiles starts the CPU profile of the child when
// profileDirEnv is set; the returned function stops it and writes the heap
// profile.
func startChildProfiles(s childSpec) (stop func() error, err error) {
	dir := os.Getenv(profileDirEnv)
	if dir == "" {
		return func() error { return nil }, nil
	}
	prefix := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", s.Scenario, s.Side, os.Getpid()))
	cpu, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		heap, err := os.Create(prefix + ".heap.pprof")
		if err == nil {
			err = errors.Join(pprof.Lookup("heap").WriteTo(heap, 0), heap.Close())
		}
		return errors.Join(cpu.Close(), err)
	}, nil
}

// runChild runs spec in a child process with env added to the parent's
// environment, calls onReady (may be nil) when the child prints "ready",
// and decodes the child's result into result.
func runChild(spec childSpec, env []string, onReady func() error, result any) error {
	js, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+string(js)), env...)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	protoErr := readChild(bufio.NewScanner(stdout), onReady, result)
	if protoErr != nil {
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	if err := errors.Join(protoErr, waitErr); err != nil {
		return fmt.Errorf("child %s/%s: %w; its stderr ends with:\n%s", spec.Scenario, spec.Side, err, stderr.String())
	}
	return nil
}

// readChild reads the child's lines: "ready" (once, before the result)
// calls onReady, "result <JSON>" is decoded into result and ends the
// conversation.
func readChild(lines *bufio.Scanner, onReady func() error, result any) error {
	ready := false
	for lines.Scan() {
		line := lines.Text()
		switch {
		case line == "ready" && !ready:
			ready = true
			if onReady != nil {
				if err := onReady(); err != nil {
					return err
				}
			}
		case strings.HasPrefix(line, "result "):
			return json.Unmarshal([]byte(strings.TrimPrefix(line, "result ")), result)
		default:
			return fmt.Errorf("unexpected line %q from the child", line)
		}
	}
	if err := lines.Err(); err != nil {
		return err
	}
	return errors.New("the child ended without a result")
}

// runPairInChildren runs one op of a heap scenario: spec once per side of
// sides (as ordered by sideOrder), each in its own child process, adding
// each side's figures to samples.
func runPairInChildren(b *testing.B, spec childSpec, sides []string, samples figureSamples) {
	b.Helper()
	for _, side := range sideOrder(sides...) {
		spec.Side = side
		var figs childFigures
		if err := runChild(spec, nil, nil, &figs); err != nil {
			b.Fatal(err)
		}
		for name, v := range figs {
			samples.add(side, name, v)
		}
	}
}

// tailBuffer keeps the last 64 KiB written to it. Safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 64<<10; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// waitClosed waits until ch is closed, for at most childTimeout.
func waitClosed(ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-time.After(childTimeout):
		return fmt.Errorf("%s: timed out after %v", what, childTimeout)
	}
}

// TestChildFailureReportsStderr checks that a child that fails makes
// runChild fail with the end of the child's stderr.
func TestChildFailureReportsStderr(t *testing.T) {
	var figs childFigures
	err := runChild(childSpec{Scenario: "no-such-scenario", Side: SideKinformer}, nil, nil, &figs)
	if err == nil || !strings.Contains(err.Error(), `unknown scenario "no-such-scenario"`) {
		t.Fatalf("runChild: %v, want the child's complaint about the scenario", err)
	}
}
