package bench

import (
	"bytes"
	"context"
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientdynamic "k8s.io/client-go/dynamic"
	clientdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/listadmission"
)

// The startup-storm benchmark (BenchmarkStartupStorm, `make bench-storm`).
//
// Environment:
//   - KINFORMER_BENCH_STORM=1 runs it (skipped otherwise);
//   - KINFORMER_STORM_APISERVER_FLAGS: kube-apiserver's extra flags, space separated
//     (default stormDefaultFlags);
//   - KINFORMER_STORM_SHARES: the nominal concurrency shares of the priority level the
//     informers' user is put in (default 100; see stormFlowControl);
//   - KINFORMER_STORM_OBJECTS: objects per custom resource (default 200);
//   - KINFORMER_STORM_SIDES: the sides to run, comma separated (default all:
//     client-go,kinformer-default,kinformer-shared-admission,kinformer-no-admission),
//     for investigating one;
//   - KINFORMER_STORM_RUNS: how many times every side runs (default 3), the
//     sides' order rotating from run to run;
//   - KINFORMER_STORM_TRACE=1 prints the shared list admission's state every
//     half second while the informers relist after the restart.
const (
	stormSidesEnv   = "KINFORMER_STORM_SIDES"
	stormTraceEnv   = "KINFORMER_STORM_TRACE"
	stormEnv        = "KINFORMER_BENCH_STORM"
	stormFlagsEnv   = "KINFORMER_STORM_APISERVER_FLAGS"
	stormSharesEnv  = "KINFORMER_STORM_SHARES"
	stormObjectsEnv = "KINFORMER_STORM_OBJECTS"
	stormRunsEnv    = "KINFORMER_STORM_RUNS"
	// stormUser is the user the informers act as: not in system:masters,
	// whose requests API Priority and Fairness never limits.
	stormUser = "storm"
	// stormCRDs custom resources plus the 20 built-in resources of
	// watchRequestsResources make the 50 informers of a side.
	stormCRDs  = 30
	stormGroup = "storm.kinformer.test"
)

// stormDefaultFlags lower the server's total concurrency: APF divides
// max-requests-inflight + max-mutating-requests-inflight among its priority
// levels.
var stormDefaultFlags = []string{"--max-requests-inflight=10", "--max-mutating-requests-inflight=5"}

// stormResources are the custom resources of the benchmark.
func stormResources() []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, stormCRDs)
	for i := range out {
		out[i] = schema.GroupVersionResource{Group: stormGroup, Version: "v1", Resource: fmt.Sprintf("storms%02d", i)}
	}
	return out
}

// stormMarker is what the bookmark ending a streaming list's initial events
// carries, in JSON and protobuf alike.
var stormMarker = []byte(metav1.InitialEventsAnnotationKey)

// stormWire counts, on the wire, what one side's informers request: LIST
// requests and streaming lists in flight (a LIST from its request until its
// body is closed; a streaming list until its initial-events-end bookmark, or
// its end), their peak, 429 answers, and per resource path when a list last
// completed.
type stormWire struct {
	lists, streams, watches, other, tooMany atomic.Int64
	inFlight, peak                          atomic.Int64

	mu        sync.Mutex
	completed map[string]time.Time
}

func newStormWire() *stormWire { return &stormWire{completed: map[string]time.Time{}} }

// reset starts a new phase: counts and peak from zero.
func (w *stormWire) reset() {
	for _, c := range []*atomic.Int64{&w.lists, &w.streams, &w.watches, &w.other, &w.tooMany} {
		c.Store(0)
	}
	w.peak.Store(w.inFlight.Load())
}

