// Package testenv runs a real etcd and kube-apiserver on 127.0.0.1 for kinformer's integration
// tests.
//
// The binaries come from build.sh beside this file, which builds them from the Go module proxy
// into a cache folder outside the clone. A test finds them through the KINFORMER_TESTENV_BIN
// variable (a folder holding etcd, etcdctl and kube-apiserver); `make test` sets it. Without
// it, Start skips the test with a message that says how to run it, unless
// KINFORMER_REQUIRE_INTEGRATION is set to 1, in which case the missing binaries fail the test:
// CI sets it so that the integration tests can never be skipped silently.
//
// Every process is started in its own process group with a parent-death signal, recorded, and
// killed when the Env stops; Start registers Stop with t.Cleanup, so nothing is left behind
// when a test fails or panics.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// BinDirEnv names the variable that points at the folder holding the server binaries.
	BinDirEnv = "KINFORMER_TESTENV_BIN"
	// RequireEnv names the variable that, when "1", turns a missing binary into a failure.
	RequireEnv = "KINFORMER_REQUIRE_INTEGRATION"

	// ShardedListAndWatchGate is the alpha feature gate of server-side sharded LIST and
	// WATCH (KEP-5866): ListOptions.ShardSelector and ListMeta.ShardInfo. Off by default;
	// a test turns it on for a cluster of its own with
	// Options{FeatureGates: map[string]bool{ShardedListAndWatchGate: true}}.
	ShardedListAndWatchGate = "ShardedListAndWatch"

	readyTimeout = 90 * time.Second
	// defaultStopGrace is Options.StopGrace's default.
	defaultStopGrace = 10 * time.Second
)

// Options tunes an environment. The zero value starts etcd and one API server with the flags
// documented in shared/apiserver-notes.md.
type Options struct {
	// APIServerFlags are appended to kube-apiserver's command line (for example
	// "--watch-cache=false").
	APIServerFlags []string
	// EtcdCompactionInterval is passed as --etcd-compaction-interval (default 5m).
	EtcdCompactionInterval time.Duration
	// Users are extra users, in no group, that the API servers accept bearer tokens for (see
	// Env.Token). They have no rights until a test binds roles to them.
	Users []string
	// StopGrace is how long stopping a process (Stop, Restart, RestartEtcd, the end of the
	// environment) waits after SIGTERM before it sends SIGKILL. Zero means 10 seconds.
	// kube-apiserver closes its port at once on SIGTERM but lingers until its open watches
	// end (up to a minute), and etcd takes about 7 seconds to exit while kube-apiserver
	// watches it: a test that restarts the servers often sets a short grace (the soak test
	// uses one second) so that a restart costs the server's start-up time only.
	StopGrace time.Duration
	// FeatureGates turns kube-apiserver feature gates on (true) or off (false), passed as one
	// --feature-gates flag in name order. Alpha gates belong to the clusters a test starts
	// for itself: the shared cluster of a test package keeps the server's defaults, so that
	// the other tests see what a user's cluster does (see ShardedListAndWatchGate).
	FeatureGates map[string]bool
	// APIServerEnv are extra environment variables ("NAME=value") for kube-apiserver, on top
	// of the test process's environment (for example "GOGC=400": less garbage-collection CPU
	// per request for more memory).
	APIServerEnv []string
}

// Env is a running etcd with one or more kube-apiservers on top of it. Its methods are safe
// for concurrent use.
type Env struct {
	tb   testing.TB
	dir  string
	bins string
	opts Options

	token    string
	tokens   map[string]string // user → bearer token
	etcdPort int

	mu      sync.Mutex
	etcd    *proc
	servers []*APIServer
	stopped bool
}

// APIServer is one kube-apiserver of an Env. It keeps its port across Stop and Start.
type APIServer struct {
	env  *Env
	name string
	dir  string
	port int

	mu   sync.Mutex
	proc *proc
}

// proc is one child process and the channel closed when it has exited.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	log    string
}

// BinDir returns the folder of server binaries named by KINFORMER_TESTENV_BIN, or "" when it
// is unset or lacks a binary.
func BinDir() string {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		return ""
	}
	for _, b := range []string{"etcd", "etcdctl", "kube-apiserver"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
			return ""
		}
	}
	return dir
}

// Available reports whether the binaries are there. When they are not, it skips tb, or fails
// it when KINFORMER_REQUIRE_INTEGRATION=1.
func Available(tb testing.TB) bool {
	tb.Helper()
	if BinDir() != "" {
		return true
	}
	msg := fmt.Sprintf("integration test needs a real etcd and kube-apiserver: run `make test`, or build them with "+
		"internal/testenv/build.sh and set %s to the folder it prints", BinDirEnv)
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("%s (%s=1 forbids skipping)", msg, RequireEnv)
	}
	tb.Skip(msg)
	return false
}

// Start starts etcd and one kube-apiserver, waits until both are ready, and registers Stop
// with tb.Cleanup. It skips or fails tb as Available does when the binaries are missing.
func Start(tb testing.TB, opts Options) *Env {
	tb.Helper()
	if !Available(tb) {
		return nil
	}
	env, err := New(tb, opts)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	tb.Cleanup(env.Stop)
	return env
}

