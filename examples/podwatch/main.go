// Command podwatch is a live view of pods in the spirit of `kubectl get pods -A -w`, built on
// kinformer's shared informer, lister and a custom index.
//
// It prints a progress line while the informer's initial list syncs and the sync time when it
// is done, then the table (NAMESPACE, NAME, READY, STATUS, RESTARTS, AGE, NODE, computed the
// way kubectl's printer does), then one line per event (ADDED / MODIFIED / DELETED) and, every
// few seconds, a summary read from the lister and from two custom indices: pods per node and
// pods per phase.
//
// With no flags and no kubeconfig it runs on an embedded cluster inside the process (client-go's
// fake clientset, driven by a workload generator that creates, advances, reschedules and
// deletes pods). With --kubeconfig, $KUBECONFIG or an in-cluster service account it watches a
// real cluster, read-only. With --local-apiserver it starts the project's own etcd and
// kube-apiserver on 127.0.0.1 and runs the same workload generator through the real API.
//
// It runs until interrupted, or for --duration. With --writes N the generator instead makes N
// writes, each once the informer has caught up with the one before (its cache and this
// program's event handler hold every pod as last written), and podwatch stops once it has
// caught up with the last: the events printed then depend only on --seed, --pods and
// --writes, however loaded the machine (the examples' tests use this).
//
//	go run ./examples/podwatch --duration 20s            # embedded cluster
//	go run ./examples/podwatch --writes 200              # embedded cluster, 200 writes, then stop
//	go run ./examples/podwatch --local-apiserver         # real kube-apiserver on 127.0.0.1
//	go run ./examples/podwatch --kubeconfig ~/.kube/config [--context prod]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/examples/internal/democluster"
	"github.com/kinformer/kinformer/examples/internal/kubeconfig"
	"github.com/kinformer/kinformer/examples/internal/localcluster"
	"github.com/kinformer/kinformer/informers"
)

// Names of the custom indices.
const (
	byNode  = "node"
	byPhase = "phase"
)

// errUsage marks a command-line error; main exits 2 on it.
var errUsage = errors.New("usage error")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "podwatch:", err)
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	pods       int
	rate       float64
	duration   time.Duration
	writes     int
	summary    time.Duration
	kubeconfig string
	context    string
	namespace  string
	embedded   bool
	local      bool
	seed       uint64
	timeout    time.Duration
}

// parseFlags parses args; on a bad flag it prints the usage to stderr and returns errUsage.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("podwatch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.pods, "pods", 30, "embedded cluster and local-apiserver: number of pods to create before the informer starts (and to keep around)")
	fs.Float64Var(&o.rate, "rate", 10, "embedded cluster and local-apiserver: writes per second made by the workload generator")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: run until interrupted)")
	fs.IntVar(&o.writes, "writes", 0, "embedded cluster and local-apiserver: make this many writes, each once the informer has caught up with the last, then stop once it has caught up (0: write until stopped)")
	fs.DurationVar(&o.summary, "summary-every", 5*time.Second, "interval between summaries read from the lister and indices")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "watch the cluster of this kubeconfig's current context (default $KUBECONFIG, then in-cluster, then the embedded cluster)")
	fs.StringVar(&o.context, "context", "", "real cluster: use this kubeconfig context instead of the current one")
	fs.BoolVar(&o.local, "local-apiserver", false, "start the project's own etcd and kube-apiserver on 127.0.0.1 and run the workload generator through the real API")
	fs.StringVar(&o.namespace, "namespace", "", "real cluster: watch only this namespace (default all)")
	fs.BoolVar(&o.embedded, "embedded", false, "use the embedded cluster even when $KUBECONFIG is set")
	fs.Uint64Var(&o.seed, "seed", 1, "embedded cluster: seed of the workload generator")
	fs.DurationVar(&o.timeout, "connect-timeout", 5*time.Second, "real cluster: give up if the API server does not answer within this long")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: podwatch [flags]\n\nA live view of pods (kubectl get pods -A -w) on kinformer's informer.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, errUsage
		}
		return o, errUsage
	}
	bad := func(format string, a ...any) (options, error) {
		fmt.Fprintf(stderr, "podwatch: "+format+"\n", a...)
		fs.Usage()
		return o, errUsage
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	case o.pods < 0:
		return bad("--pods must be >= 0, got %d", o.pods)
	case o.rate <= 0 || o.rate > 5000:
		return bad("--rate must be in (0, 5000], got %v", o.rate)
	case o.duration < 0:
		return bad("--duration must be >= 0, got %v", o.duration)
	case o.writes < 0:
		return bad("--writes must be >= 0, got %d", o.writes)
	case o.writes > 0 && o.namespace != "":
		return bad("--writes excludes --namespace: it waits for the pods of every namespace")
	case o.summary <= 0:
		return bad("--summary-every must be positive, got %v", o.summary)
	case o.timeout <= 0:
		return bad("--connect-timeout must be positive, got %v", o.timeout)
	case o.embedded && (o.kubeconfig != "" || o.context != ""):
		return bad("--embedded excludes --kubeconfig and --context")
	case o.local && (o.embedded || o.kubeconfig != "" || o.context != ""):
		return bad("--local-apiserver excludes --embedded, --kubeconfig and --context")
	}
	return o, nil
}