func (w *stormWire) begin() {
	n := w.inFlight.Add(1)
	for {
		p := w.peak.Load()
		if n <= p || w.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// completedSince returns how many of paths completed a list after t, and
// when the last of them did.
func (w *stormWire) completedSince(paths []string, t time.Time) (int, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, last := 0, time.Time{}
	for _, p := range paths {
		if c, ok := w.completed[p]; ok && c.After(t) {
			n++
			if c.After(last) {
				last = c
			}
		}
	}
	return n, last
}

func (w *stormWire) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		kind := "other"
		switch {
		case req.Method != http.MethodGet:
			w.other.Add(1)
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			if q.Get("sendInitialEvents") == "true" {
				kind = "stream"
				w.streams.Add(1)
			} else {
				w.watches.Add(1)
			}
		case strings.HasPrefix(req.URL.Path, "/api/v1/") || strings.HasPrefix(req.URL.Path, "/apis/"):
			kind = "list"
			w.lists.Add(1)
		default:
			w.other.Add(1)
		}
		listing := kind == "list" || kind == "stream"
		if listing {
			w.begin()
		}
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusTooManyRequests {
			w.tooMany.Add(1)
		}
		if !listing {
			return resp, err
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			w.inFlight.Add(-1)
			return resp, err
		}
		resp.Body = &stormBody{ReadCloser: resp.Body, w: w, path: req.URL.Path, stream: kind == "stream"}
		return resp, nil
	})
}

// stormBody ends a list in flight: at the initial-events-end marker of a
// streaming list, at the end or close of a LIST's body.
type stormBody struct {
	io.ReadCloser
	w      *stormWire
	path   string
	stream bool
	tail   []byte
	once   sync.Once
}

func (b *stormBody) done(complete bool) {
	b.once.Do(func() {
		b.w.inFlight.Add(-1)
		if complete {
			b.w.mu.Lock()
			b.w.completed[b.path] = time.Now()
			b.w.mu.Unlock()
		}
	})
}

func (b *stormBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.stream && n > 0 {
		buf := append(b.tail, p[:n]...)
		if bytes.Contains(buf, stormMarker) {
			b.done(true)
		}
		keep := min(len(buf), len(stormMarker)-1)
		b.tail = append(b.tail[:0], buf[len(buf)-keep:]...)
	}
	if err == io.EOF && !b.stream {
		b.done(true)
	} else if err != nil {
		b.done(false)
	}
	return n, err
}

func (b *stormBody) Close() error {
	b.done(!b.stream)
	return b.ReadCloser.Close()
}

// stormPhase is what one storm measured.
type stormPhase struct {
	side, phase string
	// run is the run (from 1) and position the side's place in that run's
	// order (from 1).
	run, position                     int
	admission                         string
	informers, synced                 int
	syncTime                          time.Duration
	lists, streams, watches, tooMany  int64
	peakLists                         int64
	rssBefore, rssPeak                int64 // kB
	admissionPeak, admissionThrottled int64
	admissionAdmitted                 uint64
	restartTime                       time.Duration
}

// stormSide builds and runs one side's 50 informers.
type stormSide struct {
	name string
	// admission describes the side's list admission, for the tables.
	admission string
	// start starts the side's informers through clients configured by
	// cfg, and returns a wait for their sync and a stop.
	start func(ctx context.Context, cfg *rest.Config, builtins, crds []schema.GroupVersionResource) (wait func(context.Context) (synced int), stop func(), admission *listadmission.Admission, err error)
}

// The list admission of kinformer's storm sides (stormSides).
const (
	// stormAdmissionDefault: no option, each factory (typed, dynamic) with
	// its own listadmission.New(listadmission.Options{}), as a user who
	// changes only the import paths gets.
	stormAdmissionDefault = iota
	// stormAdmissionShared: one listadmission.Admission shared by both
	// factories, its WrapTransport on their clients (opt-in).
	stormAdmissionShared
	// stormAdmissionOff: informers.WithListAdmission(nil), every informer
	// lists at once, as in client-go (opt-in).
	stormAdmissionOff
)

