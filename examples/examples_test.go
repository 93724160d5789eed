// Package examples_test builds every example program and runs each briefly on the embedded
// cluster, checking its output, so that `go test ./examples/...` fails when an example breaks.
//
// The runs that check events use --writes: the workload generator makes a fixed number of
// writes, each once the program has caught up with the one before, and the program exits once
// it has caught up with the last. What they print then depends only on the seed, the pod count
// and the number of writes, never on how fast a loaded machine runs them; the time limits
// below only stop a hung program.
package examples_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testenv"
)

// exBuild builds all example commands once per test binary into one directory.
var exBuild struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

// exBinary returns the path of the built example name, building all of them on first use.
func exBinary(t *testing.T, name string) string {
	t.Helper()
	exBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "kinformer-examples-")
		if err != nil {
			exBuild.err = err
			return
		}
		exBuild.dir = dir
		gobin, err := exec.LookPath("go")
		if err != nil {
			exBuild.err = err
			return
		}
		cmd := exec.Command(gobin, "build", "-o", dir+string(filepath.Separator), "./...")
		exBuild.out, exBuild.err = cmd.CombinedOutput()
	})
	if exBuild.err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", exBuild.err, exBuild.out)
	}
	return filepath.Join(exBuild.dir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if exBuild.dir != "" {
		os.RemoveAll(exBuild.dir)
	}
	os.Exit(code)
}

// Time limits on an example's run: far longer than any run needs on a loaded machine, so they
// only ever catch a hang; no test relies on one to pass.
const (
	// hangGuard bounds a run on the embedded cluster (a second or two when idle).
	hangGuard = 3 * time.Minute
	// localHangGuard bounds a run with --local-apiserver, which may first wait for another
	// test binary to free the machine's test-cluster slot (internal/testenv) and then start
	// etcd and kube-apiserver (about 10 s when idle).
	localHangGuard = 6 * time.Minute
)

// exRun runs the example with args, with $KUBECONFIG cleared, and returns its stdout, stderr
// and exit code; it fails the test when the program does not exit within limit.
func exRun(t *testing.T, name string, limit time.Duration, args ...string) (string, string, int) {
	t.Helper()
	return exRunBinary(t, exBinary(t, name), limit, args...)
}

// exRunBinary is exRun for the program at bin.
func exRunBinary(t *testing.T, bin string, limit time.Duration, args ...string) (string, string, int) {
	t.Helper()
	name := filepath.Base(bin)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=", "KUBERNETES_SERVICE_HOST=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not exit within %s\nstdout:\n%s\nstderr:\n%s", name, args, limit, stdout.String(), stderr.String())
	}
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", name, err)
	}
	return stdout.String(), stderr.String(), code
}

// exCounts returns the numbers the regular expression re captures in s, failing the test
// when re does not match.
func exCounts(t *testing.T, s, re string) []int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("output does not match %q:\n%s", re, s)
	}
	n := make([]int, len(m)-1)
	for i, v := range m[1:] {
		var err error
		if n[i], err = strconv.Atoi(v); err != nil {
			t.Fatalf("%q in %q: %v", v, m[0], err)
		}
	}
	return n
}

