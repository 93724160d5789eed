package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers"
)

// The relist benchmark by list mode and fraction changed.
//
// A parent process (the benchmark) runs a PodAPI server and, for every
// side of a pair, starts the test binary again as a child process
// (the harness of child_test.go), so that each
// side's heap holds only its own informer: one side's garbage never counts
// against the other, and the server's encoded pods count against neither.
//
// The child builds its side's factory pod informer (kinformer's
// informers.NewSharedInformerFactory or client-go's, resync 0) over one
// clientset on its default configuration except QPS -1 (no client-side
// rate limit, which would otherwise space the pages of a paged list 200 ms
// apart), waits until the informer has synced and its handler has seen
// every pod, and until the watch that follows the list is open. It then
// reads the steady-state live heap (the highest /gc/heap/live:bytes over
// two forced GC cycles), starts a LiveHeapWatch and prints "ready". The
// parent moves the server to the changed pod set and expires every older
// resourceVersion (PodAPI.Expire): the open watch gets an ERROR event with
// 410 Expired and both reflectors relist. The child waits until its
// handler has seen one notification per pod (a relist notifies every
// listed object), forces one more GC cycle (so that the window has at
// least one reading; it sees what the relist left), stops the watch and
// prints the result: peak (the highest live heap over the GC cycles of the
// window), steady, and the relist time, from the first LIST or streaming
// WATCH request sent after "ready" to the last notification.
//
// The list mode is forced alike on both sides, through what client-go
// v0.37.2's Reflector (and kinformer's, which follows it) decides on:
//
//   - stream: KUBE_FEATURE_WatchListClient=true (the default) in the
//     child's environment; both factories' ListWatches declare watch-list
//     support for a real clientset, so both stream the relist (a WATCH with
//     sendInitialEvents=true at the last resourceVersion);
//   - paged: KUBE_FEATURE_WatchListClient=false, and the server pages every
//     LIST with a limit (PagingAlways, an API server without watch cache):
//     the first LIST (resourceVersion "0", limit 500) comes back in pages,
//     which makes both reflectors page every later LIST with limit 500
//     (client-go's paginatedResult, kinformer's the same), the relist
//     included;
//   - unpaged: KUBE_FEATURE_WatchListClient=false, and the server answers
//     LISTs at "0" or at a version whole (PagingLikeWatchCache): the first
//     LIST is not paged, so both relist with one LIST at the last
//     resourceVersion without limit, which the watch cache answers whole.
//
// The parent checks, from the server's request counts, that the initial
// list and the relist of each side went through the mode's requests.

const (
	// relistModesEnv set to 1 runs BenchmarkRelistModes (make
	// bench-relist); otherwise it skips, being long.
	relistModesEnv = "KINFORMER_BENCH_RELIST_MODES"
	// relistPodsEnv overrides the number of pods (50,000), for short runs
	// while developing.
	relistPodsEnv = "KINFORMER_BENCH_RELIST_PODS"
	// relistTimeout bounds every wait of a child.
	relistTimeout = childTimeout
	// relistPageSize is the page size both reflectors use.
	relistPageSize = 500
)

// relistMode is one way a relist reaches the informer.
type relistMode struct {
	name      string
	paging    PodAPIPaging
	watchList bool
}

var relistModes = []relistMode{
	{name: "stream", paging: PagingLikeWatchCache, watchList: true},
	{name: "paged", paging: PagingAlways},
	{name: "unpaged", paging: PagingLikeWatchCache},
}

// check returns an error unless the requests of one list (initial or
// relist) of pods pods are those of the mode.
func (m relistMode) check(what string, pods int, r PodAPIRequests) error {
	var want PodAPIRequests
	switch m.name {
	case "stream":
		want = PodAPIRequests{Streams: 1}
	case "paged":
		want = PodAPIRequests{Pages: int64((pods + relistPageSize - 1) / relistPageSize)}
	case "unpaged":
		want = PodAPIRequests{Lists: 1}
	}
	got := r
	got.Watches, got.ExpiredWatches = 0, 0
	if got != want {
		return fmt.Errorf("%s in mode %s: requests %+v, want lists, pages and streams %+v", what, m.name, r, want)
	}
	return nil
}