// stormSides are, the default configurations first: client-go's factories,
// kinformer's on their defaults, then kinformer's opt-in configurations:
// its factories sharing one list admission (whose WrapTransport sees the
// 429s the REST client retries), and its factories with admission off.
func stormSides() []stormSide {
	kin := func(mode int) func(ctx context.Context, cfg *rest.Config, builtins, crds []schema.GroupVersionResource) (func(context.Context) int, func(), *listadmission.Admission, error) {
		return func(ctx context.Context, cfg *rest.Config, builtins, crds []schema.GroupVersionResource) (func(context.Context) int, func(), *listadmission.Admission, error) {
			var admission *listadmission.Admission
			var typedOpts []informers.SharedInformerOption
			var dynamicOpts []dynamicinformer.DynamicSharedInformerOption
			switch mode {
			case stormAdmissionShared:
				admission = listadmission.New(listadmission.Options{})
				cfg = rest.CopyConfig(cfg)
				cfg.Wrap(admission.WrapTransport)
				fallthrough
			case stormAdmissionOff:
				typedOpts = append(typedOpts, informers.WithListAdmission(admission))
				dynamicOpts = append(dynamicOpts, dynamicinformer.WithListAdmission(admission))
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return nil, nil, nil, err
			}
			dyn, err := clientdynamic.NewForConfig(cfg)
			if err != nil {
				return nil, nil, nil, err
			}
			tf := informers.NewSharedInformerFactoryWithOptions(client, 0, typedOpts...)
			df := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(dyn, 0, dynamicOpts...)
			for _, gvr := range builtins {
				i, err := tf.ForResource(gvr)
				if err != nil {
					return nil, nil, nil, err
				}
				i.Informer()
			}
			for _, gvr := range crds {
				df.ForResource(gvr).Informer()
			}
			runCtx, cancel := context.WithCancel(ctx)
			tf.StartWithContext(runCtx)
			df.Start(runCtx.Done())
			wait := func(ctx context.Context) int {
				return countSynced(tf.WaitForCacheSyncWithContext(ctx).Synced) + countSynced(df.WaitForCacheSync(ctx.Done()))
			}
			stop := func() {
				cancel()
				tf.Shutdown()
				df.Shutdown()
			}
			return wait, stop, admission, nil
		}
	}
	return []stormSide{
		{name: "client-go", admission: "– (client-go has none)", start: clientGoStormSide},
		{name: "kinformer-default", admission: "default: one per factory, 10 lists each", start: kin(stormAdmissionDefault)},
		{name: "kinformer-shared-admission", admission: "opt-in: one shared, 10 lists", start: kin(stormAdmissionShared)},
		{name: "kinformer-no-admission", admission: "opt-in: off", start: kin(stormAdmissionOff)},
	}
}

// clientGoStormSide starts client-go's factories (typed and dynamic) on
// their defaults.
func clientGoStormSide(ctx context.Context, cfg *rest.Config, builtins, crds []schema.GroupVersionResource) (func(context.Context) int, func(), *listadmission.Admission, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	dyn, err := clientdynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	tf := clientinformers.NewSharedInformerFactory(client, 0)
	df := clientdynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	for _, gvr := range builtins {
		i, err := tf.ForResource(gvr)
		if err != nil {
			return nil, nil, nil, err
		}
		i.Informer()
	}
	for _, gvr := range crds {
		df.ForResource(gvr).Informer()
	}
	stopCh := make(chan struct{})
	tf.Start(stopCh)
	df.Start(stopCh)
	wait := func(ctx context.Context) int {
		return countSynced(tf.WaitForCacheSync(ctx.Done())) + countSynced(df.WaitForCacheSync(ctx.Done()))
	}
	stop := func() {
		close(stopCh)
		tf.Shutdown()
		df.Shutdown()
	}
	return wait, stop, nil, nil
}