func TestExamples(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
		stdout   []string                          // regular expressions, each must match somewhere in stdout
		stderr   []string                          // likewise for stderr
		check    func(t *testing.T, stdout string) // further checks of stdout, if set
	}{
		{
			// Seed 1 on 50 pods: the first of the 100 writes creates a pod, the second
			// modifies one and the eleventh deletes one.
			name: "podwatch",
			args: []string{"--seed", "1", "--pods", "50", "--writes", "100", "--rate", "200", "--summary-every", "1s"},
			stdout: []string{
				`(?m)^cluster: embedded`,
				`(?m)^synced 50 pods in `,
				`(?m)^EVENT +NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE +NODE$`,
				`(?m)^ +\S+ +\S+-\d{5} +\d/\d +\S+`,
				`(?m)^ADDED +\S+ +\S+-\d{5} +0/\d +Pending `,
				`(?m)^MODIFIED +\S+ +\S+-\d{5} +\d/\d `,
				`(?m)^DELETED +\S+ +\S+-\d{5} `,
				`(?m)^caught up: the cache and the event handler hold all 100 writes$`,
				`(?m)^--- summary: \d+ pods \| per node: .*node-\w=\d+.* \| per phase: .*Pending=\d+`,
				`(?m)^stopped after .*: [1-9]\d* added, [1-9]\d* modified, [1-9]\d* deleted$`,
			},
			check: func(t *testing.T, stdout string) {
				// On the embedded cluster every write is one event, and every event is printed.
				n := exCounts(t, stdout, `(?m)^stopped after .*: (\d+) added, (\d+) modified, (\d+) deleted$`)
				if sum := n[0] + n[1] + n[2]; sum != 100 {
					t.Errorf("%d events printed (%v), want one per write: 100\n%s", sum, n, stdout)
				}
			},
		},
		{
			name:     "podwatch",
			args:     []string{"--writes", "10", "--namespace", "shop"},
			wantCode: 2,
			stderr:   []string{`--writes excludes --namespace`},
		},
		{
			name:     "podwatch",
			args:     []string{"--rate", "-1"},
			wantCode: 2,
			stderr:   []string{`--rate must be in`, `usage: podwatch`},
		},
		{
			name:     "podwatch",
			args:     []string{"--no-such-flag"},
			wantCode: 2,
			stderr:   []string{`flag provided but not defined`},
		},
		{
			// Seed 7 on 30 pods: four of the initial pods are crash-looping, and the 22nd of
			// the 60 writes is the first to delete a pod for good.
			name: "workqueue",
			args: []string{"--seed", "7", "--pods", "30", "--writes", "60", "--rate", "200"},
			stdout: []string{
				`(?m)^caches synced: 30 keys queued from the initial list$`,
				`(?m)^synced  \S+/\S+-\d{5}: phase \w+ on `,
				`(?m)^retry   \S+ \(attempt 1\): pod \S+ is crash-looping$`,
				`(?m)^deleted \S+: cleaning up$`,
				`(?m)^settled: all 60 writes reconciled$`,
				`(?m)^shutting down: draining the queue$`,
				`(?m)^stopped: [1-9]\d* reconciled, [1-9]\d* seen deleted, [1-9]\d* retried, 0 dropped$`,
			},
			check: func(t *testing.T, stdout string) {
				// The controller settles between writes, so the state of every initial pod and
				// every write is reconciled (after any retries) or seen deleted, exactly once.
				n := exCounts(t, stdout, `(?m)^stopped: (\d+) reconciled, (\d+) seen deleted, \d+ retried, \d+ dropped$`)
				if sum := n[0] + n[1]; sum != 30+60 {
					t.Errorf("%d reconciled + %d seen deleted = %d, want one per initial pod and write: 90\n%s", n[0], n[1], sum, stdout)
				}
			},
		},
		{
			name:     "workqueue",
			args:     []string{"--workers", "0"},
			wantCode: 2,
			stderr:   []string{`--workers >= 1`},
		},
		{
			name: "migrate",
			stdout: []string{
				`(?m)^deployment default/web wants 2 replicas, has \[web-1 web-2\]$`,
				`(?m)^handler saw: \[add default/web-1 add default/web-2\]$`,
				`(?m)^handler saw: add default/web-3$`,
				`(?m)^handler saw: delete default/web-1$`,
				`(?m)^lister after delete: pod "web-1" not found$`,
			},
		},
		{
			name: "dynamic",
			args: []string{"--objects", "500"},
			stdout: []string{
				`(?m)^dynamic informer:  500 widgets cached as \*unstructured\.Unstructured; shop/widget-00001 has spec\.color=green$`,
				`(?m)^metadata informer: 500 widgets cached as \*v1\.PartialObjectMetadata; shop/widget-00001 has labels map\[app:fleet tier:back\]$`,
				`(?m)^live heap per cached widget: dynamic \d+ B, metadata-only \d+ B `,
			},
			check: func(t *testing.T, stdout string) {
				// Each cache costs heap, and the metadata-only one less per object than the
				// dynamic one (about 1.3 kB against 3 kB), which is the point of the example.
				// The numbers come from the heap after a forced GC, not from timing.
				n := exCounts(t, stdout, `(?m)^live heap per cached widget: dynamic (-?\d+) B, metadata-only (-?\d+) B `)
				if dynamic, metadata := n[0], n[1]; dynamic <= 0 || metadata <= 0 || metadata >= dynamic {
					t.Errorf("live heap per cached widget: dynamic %d B, metadata-only %d B; want both positive and metadata-only below dynamic\n%s", dynamic, metadata, stdout)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := exRun(t, tc.name, hangGuard, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("%s %v: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.name, tc.args, code, tc.wantCode, stdout, stderr)
			}
			for _, re := range tc.stdout {
				if !regexp.MustCompile(re).MatchString(stdout) {
					t.Errorf("%s %v: stdout does not match %q\nstdout:\n%s\nstderr:\n%s", tc.name, tc.args, re, stdout, stderr)
				}
			}
			for _, re := range tc.stderr {
				if !regexp.MustCompile(re).MatchString(stderr) {
					t.Errorf("%s %v: stderr does not match %q\nstderr:\n%s", tc.name, tc.args, re, stderr)
				}
			}
			if tc.check != nil {
				tc.check(t, stdout)
			}
		})
	}
}

// exKubeconfig writes a kubeconfig whose only cluster is at host and returns its path.
func exKubeconfig(t *testing.T, host string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := `apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: x, user: u}}]
clusters: [{name: x, cluster: {server: "` + host + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: ex-secret-token}}]
`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUnreachableCluster checks that a kubeconfig naming a server that refuses connections,
// or one that accepts them and never answers, gives a clear error naming the host, the probe
// timeout and the cause (the examples probe the server before starting informers, which
// would retry forever).
func TestUnreachableCluster(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedHost := "https://" + refused.Addr().String()
	refused.Close()

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	defer func() {
		silent.Close()
		conns.Wait()
	}()
	conns.Add(1)
	go func() {
		defer conns.Done()
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // accept and never answer
		}
	}()
	silentHost := "https://" + silent.Addr().String()

	// Each run must end by the probe's own verdict: the refused connection, or the probe's
	// timeout (the one --connect-timeout sets, 5s for workqueue) for the silent server. A
	// program that retried forever would instead run into hangGuard and fail.
	cases := []struct {
		name, host string
		args       []string
		timeout    string // the probe timeout the error must name
		cause      string // regular expression for why the probe gave up
	}{
		{"podwatch", refusedHost, []string{"--connect-timeout", "2s"}, "2s", `connection refused`},
		{"podwatch", silentHost, []string{"--connect-timeout", "2s"}, "2s", `context deadline exceeded|Client\.Timeout exceeded`},
		{"workqueue", silentHost, nil, "5s", `context deadline exceeded|Client\.Timeout exceeded`},
	}
	for _, tc := range cases {
		t.Run(tc.name+" "+tc.host, func(t *testing.T) {
			args := append([]string{"--kubeconfig", exKubeconfig(t, tc.host)}, tc.args...)
			stdout, stderr, code := exRun(t, tc.name, hangGuard, args...)
			if code != 1 {
				t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			want := "cannot reach the API server at " + tc.host + " within " + tc.timeout + ": "
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr)
			}
			if want := tc.host + "/version?timeout=" + tc.timeout; !strings.Contains(stderr, want) {
				t.Errorf("the probe request was not %q, with the probe's timeout:\n%s", want, stderr)
			}
			if !regexp.MustCompile(tc.cause).MatchString(stderr) {
				t.Errorf("stderr does not give the cause %q:\n%s", tc.cause, stderr)
			}
			if strings.Contains(stdout+stderr, "ex-secret-token") {
				t.Errorf("the bearer token appears in the output:\n%s\n%s", stdout, stderr)
			}
		})
	}
}

// TestPodwatchLocalAPIServer runs podwatch against the project's own etcd and kube-apiserver
// with the workload generator writing through the real API. It needs the server binaries (see
// internal/testenv); `make test` provides them.
//
// Seed 1 on 15 pods: the first of the 40 writes creates a pod, the second leaves one
// terminating (a graceful delete of a scheduled pod, which no kubelet confirms) and the tenth
// deletes one for good.
func TestPodwatchLocalAPIServer(t *testing.T) {
	needServerBinaries(t)
	stdout, stderr, code := exRun(t, "podwatch", localHangGuard,
		"--local-apiserver", "--seed", "1", "--pods", "15", "--writes", "40", "--rate", "20", "--summary-every", "2s")
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, re := range []string{
		`(?m)^cluster: local kube-apiserver at https://127\.0\.0\.1:\d+ \(15 pods, 20 writes/s through the API\)$`,
		`(?m)^synced 15 pods in `,
		`(?m)^ADDED +\S+ +\S+-\d{5} +0/\d +Pending `,
		`(?m)^MODIFIED +\S+ +\S+-\d{5} +\d/\d +(Running|Completed|Error|CrashLoopBackOff|ContainerCreating|Init:0/1|PodInitializing) `,
		`(?m)^MODIFIED +\S+ +\S+-\d{5} +\d/\d +Terminating `,
		`(?m)^DELETED +\S+ +\S+-\d{5} `,
		`(?m)^caught up: the cache and the event handler hold all 40 writes$`,
		`(?m)^--- summary: \d+ pods \| per node: .*node-\w=\d+`,
		`(?m)^stopped after .*: [1-9]\d* added, [1-9]\d* modified, [1-9]\d* deleted$`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("stdout does not match %q\nstdout:\n%s\nstderr:\n%s", re, stdout, stderr)
		}
	}
}