// relistSideResult is what a child reports.
type relistSideResult struct {
	// Steady and Peak are live heaps in bytes (see the top of this file).
	Steady, Peak uint64
	// Cycles is the number of GC cycles in the relist's window (the
	// forced last one included), Unseen those whose reading was missed.
	Cycles, Unseen uint64
	// SyncNanos is the initial sync's duration, RelistNanos the relist's.
	SyncNanos, RelistNanos int64
}

// BenchmarkRelistModes measures, for every list mode (stream, paged,
// unpaged; see the top of this file) and fraction of the pods changed
// between the initial sync and the relist (1 %, 10 %, 100 %), one pair of
// runs per op: kinformer and client-go, each in its own process, in an
// order that alternates from pair to pair. Figures per side:
// peak/steady (the peak live heap during the relist over the steady-state
// live heap), peak-MB, steady-MB (live heaps), relist-ms, gc-cycles.
// cmd/benchtable -relist turns the output into the table of BENCHMARKS.md.
//
// It skips unless KINFORMER_BENCH_RELIST_MODES=1 (make bench-relist).
func BenchmarkRelistModes(b *testing.B) {
	if os.Getenv(relistModesEnv) != "1" {
		b.Skipf("long (about 15 minutes): run it with `make bench-relist`, or set %s=1", relistModesEnv)
	}
	pods := 50000
	if s := os.Getenv(relistPodsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q is not a number of pods", relistPodsEnv, s)
		}
		pods = n
	}
	base, err := NewPodSet(pods)
	if err != nil {
		b.Fatal(err)
	}
	for _, percent := range []int{1, 10, 100} {
		next, changed, err := base.Change(percent)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range relistModes {
			b.Run(fmt.Sprintf("%s/changed=%d%%", mode.name, percent), func(b *testing.B) {
				srv, err := NewPodAPI(base, mode.paging)
				if err != nil {
					b.Fatal(err)
				}
				defer srv.Close()
				samples := figureSamples{}
				for range b.N {
					pair, err := runRelistPair(srv, mode, base, next, changed)
					if err != nil {
						b.Fatal(err)
					}
					for _, side := range pair.order {
						r := pair.results[side]
						samples.add(side, "peak/steady", float64(r.Peak)/float64(r.Steady))
						samples.add(side, "peak-MB", float64(r.Peak)/bytesPerMiB)
						samples.add(side, "steady-MB", float64(r.Steady)/bytesPerMiB)
						samples.add(side, "relist-ms", float64(r.RelistNanos)/1e6)
						samples.add(side, "gc-cycles", float64(r.Cycles))
						b.Logf("%s: steady %.1f MB, peak %.1f MB (%.3f×), relist %.0f ms, %d GC cycles (%d unseen), sync %.0f ms",
							side, float64(r.Steady)/bytesPerMiB, float64(r.Peak)/bytesPerMiB, float64(r.Peak)/float64(r.Steady),
							float64(r.RelistNanos)/1e6, r.Cycles, r.Unseen, float64(r.SyncNanos)/1e6)
					}
				}
				samples.report(b)
			})
		}
	}
}

// relistPairRound alternates which side of a pair runs first.
var relistPairRound atomic.Int64

// relistPair is the outcome of one pair of runs.
type relistPair struct {
	order   []string
	results map[string]relistSideResult
}

// runRelistPair runs both sides once against srv, relisting from base to
// next (changed pods changed).
func runRelistPair(srv *PodAPI, mode relistMode, base, next *PodSet, changed int) (relistPair, error) {
	p := relistPair{order: []string{SideKinformer, SideClientGo}, results: map[string]relistSideResult{}}
	if relistPairRound.Add(1)%2 == 0 {
		p.order[0], p.order[1] = p.order[1], p.order[0]
	}
	for _, side := range p.order {
		r, err := runRelistSide(srv, mode, side, base, next, changed)
		if err != nil {
			return p, fmt.Errorf("%s side, mode %s: %w", side, mode.name, err)
		}
		p.results[side] = r
	}
	return p, nil
}