// BenchmarkStartupStorm starts 50 informers at once (the 20 built-in
// resources of BenchmarkWatchRequests and 30 custom resources, holding
// KINFORMER_STORM_OBJECTS objects each, plus 1,000 ConfigMaps of 4 KiB)
// against a real kube-apiserver whose concurrency is low enough that API
// Priority and Fairness answers 429, then restarts the server under them
// so that they all relist at once; the sides of stormSides (client-go's
// factories and kinformer's on their defaults, then kinformer's opt-in
// configurations: one shared listadmission.Admission, admission off), one
// after the other against the same server, KINFORMER_STORM_RUNS times (3 by
// default), the sides' order rotating from run to run. Per side and storm
// it reports the peak of LIST requests and streaming lists in flight and
// the 429s, both counted on the wire below client-go's REST client (which
// retries 429s by itself), the time until all 50 synced (or, after the
// restart, all relisted, at most stormSyncTimeout), and kube-apiserver's
// peak RSS (VmHWM of a server restarted fresh before each side's cold
// start). It prints every row of every run (stormTable) and, per side and
// storm, the median and range over the runs (stormSummary), and reports
// the medians as metrics.
func BenchmarkStartupStorm(b *testing.B) {
	if os.Getenv(stormEnv) != "1" {
		b.Skipf("set %s=1 to run the startup storm against a real kube-apiserver", stormEnv)
	}
	if testenv.BinDir() == "" {
		b.Skipf("needs a real etcd and kube-apiserver: build them with internal/testenv/build.sh and set %s", testenv.BinDirEnv)
	}
	flags := stormDefaultFlags
	if raw := os.Getenv(stormFlagsEnv); raw != "" {
		flags = strings.Fields(raw)
	}
	shares := int32(envInt(b, stormSharesEnv, 100))
	objects := envInt(b, stormObjectsEnv, 200)
	env, err := testenv.New(nil, testenv.Options{APIServerFlags: flags, Users: []string{stormUser}, StopGrace: 2 * time.Second})
	if err != nil {
		b.Fatalf("starting the API server: %v", err)
	}
	defer env.Stop()
	ctx := b.Context()
	crds := stormResources()
	if err := stormPopulate(ctx, env, crds, objects, shares); err != nil {
		b.Fatal(err)
	}
	server := env.APIServer(0)
	cfg := server.ConfigForToken(env.Token(stormUser))
	fmt.Printf("storm: kube-apiserver flags %q, priority level of user %q: %d shares, Reject; %d custom resources x %d objects, 1000 ConfigMaps of 4 KiB; client QPS %v burst %d; load average before: %s\n",
		flags, stormUser, shares, len(crds), objects, cfg.QPS, cfg.Burst, loadAverage())

	runs := envInt(b, stormRunsEnv, 3)
	var sides []stormSide
	for _, side := range stormSides() {
		if want := os.Getenv(stormSidesEnv); want == "" || slices.Contains(strings.Split(want, ","), side.name) {
			sides = append(sides, side)
		}
	}
	var phases []stormPhase
	for range b.N {
		for run := range runs {
			for i, side := range stormRunOrder(sides, run) {
				cold, restart, err := stormRun(ctx, server, cfg, side, run+1, i+1, watchRequestsResources, crds)
				if err != nil {
					b.Fatalf("run %d, %s: %v", run+1, side.name, err)
				}
				phases = append(phases, cold, restart)
			}
		}
	}
	fmt.Printf("storm: load average after: %s\n", loadAverage())
	fmt.Print(stormTable(phases))
	summary := stormSummarize(phases, sides)
	fmt.Print(stormSummary(summary))
	for _, r := range summary {
		prefix := r.side + "-" + strings.Fields(r.phase)[0]
		b.ReportMetric(Median(r.peakLists), prefix+"-peak-lists")
		b.ReportMetric(Median(r.tooMany), prefix+"-429s")
		b.ReportMetric(Median(r.syncSeconds), prefix+"-sync-s")
		b.ReportMetric(Median(r.synced), prefix+"-synced")
		b.ReportMetric(Median(r.rssPeakMiB), prefix+"-server-peak-MiB")
	}
}

// stormRunOrder returns the sides in run's order: rotated by run, so that
// over as many runs as sides every side runs in every position.
func stormRunOrder(sides []stormSide, run int) []stormSide {
	out := make([]stormSide, len(sides))
	for i := range sides {
		out[i] = sides[(i+run)%len(sides)]
	}
	return out
}

// stormSummaryRow is one side's storm over all runs: each run's figures.
type stormSummaryRow struct {
	side, admission, phase string
	informers              int
	synced, syncSeconds    []float64
	peakLists, tooMany     []float64
	rssPeakMiB             []float64
}

// stormSummarize groups phases by side (in the order of sides, the
// default configurations first) and storm (cold start, then server
// restart).
func stormSummarize(phases []stormPhase, sides []stormSide) []stormSummaryRow {
	var out []stormSummaryRow
	for _, side := range sides {
		for _, phase := range []string{"cold start", "server restart"} {
			r := stormSummaryRow{side: side.name, admission: side.admission, phase: phase}
			for _, p := range phases {
				if p.side != side.name || p.phase != phase {
					continue
				}
				r.informers = p.informers
				r.synced = append(r.synced, float64(p.synced))
				r.syncSeconds = append(r.syncSeconds, p.syncTime.Seconds())
				r.peakLists = append(r.peakLists, float64(p.peakLists))
				r.tooMany = append(r.tooMany, float64(p.tooMany))
				r.rssPeakMiB = append(r.rssPeakMiB, float64(p.rssPeak)/1024)
			}
			if len(r.synced) > 0 {
				out = append(out, r)
			}
		}
	}
	return out
}