// New starts etcd and one kube-apiserver and waits until both are ready. The caller must call
// Stop. tb is used for logging and temporary folders only; it may be nil.
//
// Before it starts anything, New takes this process's test-cluster slot (see SlotsEnv),
// waiting while other processes hold every slot; the last Stop of the process gives it back.
func New(tb testing.TB, opts Options) (*Env, error) {
	bins := BinDir()
	if bins == "" {
		return nil, fmt.Errorf("%s does not name a folder with etcd, etcdctl and kube-apiserver", BinDirEnv)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	if tb != nil {
		logf = tb.Logf
	}
	if err := acquireSlot(logf); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kinformer-testenv-")
	if err != nil {
		releaseSlot()
		return nil, err
	}
	env := &Env{tb: tb, dir: dir, bins: bins, opts: opts}
	ok := false
	defer func() {
		if !ok {
			env.Stop()
		}
	}()
	if err := env.writeCredentials(); err != nil {
		return nil, err
	}
	if err := env.startEtcd(); err != nil {
		return nil, err
	}
	if _, err := env.AddAPIServer(); err != nil {
		return nil, err
	}
	ok = true
	return env, nil
}

// Dir is the environment's temporary folder (logs, data, keys).
func (e *Env) Dir() string { return e.dir }

// EtcdURL is etcd's client URL.
func (e *Env) EtcdURL() string { return fmt.Sprintf("http://127.0.0.1:%d", e.etcdPort) }

// APIServer returns the i-th API server (0 is the one New started).
func (e *Env) APIServer(i int) *APIServer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.servers[i]
}

// Config is a rest.Config for the first API server with admin rights. See APIServer.Config.
func (e *Env) Config() *rest.Config { return e.APIServer(0).Config() }

// Clientset is an admin clientset for the first API server.
func (e *Env) Clientset() kubernetes.Interface { return e.APIServer(0).Clientset() }

// AddAPIServer starts another kube-apiserver on the same etcd, on a port of its own, and
// waits until it is ready.
func (e *Env) AddAPIServer() (*APIServer, error) {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return nil, errors.New("testenv: environment stopped")
	}
	name := fmt.Sprintf("apiserver-%d", len(e.servers))
	s := &APIServer{env: e, name: name, dir: filepath.Join(e.dir, name)}
	e.servers = append(e.servers, s)
	e.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		if err = s.Start(); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return s, err
}

// Stop kills every process of the environment and removes its folder. It is idempotent.
func (e *Env) Stop() {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return
	}
	e.stopped = true
	servers := append([]*APIServer(nil), e.servers...)
	etcd := e.etcd
	e.mu.Unlock()
	for _, s := range servers {
		s.Stop()
	}
	if etcd != nil {
		etcd.stop(e.stopGrace())
	}
	releaseSlot()
	if e.tb != nil && e.tb.Failed() {
		e.tb.Logf("testenv: test failed; logs kept in %s", e.dir)
		return
	}
	_ = os.RemoveAll(e.dir)
}

// RestartEtcd stops etcd and starts it again on the same port and data folder.
func (e *Env) RestartEtcd() error {
	e.mu.Lock()
	p := e.etcd
	e.mu.Unlock()
	if p != nil {
		p.stop(e.stopGrace())
	}
	return e.startEtcd()
}

// stopGrace is Options.StopGrace or its default.
func (e *Env) stopGrace() time.Duration {
	if e.opts.StopGrace > 0 {
		return e.opts.StopGrace
	}
	return defaultStopGrace
}

func (e *Env) writeCredentials() error {
	var err error
	if e.token, err = newToken(); err != nil {
		return err
	}
	lines := e.token + ",test-admin,test-admin,system:masters\n"
	e.tokens = map[string]string{}
	for i, user := range e.opts.Users {
		tok, err := newToken()
		if err != nil {
			return err
		}
		e.tokens[user] = tok
		lines += fmt.Sprintf("%s,%s,uid-%d\n", tok, user, i)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "tokens.csv"), []byte(lines), 0o600); err != nil {
		return err
	}
	out, err := exec.Command("openssl", "genrsa", "-out", filepath.Join(e.dir, "sa.key"), "2048").CombinedOutput()
	if err != nil {
		return fmt.Errorf("openssl genrsa: %v: %s", err, out)
	}
	return nil
}

// Token returns the bearer token of a user named in Options.Users, or "" for another name.
func (e *Env) Token(user string) string { return e.tokens[user] }

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (e *Env) startEtcd() error {
	if e.etcdPort == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		e.etcdPort = p
	}
	peer, err := freePort()
	if err != nil {
		return err
	}
	client := e.EtcdURL()
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	p, err := e.spawn("etcd", nil, filepath.Join(e.bins, "etcd"),
		"--name=test", "--data-dir="+filepath.Join(e.dir, "etcd-data"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=test="+peerURL, "--log-level=warn", "--unsafe-no-fsync")
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.etcd = p
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	return waitFor(ctx, p, func(ctx context.Context) error {
		body, err := httpGet(ctx, client+"/health")
		if err != nil {
			return err
		}
		if !strings.Contains(body, `"health":"true"`) {
			return fmt.Errorf("etcd not healthy: %s", body)
		}
		return nil
	})
}

// spawn starts a child process with its output in a log file, in its own process group,
// killed if the test binary dies.
func (e *Env) spawn(name string, env []string, path string, args ...string) (*proc, error) {
	logPath := filepath.Join(e.dir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), log: logPath}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and waits.
func (p *proc) stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// tail returns the last lines of the process's log, for error messages.
func (p *proc) tail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls check until it succeeds, the process exits, or ctx ends.
func waitFor(ctx context.Context, p *proc, check func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready (%v):\n%s", p.name, p.err, p.tail())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %v (last check: %v):\n%s", p.name, ctx.Err(), last, p.tail())
		case <-tick.C:
		}
	}
}

// freePort picks a random port in 20000–31999 (below the ephemeral range) that nothing
// listens on right now.
func freePort() (int, error) {
	for i := 0; i < 100; i++ {
		n, err := rand.Int(rand.Reader, big.NewInt(12000))
		if err != nil {
			return 0, err
		}
		port := 20000 + int(n.Int64())
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, errors.New("no free port found in 20000-31999")
}