// run is the whole program; it returns when ctx is done or --duration has passed, after every
// goroutine it started has stopped.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	out := &printer{w: stdout}

	var client kubernetes.Interface
	var cluster *democluster.Cluster
	var cfg *rest.Config
	var source string
	if !o.local && !o.embedded {
		cfg, source, err = kubeconfig.Resolve(o.kubeconfig, o.context)
	}
	switch {
	case o.local:
		out.printf("cluster: starting a local etcd and kube-apiserver...\n")
		env, startErr := localcluster.Start(ctx, stderr)
		if startErr != nil {
			return startErr
		}
		defer env.Stop()
		client = env.Clientset()
		if cluster, err = democluster.NewOnServer(ctx, client, o.pods, o.seed); err != nil {
			return fmt.Errorf("workload generator: %w", err)
		}
		out.printf("cluster: local kube-apiserver at %s (%d pods, %.4g writes/s through the API)\n", env.Config().Host, o.pods, o.rate)
	case o.embedded || errors.Is(err, kubeconfig.ErrNoCluster):
		cluster = democluster.New(o.pods, o.seed)
		client = cluster.Client
		out.printf("cluster: embedded (fake clientset, %d pods, %.4g writes/s)\n", o.pods, o.rate)
	case err != nil:
		return err
	case o.writes > 0:
		return fmt.Errorf("--writes needs a cluster the workload generator writes to: the embedded one or --local-apiserver, not %s", cfg.Host)
	default:
		version, err := kubeconfig.Probe(cfg, o.timeout)
		if err != nil {
			return err
		}
		if client, err = kubernetes.NewForConfig(cfg); err != nil {
			return fmt.Errorf("client for %s: %w", cfg.Host, err)
		}
		out.printf("cluster: %s (%s, server %s), read-only\n", cfg.Host, source, version)
	}

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(o.namespace))
	podInformer := factory.Core().V1().Pods()
	informer := podInformer.Informer()
	if err := informer.AddIndexers(cache.Indexers{byNode: nodeIndex, byPhase: phaseIndex}); err != nil {
		return fmt.Errorf("add indexers: %w", err)
	}
	lister := podInformer.Lister()

	var initial atomic.Int64
	var seen *handled // for --writes only: a second copy of the cache otherwise not needed
	if o.writes > 0 {
		seen = newHandled()
	}
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if isInInitialList {
				initial.Add(1)
			} else if pod, ok := obj.(*corev1.Pod); ok {
				out.event("ADDED", pod)
			}
			seen.record(out, obj, false)
		},
		UpdateFunc: func(_, obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				out.event("MODIFIED", pod)
			}
			seen.record(out, obj, false)
		},
		DeleteFunc: func(obj any) {
			// A delete missed while the watch was down arrives wrapped, with the last
			// state the cache knew.
			pod := obj
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				pod = tomb.Obj
			}
			if pod, ok := pod.(*corev1.Pod); ok {
				out.event("DELETED", pod)
			}
			seen.record(out, obj, true)
		},
	})
	if err != nil {
		return fmt.Errorf("add event handler: %w", err)
	}

	start := time.Now()
	factory.StartWithContext(ctx)
	// Shutdown waits for the informer's goroutines; they stop once ctx is cancelled, which
	// the deferred cancel above does first (defers run last-in first-out).
	defer factory.Shutdown()
	defer cancel()

	out.printf("syncing: listing pods...\n")
	progress := time.NewTicker(250 * time.Millisecond)
	for !informer.HasSynced() || !reg.HasSynced() {
		select {
		case <-ctx.Done():
			progress.Stop()
			out.printf("stopped before the initial list synced (%d pods received in %s)\n", initial.Load(), roundDur(time.Since(start)))
			return nil
		case <-progress.C:
			out.printf("syncing: %d pods received, %s elapsed\n", initial.Load(), roundDur(time.Since(start)))
		case <-time.After(5 * time.Millisecond):
		}
	}
	progress.Stop()
	out.printf("synced %d pods in %s\n", initial.Load(), roundDur(time.Since(start)))

	pods, err := lister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list from cache: %w", err)
	}
	out.table(pods)

	var wg sync.WaitGroup
	genErr := make(chan error, 1)
	if cluster != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-cluster.Watching():
			case <-ctx.Done():
				genErr <- nil
				return
			}
			run := democluster.RunOptions{Rate: o.rate, Writes: o.writes}
			if o.writes > 0 {
				// Each write waits until the cache and the handler hold every earlier one.
				run.WaitCaughtUp = func(ctx context.Context) error {
					return democluster.WaitFor(ctx, seen.changed, func() bool {
						return cluster.Diff(informer.GetIndexer()) == "" && cluster.Diff(seen) == ""
					})
				}
			}
			genErr <- cluster.RunWith(ctx, run)
		}()
	}

	summary := time.NewTicker(o.summary)
	defer summary.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-summary.C:
			out.summary(informer.GetIndexer())
		case err := <-genErr:
			if err != nil {
				cancel()
				wg.Wait()
				return fmt.Errorf("workload generator: %w", err)
			}
			if o.writes > 0 && ctx.Err() == nil {
				out.printf("caught up: the cache and the event handler hold all %d writes\n", o.writes)
				done = true
			}
		}
	}
	cancel()
	wg.Wait()
	out.summary(informer.GetIndexer())
	a, m, d := out.counts()
	out.printf("stopped after %s: %d added, %d modified, %d deleted\n", roundDur(time.Since(start)), a, m, d)
	return nil
}