// stormSummary is the Markdown table of rows: per side and storm, the
// median and the range (min–max) over the runs of each figure.
func stormSummary(rows []stormSummaryRow) string {
	var sb strings.Builder
	sb.WriteString("\nMedians over the runs, range (min–max) in brackets; the default configurations first:\n\n")
	sb.WriteString("| side | list admission | storm | runs | informers synced | time to all synced (s) | peak LISTs in flight (wire) | 429s (wire) | kube-apiserver peak RSS (MiB) |\n")
	sb.WriteString("|---|---|---|---:|---|---|---|---|---|\n")
	mr := func(vs []float64, decimals int) string {
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
		return fmt.Sprintf("%s (%s–%s)", f(Median(vs)), f(slices.Min(vs)), f(slices.Max(vs)))
	}
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %s | %s | %d | %s of %d | %s | %s | %s | %s |\n",
			r.side, r.admission, r.phase, len(r.synced), mr(r.synced, 0), r.informers, mr(r.syncSeconds, 1),
			mr(r.peakLists, 0), mr(r.tooMany, 0), mr(r.rssPeakMiB, 0))
	}
	return sb.String()
}

// stormRun measures one side, in position of run: a cold start against a
// freshly restarted server, then a restart of the server under the
// running informers.
func stormRun(ctx context.Context, server *testenv.APIServer, cfg *rest.Config, side stormSide, run, position int, builtins, crds []schema.GroupVersionResource) (cold, restart stormPhase, err error) {
	if err := server.Restart(); err != nil {
		return cold, restart, err
	}
	// A server just started may not have loaded the user's binding yet:
	// the informers should meet its flow control, not a 403.
	if err := stormWaitAuthorized(ctx, cfg); err != nil {
		return cold, restart, err
	}
	wire := newStormWire()
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(wire.wrap)
	n := len(builtins) + len(crds)

	cold = stormPhase{side: side.name, phase: "cold start", run: run, position: position, informers: n, admission: side.admission, rssBefore: procStatusKB(server.PID(), "VmRSS")}
	start := time.Now()
	wait, stop, admission, err := side.start(ctx, cfg, builtins, crds)
	if err != nil {
		return cold, restart, err
	}
	defer stop()
	syncCtx, cancel := context.WithTimeout(ctx, stormSyncTimeout)
	cold.synced = wait(syncCtx)
	cancel()
	cold.syncTime = time.Since(start)
	paths := wire.paths()
	cold.fill(wire, server, admission)
	fmt.Print(stormRow(cold))

	// The server restarts under the running informers: every watch ends,
	// every informer lists again (410 from the new watch cache).
	wire.reset()
	restart = stormPhase{side: side.name, phase: "server restart", run: run, position: position, informers: n, admission: side.admission}
	before := admission.Stats()
	start = time.Now()
	if err := server.Restart(); err != nil {
		return cold, restart, err
	}
	restart.restartTime = time.Since(start)
	restart.rssBefore = procStatusKB(server.PID(), "VmRSS")
	deadline := time.Now().Add(stormSyncTimeout)
	trace := os.Getenv(stormTraceEnv) == "1" && admission != nil
	nextTrace := time.Now()
	for {
		if trace && !time.Now().Before(nextTrace) {
			s := admission.Stats()
			paused := time.Until(s.PausedUntil).Round(time.Millisecond)
			fmt.Printf("storm trace %6.1fs: limit %d, in flight %d, waiting %d, admitted %d, 429s %d, pause left %v, 429s on the wire %d\n",
				time.Since(start).Seconds(), s.CurrentLimit, s.InFlight, s.Waiting, s.Admitted-before.Admitted, s.Throttled-before.Throttled, max(paused, 0), wire.tooMany.Load())
			nextTrace = nextTrace.Add(500 * time.Millisecond)
		}
		done, last := wire.completedSince(paths, start)
		restart.synced = done
		if done == len(paths) {
			restart.syncTime = last.Sub(start)
			break
		}
		if time.Now().After(deadline) {
			restart.syncTime = time.Since(start)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	restart.fill(wire, server, admission)
	after := admission.Stats()
	restart.admissionThrottled -= int64(before.Throttled)
	restart.admissionAdmitted = after.Admitted - before.Admitted
	fmt.Print(stormRow(restart))
	return cold, restart, nil
}

// stormSyncTimeout bounds each storm: informers that have not synced (or
// relisted) by then are reported as such.
const stormSyncTimeout = 2 * time.Minute

// countSynced counts the true values of m.
func countSynced[K comparable](m map[K]bool) int {
	n := 0
	for _, ok := range m {
		if ok {
			n++
		}
	}
	return n
}

// stormWaitAuthorized waits until the storm user may list (RBAC loaded).
func stormWaitAuthorized(ctx context.Context, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := client.CoreV1().ConfigMaps("storm").List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("user %s cannot list: %w", stormUser, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// paths returns the resource paths that completed a list.
func (w *stormWire) paths() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.completed))
	for p := range w.completed {
		out = append(out, p)
	}
	return out
}

func (p *stormPhase) fill(w *stormWire, server *testenv.APIServer, admission *listadmission.Admission) {
	p.lists, p.streams, p.watches, p.tooMany = w.lists.Load(), w.streams.Load(), w.watches.Load(), w.tooMany.Load()
	p.peakLists = w.peak.Load()
	p.rssPeak = procStatusKB(server.PID(), "VmHWM")
	s := admission.Stats()
	p.admissionPeak, p.admissionThrottled, p.admissionAdmitted = int64(s.PeakInFlight), int64(s.Throttled), s.Admitted
}

// stormTable is the Markdown table of every phase of every run, in the
// order they ran.
func stormTable(phases []stormPhase) string {
	var sb strings.Builder
	sb.WriteString("\nEvery storm of every run, in the order they ran:\n\n")
	sb.WriteString(stormHeader)
	for _, p := range phases {
		sb.WriteString(stormRow(p))
	}
	return sb.String()
}

// stormHeader heads the table of stormRow's rows.
const stormHeader = "| run | side (position) | list admission | storm | informers synced | time to all synced | peak LISTs in flight (wire) | 429s (wire) | LIST / streaming-list / watch requests | kube-apiserver RSS before → peak (MiB) | shared admission: peak, 429s seen |\n" +
	"|---:|---|---|---|---|---|---|---|---|---|---|\n"

// stormRow is the table row of p. The shared admission's figures are
// those of the side that holds one (the others' admission, if any, is
// inside their factories, and not observed).
func stormRow(p stormPhase) string {
	adm := "–"
	if p.admissionAdmitted > 0 || p.admissionPeak > 0 {
		adm = fmt.Sprintf("%d, %d", p.admissionPeak, p.admissionThrottled)
	}
	when := p.syncTime.Round(10 * time.Millisecond).String()
	if p.phase == "server restart" {
		when += fmt.Sprintf(" (server back after %v)", p.restartTime.Round(10*time.Millisecond))
	}
	return fmt.Sprintf("| %d | %s (%d) | %s | %s | %d/%d | %s | %d | %d | %d / %d / %d | %d → %d | %s |\n",
		p.run, p.side, p.position, p.admission, p.phase, p.synced, p.informers, when, p.peakLists, p.tooMany, p.lists, p.streams, p.watches,
		p.rssBefore/1024, p.rssPeak/1024, adm)
}

// stormPopulate creates what the informers list: the custom resources and
// their objects, 1,000 ConfigMaps, the user the informers act as (bound to
// cluster-admin) and the priority level it is put in.
func stormPopulate(ctx context.Context, env *testenv.Env, crds []schema.GroupVersionResource, objects int, shares int32) error {
	admin := env.Clientset()
	if err := stormFlowControl(ctx, admin, shares); err != nil {
		return err
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "storm-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: stormUser}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	const ns = "storm"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	dyn, err := clientdynamic.NewForConfig(env.Config())
	if err != nil {
		return err
	}
	for i, gvr := range crds {
		if err := env.CreateCRD(ctx, gvr, fmt.Sprintf("Storm%02d", i)); err != nil {
			return err
		}
	}
	payload := strings.Repeat("x", 1024)
	var jobs []func() error
	for i, gvr := range crds {
		for j := range objects {
			jobs = append(jobs, func() error {
				obj := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": gvr.GroupVersion().String(), "kind": fmt.Sprintf("Storm%02d", i),
					"metadata": map[string]any{"name": fmt.Sprintf("o%05d", j), "namespace": ns},
					"spec":     map[string]any{"payload": payload},
				}}
				_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
				return err
			})
		}
	}
	data := strings.Repeat("y", 4096)
	for j := range 1000 {
		jobs = append(jobs, func() error {
			_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%05d", j)},
				Data:       map[string]string{"data": data},
			}, metav1.CreateOptions{})
			return err
		})
	}
	return runParallel(32, jobs)
}