// needServerBinaries skips the test when the server binaries of internal/testenv are not
// there, and fails it instead when $KINFORMER_REQUIRE_INTEGRATION=1 forbids skipping.
func needServerBinaries(t *testing.T) {
	t.Helper()
	if testenv.BinDir() == "" {
		if os.Getenv(testenv.RequireEnv) == "1" {
			t.Fatalf("%s does not name the server binaries and %s=1 forbids skipping", testenv.BinDirEnv, testenv.RequireEnv)
		}
		t.Skipf("needs the server binaries: run `make test`, or set %s to the folder internal/testenv/build.sh prints", testenv.BinDirEnv)
	}
}

// TestShardedLocalAPIServer runs the sharded example on a local kube-apiserver with the
// ShardedListAndWatch gate: after each change of the group (start, join, clean leave,
// crash) it prints the ranges each live replica owns and the pods its cache holds, which
// together are every pod, with no replica reporting the server ignoring its selector.
func TestShardedLocalAPIServer(t *testing.T) {
	needServerBinaries(t)
	const pods = 60
	stdout, stderr, code := exRun(t, "sharded", localHangGuard, "--pods", strconv.Itoa(pods), "--replicas", "3")
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, re := range []string{
		`(?m)^cluster: local kube-apiserver at https://127\.0\.0\.1:\d+, 60 pods in sharded-demo; group "pod-controller" of 16 ranges by object\.metadata\.uid, lease 3s$`,
		`(?m)^  replica-\d: range \d+ acquired$`,
		`(?m)^  replica-\d: range \d+ synced$`,
		`(?m)^  replica-\d: range \d+ dropped from the cache$`,
		`(?m)^replica-1: crashing$`,
		`(?m)^handoff after the crash: \S+ \(the Leases expire 3s after their last renewal\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("stdout does not match %q\nstdout:\n%s\nstderr:\n%s", re, stdout, stderr)
		}
	}
	if strings.Contains(stdout, "degraded") {
		t.Errorf("a replica found the server ignoring its shard selector:\n%s", stdout)
	}
	// Each steady state: its header, then one line per live replica.
	steps := regexp.MustCompile(`(?m)^--- (.+): steady after \S+, (\d) replicas\n((?:replica-\d +owns ranges .*\n)+)`).FindAllStringSubmatch(stdout, -1)
	want := []struct {
		what     string
		replicas int
	}{{"started", 3}, {"replica-3 joined", 4}, {"replica-0 left", 3}, {"replica-1 crashed", 2}}
	if len(steps) != len(want) {
		t.Fatalf("%d steady states printed, want %d:\n%s", len(steps), len(want), stdout)
	}
	owns := regexp.MustCompile(`(?m)^replica-\d +owns ranges (\S*) +caches (\d+) pods$`)
	for i, step := range steps {
		lines := owns.FindAllStringSubmatch(step[3], -1)
		if step[1] != want[i].what || len(lines) != want[i].replicas {
			t.Errorf("steady state %d is %q with %d replicas, want %q with %d", i, step[1], len(lines), want[i].what, want[i].replicas)
		}
		total, ranges := 0, 0
		for _, l := range lines {
			n, _ := strconv.Atoi(l[2])
			total += n
			if l[1] != "" {
				ranges += len(strings.Split(l[1], ","))
			}
		}
		if total != pods || ranges != 16 {
			t.Errorf("steady state %q: the replicas own %d ranges and cache %d pods, want 16 and %d", step[1], ranges, total, pods)
		}
	}
}

// TestGracefulShutdown sends SIGTERM and SIGINT to the long-running examples once they print
// their first live line, and checks that each drains, prints its closing line and exits 0.
func TestGracefulShutdown(t *testing.T) {
	cases := []struct {
		name  string
		sig   os.Signal
		ready string // stdout line prefix printed once the example is live
		final string // regular expression for the closing line
	}{
		{"podwatch", syscall.SIGTERM, "synced ", `(?m)^stopped after .*: \d+ added, \d+ modified, \d+ deleted$`},
		{"podwatch", os.Interrupt, "synced ", `(?m)^stopped after .*: \d+ added, \d+ modified, \d+ deleted$`},
		{"workqueue", syscall.SIGTERM, "caches synced", `(?m)^stopped: \d+ reconciled, \d+ seen deleted, \d+ retried, \d+ dropped$`},
	}
	for _, tc := range cases {
		t.Run(tc.name+" "+tc.sig.String(), func(t *testing.T) {
			bin := exBinary(t, tc.name)
			cmd := exec.Command(bin, "--rate", "50")
			cmd.Env = append(os.Environ(), "KUBECONFIG=", "KUBERNETES_SERVICE_HOST=")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			pipe, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killed := time.AfterFunc(hangGuard, func() { _ = cmd.Process.Kill() })
			defer killed.Stop()
			var out strings.Builder
			sent := false
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				line := sc.Text()
				out.WriteString(line + "\n")
				if !sent && strings.HasPrefix(line, tc.ready) {
					if err := cmd.Process.Signal(tc.sig); err != nil {
						t.Fatal(err)
					}
					sent = true
				}
			}
			err = cmd.Wait()
			if !sent {
				t.Fatalf("never saw a line starting %q\nstdout:\n%s\nstderr:\n%s", tc.ready, out.String(), stderr.String())
			}
			if err != nil {
				t.Fatalf("exit after %v: %v\nstdout:\n%s\nstderr:\n%s", tc.sig, err, out.String(), stderr.String())
			}
			if !regexp.MustCompile(tc.final).MatchString(out.String()) {
				t.Errorf("no closing line matching %q\nstdout:\n%s", tc.final, out.String())
			}
		})
	}
}

// TestCtrlruntimeLocalAPIServer builds examples/ctrlruntime, a controller-runtime program in a
// Go module of its own (so that kinformer's main module never requires controller-runtime,
// and `go build ./...` above does not reach it), and runs it against the project's own etcd
// and kube-apiserver: its manager runs on kinformer's informers, reconciles the pod it
// creates, sees it deleted and exits. It needs the server binaries, as
// TestPodwatchLocalAPIServer does.
func TestCtrlruntimeLocalAPIServer(t *testing.T) {
	if testenv.BinDir() == "" {
		if os.Getenv(testenv.RequireEnv) == "1" {
			t.Fatalf("%s does not name the server binaries and %s=1 forbids skipping", testenv.BinDirEnv, testenv.RequireEnv)
		}
		t.Skipf("needs the server binaries: run `make test`, or set %s to the folder internal/testenv/build.sh prints", testenv.BinDirEnv)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "ctrlruntime")
	build := exec.Command(gobin, "build", "-o", bin, ".")
	build.Dir = "ctrlruntime"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in examples/ctrlruntime: %v\n%s", err, out)
	}
	stdout, stderr, code := exRunBinary(t, bin, localHangGuard, "--local-apiserver")
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	pod := `kinformer-ctrlruntime-example-\w+/demo`
	for _, re := range []string{
		`(?m)^cluster: local kube-apiserver at https://127\.0\.0\.1:\d+$`,
		`(?m)^manager started: the pod informer is kinformer's$`,
		`(?m)^created pod ` + pod + `$`,
		`(?m)^reconciled ` + pod + `: annotated$`,
		`(?m)^reconciled ` + pod + `: up to date$`,
		`(?m)^deleted pod ` + pod + `$`,
		`(?m)^reconciled ` + pod + `: gone$`,
		`(?m)^done: \d+ reconciles of pod ` + pod + `, on kinformer's informers$`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("stdout does not match %q\nstdout:\n%s\nstderr:\n%s", re, stdout, stderr)
		}
	}
	// The steps come in this order: the annotation before the delete, the delete before the
	// pod is gone.
	order := regexp.MustCompile(`(?s)created pod .*: annotated\n.*: up to date\n.*deleted pod .*: gone\ndone: `)
	if !order.MatchString(stdout) {
		t.Errorf("stdout does not give the steps in order\nstdout:\n%s", stdout)
	}
}