// runRelistSide runs one side in a child process (the harness of
// child_test.go, scenario childRelistModes; see the top of this file) and
// checks that its lists went through mode's requests. When the child is
// ready, it waits for the child's watch and expires the server's versions
// (moving it to next).
func runRelistSide(srv *PodAPI, mode relistMode, side string, base, next *PodSet, changed int) (relistSideResult, error) {
	srv.Reset(base)
	spec := childSpec{Scenario: childRelistModes, Side: side, URL: srv.URL(), Pods: base.Len(), BaseRV: base.ResourceVersion(), Changed: changed}
	var sync PodAPIRequests
	onReady := func() error {
		sync = srv.Requests()
		if err := relistWaitWatch(srv); err != nil {
			return err
		}
		return srv.Expire(next)
	}
	var res relistSideResult
	env := []string{"KUBE_FEATURE_WatchListClient=" + strconv.FormatBool(mode.watchList)}
	if err := runChild(spec, env, onReady, &res); err != nil {
		return res, err
	}
	relist := srv.Requests().Sub(sync)
	return res, errors.Join(mode.check("initial list", base.Len(), sync), mode.check("relist", base.Len(), relist))
}

// relistWaitWatch waits until srv has an open watch.
func relistWaitWatch(srv *PodAPI) error {
	deadline := time.After(relistTimeout)
	for {
		n, opened := srv.OpenWatches()
		if n > 0 {
			return nil
		}
		select {
		case <-opened:
		case <-deadline:
			return errors.New("the child reported ready without an open watch")
		}
	}
}

// relistInformer is one side's pod informer, built but not running.
type relistInformer struct {
	run  func(ctx context.Context)
	list func() []interface{}
}

func newRelistInformer(side string, cs kubernetes.Interface, h *countingHandler) (relistInformer, error) {
	switch side {
	case SideKinformer:
		inf := informers.NewSharedInformerFactory(cs, 0).Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(h); err != nil {
			return relistInformer{}, err
		}
		return relistInformer{run: inf.RunWithContext, list: inf.GetIndexer().List}, nil
	case SideClientGo:
		inf := clientinformers.NewSharedInformerFactory(cs, 0).Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(h); err != nil {
			return relistInformer{}, err
		}
		return relistInformer{run: inf.RunWithContext, list: inf.GetIndexer().List}, nil
	}
	return relistInformer{}, fmt.Errorf("unknown side %q", side)
}

// relistModesChild runs one side in its child process: sync, steady heap,
// ready, relist, result (see the top of this file).
func relistModesChild(s childSpec, ready func() error) (any, error) {
	var res relistSideResult
	log := &requestLog{changed: make(chan struct{})}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, QPS: -1, WrapTransport: log.wrap})
	if err != nil {
		return res, err
	}
	h := &countingHandler{}
	synced := h.arm(s.Pods)
	inf, err := newRelistInformer(s.Side, cs, h)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	start := time.Now()
	wg.Go(func() { inf.run(ctx) })
	if err := relistWait(synced, "initial sync", h); err != nil {
		return res, err
	}
	res.SyncNanos = time.Since(start).Nanoseconds()
	if err := log.waitWatching(); err != nil {
		return res, err
	}

	res.Steady = steadyLiveHeap()
	relisted := h.arm(s.Pods)
	mark := log.len()
	heap := StartLiveHeapWatch(time.Millisecond)
	if err := ready(); err != nil {
		return res, err
	}
	if err := relistWait(relisted, "relist", h); err != nil {
		return res, err
	}
	end := time.Now()
	runtime.GC()
	peak := heap.Stop()
	res.Peak, res.Cycles, res.Unseen = peak.Peak, peak.Cycles, peak.Unseen
	first, ok := log.firstListSince(mark)
	if !ok {
		return res, errors.New("no LIST or streaming WATCH request after the expiry")
	}
	res.RelistNanos = end.Sub(first).Nanoseconds()
	return res, relistCheckCache(inf.list(), s)
}

func relistWait(done <-chan struct{}, what string, h *countingHandler) error {
	select {
	case <-done:
		return nil
	case <-time.After(relistTimeout):
		return fmt.Errorf("%s: the handler saw %d of %d notifications", what, h.seen.Load(), h.goal.Load())
	}
}