// stormFlowControl puts the storm user's requests in a priority level of
// their own with the given shares that rejects (429) what exceeds its seats
// instead of queueing it, and neither lends nor borrows seats: a small,
// predictable share of the server's total concurrency, as a busy cluster
// gives a controller.
func stormFlowControl(ctx context.Context, admin kubernetes.Interface, shares int32) error {
	fc := admin.FlowcontrolV1()
	if _, err := fc.PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "storm"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To(shares),
				LendablePercent:          ptr.To(int32(0)),
				BorrowingLimitPercent:    ptr.To(int32(0)),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := fc.FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "storm"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "storm"},
			MatchingPrecedence:         500,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: stormUser}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"},
				}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}, metav1.CreateOptions{})
	return err
}

// runParallel runs jobs on n goroutines and returns the first error.
func runParallel(n int, jobs []func() error) error {
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) || first.Load() != nil {
					return
				}
				if err := jobs[i](); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// procStatusKB returns a field of /proc/<pid>/status in kB (0 if unknown).
func procStatusKB(pid int, field string) int64 {
	if pid == 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// envInt reads a positive integer from the environment, def when unset.
func envInt(b *testing.B, name string, def int) int {
	raw := os.Getenv(name)
	if raw == "" {
		return def
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v <= 0 {
		b.Fatalf("%s=%q: not a positive integer", name, raw)
	}
	return v
}

// The storm's runs rotate the sides' order, and its summary has one row
// per side and storm, the default configurations first, each figure's
// median and range over the runs; the table of every run keeps every row.
func TestStormSummaryHasEveryRowWithMediansAndRanges(t *testing.T) {
	sides := stormSides()
	names := func(ss []stormSide) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.name)
		}
		return out
	}
	assert.Equal(t, []string{"client-go", "kinformer-default", "kinformer-shared-admission", "kinformer-no-admission"}, names(sides), "the default configurations first")
	assert.Equal(t, []string{"kinformer-default", "kinformer-shared-admission", "kinformer-no-admission", "client-go"}, names(stormRunOrder(sides, 1)))

	var phases []stormPhase
	for run := 1; run <= 3; run++ {
		for i, side := range stormRunOrder(sides, run-1) {
			for _, phase := range []string{"cold start", "server restart"} {
				phases = append(phases, stormPhase{
					side: side.name, phase: phase, run: run, position: i + 1, admission: side.admission,
					informers: 50, synced: 40 + run, syncTime: time.Duration(run*10) * time.Second,
					peakLists: int64(10 * run), tooMany: int64(run), rssPeak: int64(300+run) * 1024,
				})
			}
		}
	}
	rows := stormSummarize(phases, sides)
	require.Len(t, rows, 8)
	assert.Equal(t, "client-go", rows[0].side)
	assert.Equal(t, "cold start", rows[0].phase)
	assert.Equal(t, "kinformer-no-admission", rows[7].side)
	assert.Equal(t, "server restart", rows[7].phase)
	summary := stormSummary(rows)
	assert.Contains(t, summary, "| kinformer-no-admission | opt-in: off | cold start | 3 | 42 (41–43) of 50 | 20.0 (10.0–30.0) | 20 (10–30) | 2 (1–3) | 302 (301–303) |\n")
	table := stormTable(phases)
	assert.Equal(t, 1+24, strings.Count(table, "\n| "), "the header and every storm of every run")
	assert.Contains(t, table, "| 2 | kinformer-no-admission (3) | opt-in: off | cold start | 42/50 | 20s |")
}