// handled is what the event handler was last handed for each pod, keyed namespace/name (a
// pod it was told is deleted is absent). --writes compares it with what the workload
// generator wrote, so podwatch stops only once every event is printed.
type handled struct {
	cache.Store

	// changed receives a value, without blocking, after every change.
	changed chan struct{}
}

func newHandled() *handled {
	return &handled{
		Store:   cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc),
		changed: make(chan struct{}, 1),
	}
}

// record stores obj as the latest state of its pod, or removes the pod when deleted (obj may
// then be a cache.DeletedFinalStateUnknown), and signals the change. A key error is printed.
// On a nil *handled it does nothing.
func (h *handled) record(out *printer, obj any, deleted bool) {
	if h == nil {
		return
	}
	var err error
	if deleted {
		err = h.Delete(obj)
	} else {
		err = h.Update(obj)
	}
	if err != nil {
		out.printf("cannot record %T: %v\n", obj, err)
	}
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// nodeIndex indexes pods by the node they are bound to ("<none>" when unscheduled).
func nodeIndex(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("node index: want *v1.Pod, got %T", obj)
	}
	if pod.Spec.NodeName == "" {
		return []string{"<none>"}, nil
	}
	return []string{pod.Spec.NodeName}, nil
}

// phaseIndex indexes pods by their phase.
func phaseIndex(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("phase index: want *v1.Pod, got %T", obj)
	}
	phase := string(pod.Status.Phase)
	if phase == "" {
		phase = "Unknown"
	}
	return []string{phase}, nil
}

// roundDur rounds d for display.
func roundDur(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// printer serialises the output of the event handler and the main loop.
type printer struct {
	mu                       sync.Mutex
	w                        io.Writer
	added, modified, deleted int
}

func (p *printer) printf(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, a...)
}

const rowFormat = "%-8s %-10s %-14s %-6s %-18s %-14s %-6s %s\n"

func (p *printer) writeRow(event string, pod *corev1.Pod, now time.Time) {
	r := rowFor(pod, now)
	fmt.Fprintf(p.w, rowFormat, event, pod.Namespace, r.Name, r.Ready, r.Status, r.Restarts, r.Age, r.Node)
}

// table prints pods sorted by namespace and name, under a header.
func (p *printer) table(pods []*corev1.Pod) {
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, rowFormat, "EVENT", "NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "NODE")
	now := time.Now()
	for _, pod := range pods {
		p.writeRow("", pod, now)
	}
}

// event prints one event line.
func (p *printer) event(kind string, pod *corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch kind {
	case "ADDED":
		p.added++
	case "MODIFIED":
		p.modified++
	case "DELETED":
		p.deleted++
	}
	p.writeRow(kind, pod, time.Now())
}

func (p *printer) counts() (added, modified, deleted int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.added, p.modified, p.deleted
}

// summary prints the pod count and the per-node and per-phase counts read from the indices.
func (p *printer) summary(indexer cache.Indexer) {
	perNode := countsByIndex(indexer, byNode)
	perPhase := countsByIndex(indexer, byPhase)
	p.printf("--- summary: %d pods | per node: %s | per phase: %s\n", len(indexer.ListKeys()), perNode, perPhase)
}

// countsByIndex renders "value=count" for every value of the named index, sorted by value.
func countsByIndex(indexer cache.Indexer, index string) string {
	values := indexer.ListIndexFuncValues(index)
	slices.Sort(values)
	parts := make([]string, 0, len(values))
	for _, v := range values {
		keys, err := indexer.IndexKeys(index, v)
		if err != nil || len(keys) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%d", v, len(keys)))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