// steadyLiveHeap returns the highest live heap over two forced GC cycles.
func steadyLiveHeap() uint64 {
	var live uint64
	for range 2 {
		runtime.GC()
		_, l := readGCLive()
		live = max(live, l)
	}
	return live
}

// relistCheckCache checks that the cache holds the relisted state: every
// pod, the changed ones (newer than s.BaseRV) with the changed annotation.
func relistCheckCache(objs []interface{}, s childSpec) error {
	if len(objs) != s.Pods {
		return fmt.Errorf("the cache holds %d pods after the relist, want %d", len(objs), s.Pods)
	}
	changed := 0
	for _, obj := range objs {
		pod, ok := obj.(*v1.Pod)
		if !ok {
			return fmt.Errorf("the cache holds a %T", obj)
		}
		rv, err := strconv.Atoi(pod.ResourceVersion)
		if err != nil {
			return fmt.Errorf("pod %s/%s: resourceVersion %q", pod.Namespace, pod.Name, pod.ResourceVersion)
		}
		if rv > s.BaseRV {
			changed++
			if got := pod.Annotations[PodSetChangedAnnotation]; got != PodSetChangedValue {
				return fmt.Errorf("changed pod %s/%s: annotation %q", pod.Namespace, pod.Name, got)
			}
		}
	}
	if changed != s.Changed {
		return fmt.Errorf("the cache holds %d changed pods after the relist, want %d", changed, s.Changed)
	}
	return nil
}

// requestLog records the pod requests a clientset sends. Safe for
// concurrent use.
type requestLog struct {
	mu       sync.Mutex
	requests []loggedRequest
	changed  chan struct{} // closed and replaced on every record
}

type loggedRequest struct {
	sent time.Time
	// list: a LIST or a streaming WATCH (sendInitialEvents=true); watch: a
	// WATCH of either kind. answered: the response headers came, 200 OK.
	list, watch, answered bool
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		watching := q.Get("watch") == "true" || q.Get("watch") == "1"
		r := loggedRequest{sent: time.Now(), watch: watching, list: !watching || q.Get("sendInitialEvents") == "true"}
		resp, err := rt.RoundTrip(req)
		r.answered = err == nil && resp.StatusCode == http.StatusOK
		l.mu.Lock()
		l.requests = append(l.requests, r)
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.requests)
}

// waitWatching waits until the newest request is an answered WATCH: the
// watch that goes on after the initial list is open.
func (l *requestLog) waitWatching() error {
	deadline := time.After(relistTimeout)
	for {
		l.mu.Lock()
		n := len(l.requests)
		ok := n > 0 && l.requests[n-1].watch && l.requests[n-1].answered
		changed := l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-deadline:
			return errors.New("no watch open after the initial list")
		}
	}
}

// firstListSince returns when the first LIST or streaming WATCH request
// from the mark-th request on was sent.
func (l *requestLog) firstListSince(mark int) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, r := range l.requests[mark:] {
		if r.list && (first.IsZero() || r.sent.Before(first)) {
			first = r.sent
		}
	}
	return first, !first.IsZero()
}

// TestRelistModesSides runs one pair of BenchmarkRelistModes per list mode
// on a few pods, checking that both sides relist through the mode's
// requests into the changed state and report plausible figures.
func TestRelistModesSides(t *testing.T) {
	base, err := NewPodSet(1200)
	if err != nil {
		t.Fatal(err)
	}
	next, changed, err := base.Change(10)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range relistModes {
		t.Run(mode.name, func(t *testing.T) {
			srv, err := NewPodAPI(base, mode.paging)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			pair, err := runRelistPair(srv, mode, base, next, changed)
			if err != nil {
				t.Fatal(err)
			}
			for side, r := range pair.results {
				t.Logf("%s: %+v", side, r)
				if r.Steady == 0 || r.Peak == 0 || r.Cycles == 0 || r.RelistNanos <= 0 || r.SyncNanos <= 0 {
					t.Errorf("%s: implausible result %+v", side, r)
				}
			}
		})
	}
}
