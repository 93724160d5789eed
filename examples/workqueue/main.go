// Command workqueue is the canonical controller pattern on kinformer: a shared pod informer
// feeds keys into client-go's typed rate-limited work queue, and workers reconcile each key
// against the informer's lister.
//
// It shows: enqueueing by key with cache.DeletionHandlingMetaNamespaceKeyFunc, so deletes
// missed while the watch was down (cache.DeletedFinalStateUnknown) still reach the workers;
// waiting with cache.WaitForCacheSync on both the informer's and the handler's HasSynced
// before the workers start; retries with per-item backoff and a retry limit; and graceful
// shutdown on SIGINT/SIGTERM or after --duration: the informer stops, the queue drains, the
// workers return, and only then does the program exit.
//
// With no flags it runs on an embedded cluster (client-go's fake clientset with a workload
// generator); --kubeconfig or $KUBECONFIG watch a real cluster, read-only.
//
// With --writes N the generator makes N writes, each only once the controller has settled
// (every write so far is in the cache and reconciled, and nothing is queued, in flight or
// waiting for a retry), and the program shuts down once it has settled after the last: every
// state a pod passes through is reconciled, so the output depends only on --seed, --pods and
// --writes, however loaded the machine (the examples' tests use this).
//
//	go run ./examples/workqueue --duration 20s
//	go run ./examples/workqueue --writes 100
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/examples/internal/democluster"
	"github.com/kinformer/kinformer/examples/internal/kubeconfig"
	"github.com/kinformer/kinformer/informers"
	listerscorev1 "github.com/kinformer/kinformer/listers/core/v1"
)

// maxRetries is how often a failing key is retried before it is dropped.
const maxRetries = 3

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var usage usageError
	switch {
	case errors.As(err, &usage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "workqueue:", err)
		os.Exit(1)
	}
}

// usageError marks a command-line error; main exits 2 on it.
type usageError struct{ error }

// run is the whole program; it returns after every goroutine it started has stopped.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("workqueue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pods := fs.Int("pods", 20, "embedded cluster: number of pods to start with")
	rate := fs.Float64("rate", 10, "embedded cluster: writes per second made by the workload generator")
	duration := fs.Duration("duration", 0, "stop after this long (0: run until interrupted)")
	writes := fs.Int("writes", 0, "embedded cluster: make this many writes, each once the controller has settled, then shut down once it has settled (0: write until stopped)")
	seed := fs.Uint64("seed", 7, "embedded cluster: seed of the workload generator")
	workers := fs.Int("workers", 2, "number of workers reconciling keys")
	kubeconfigPath := fs.String("kubeconfig", "", "watch the cluster of this kubeconfig (default $KUBECONFIG, then in-cluster, then the embedded cluster)")
	embedded := fs.Bool("embedded", false, "use the embedded cluster even when $KUBECONFIG is set")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 || *pods < 0 || *rate <= 0 || *duration < 0 || *writes < 0 || *workers < 1 {
		fmt.Fprintln(stderr, "workqueue: need --pods >= 0, --rate > 0, --duration >= 0, --writes >= 0, --workers >= 1 and no arguments")
		fs.Usage()
		return usageError{errors.New("bad flags")}
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var client kubernetes.Interface
	var cluster *democluster.Cluster
	cfg, _, err := kubeconfig.Resolve(*kubeconfigPath, "")
	switch {
	case *embedded || errors.Is(err, kubeconfig.ErrNoCluster):
		cluster = democluster.New(*pods, *seed)
		client = cluster.Client
	case err != nil:
		return err
	case *writes > 0:
		return fmt.Errorf("--writes needs the embedded cluster, not %s", cfg.Host)
	default:
		if _, err := kubeconfig.Probe(cfg, 5*time.Second); err != nil {
			return err
		}
		if client, err = kubernetes.NewForConfig(cfg); err != nil {
			return err
		}
	}

	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods()
	c := &controller{
		out:    stdout,
		lister: podInformer.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"}),
	}
	if *writes > 0 {
		c.finished = newFinishedWork()
	}
	reg, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		// obj may be a cache.DeletedFinalStateUnknown: the key function unwraps it.
		DeleteFunc: c.enqueue,
	})
	if err != nil {
		return fmt.Errorf("add event handler: %w", err)
	}

	factory.StartWithContext(ctx)
	defer factory.Shutdown()
	defer cancel() // runs before Shutdown, which waits for the informer to stop

	// The informer's HasSynced says its cache holds the initial list; the registration's
	// HasSynced says this handler has also been handed every object of it.
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced, reg.HasSynced) {
		c.queue.ShutDown()
		return errors.New("caches did not sync before shutdown")
	}
	c.printf("caches synced: %d keys queued from the initial list\n", c.queue.Len())

	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNextItem(ctx) {
			}
		}()
	}
	if cluster != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-cluster.Watching():
			case <-ctx.Done():
				return
			}
			run := democluster.RunOptions{Rate: *rate, Writes: *writes}
			if *writes > 0 {
				// Each write, and the shutdown after the last, waits until the controller has
				// settled.
				run.WaitCaughtUp = func(ctx context.Context) error {
					return democluster.WaitFor(ctx, c.finished.changed, func() bool {
						return cluster.Diff(podInformer.Informer().GetIndexer()) == "" && c.finished.settled(cluster)
					})
				}
			}
			err := cluster.RunWith(ctx, run)
			switch {
			case err != nil:
				c.printf("workload generator: %v\n", err)
			case *writes > 0 && ctx.Err() == nil:
				c.printf("settled: all %d writes reconciled\n", *writes)
			}
			cancel()
		}()
	}

	<-ctx.Done()
	c.printf("shutting down: draining the queue\n")
	c.queue.ShutDownWithDrain()
	wg.Wait()
	c.printf("stopped: %d reconciled, %d seen deleted, %d retried, %d dropped\n",
		c.reconciled.Load(), c.deleted.Load(), c.retried.Load(), c.dropped.Load())
	return nil
}

// controller reconciles pods by key. Its methods are safe for concurrent use.
type controller struct {
	mu     sync.Mutex // serialises output
	out    io.Writer
	lister listerscorev1.PodLister
	queue  workqueue.TypedRateLimitingInterface[string]

	// finished is set for --writes only: it records what the workers are done with.
	finished *finishedWork

	reconciled, deleted, retried, dropped atomic.Int64
}

func (c *controller) printf(format string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.out, format, a...)
}

// enqueue adds obj's key to the queue; the queue collapses repeated keys.
func (c *controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		c.printf("cannot key %T: %v\n", obj, err)
		return
	}
	c.queue.Add(key)
}

// processNextItem reconciles one key; it returns false once the queue is shut down and empty.
func (c *controller) processNextItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	pod, err := c.reconcile(ctx, key)
	switch {
	case err == nil:
		c.queue.Forget(key)
		c.finished.done(key, pod)
	case c.queue.NumRequeues(key) < maxRetries:
		c.retried.Add(1)
		c.printf("retry   %s (attempt %d): %v\n", key, c.queue.NumRequeues(key)+1, err)
		c.finished.retrying(key)
		c.queue.AddRateLimited(key)
	default:
		c.dropped.Add(1)
		c.printf("drop    %s after %d retries: %v\n", key, maxRetries, err)
		c.queue.Forget(key)
		c.finished.done(key, pod)
	}
	return true
}

// reconcile brings the world in line with the cached state of key, and returns the state it
// read: the pod, or nil when the pod is gone. Here it only reports; a pod in CrashLoopBackOff
// fails its first attempts, to show retries with backoff.
func (c *controller) reconcile(_ context.Context, key string) (*corev1.Pod, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, err
	}
	pod, err := c.lister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.deleted.Add(1)
		c.printf("deleted %s: cleaning up\n", key)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if crashLooping(pod) && c.queue.NumRequeues(key) < 2 {
		return pod, fmt.Errorf("pod %s is crash-looping", key)
	}
	c.reconciled.Add(1)
	c.printf("synced  %s: phase %s on %q\n", key, pod.Status.Phase, pod.Spec.NodeName)
	return pod, nil
}

// crashLooping reports whether a container of pod waits in CrashLoopBackOff.
func crashLooping(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
			return true
		}
	}
	return false
}

// finishedWork records, for --writes, the state of each key the workers last finished with
// (reconciled, seen deleted or dropped) and the keys waiting for a retry, so the workload
// generator can wait until the controller has settled. Its methods are safe for concurrent
// use; done and retrying do nothing on a nil *finishedWork.
type finishedWork struct {
	mu      sync.Mutex
	pods    podsByKey       // key → the pod last finished with; absent once seen deleted
	waiting map[string]bool // keys handed to AddRateLimited and not finished since

	// changed receives a value, without blocking, after every change.
	changed chan struct{}
}

func newFinishedWork() *finishedWork {
	return &finishedWork{pods: podsByKey{}, waiting: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// done records that a worker finished with key, having read pod (nil: the pod is gone).
func (f *finishedWork) done(key string, pod *corev1.Pod) {
	if f == nil {
		return
	}
	f.mu.Lock()
	if pod == nil {
		delete(f.pods, key)
	} else {
		f.pods[key] = pod
	}
	delete(f.waiting, key)
	f.mu.Unlock()
	f.signal()
}

// retrying records that key goes back to the queue after a backoff.
func (f *finishedWork) retrying(key string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.waiting[key] = true
	f.mu.Unlock()
	f.signal()
}

func (f *finishedWork) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// settled reports whether no key waits for a retry and the workers last finished with every
// pod in the state the generator last wrote it, and with every deleted pod once it was gone.
// When the generator makes a write only once this holds, the write is one event (on the
// embedded cluster) for one key that nothing else has in the queue, in flight or waiting, and
// every write changes its pod; so when this holds again, that key's work is finished too:
// nothing is queued, in flight or waiting for a retry. Call it only while the generator is
// not writing (from RunOptions.WaitCaughtUp).
func (f *finishedWork) settled(cluster *democluster.Cluster) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiting) == 0 && cluster.Diff(f.pods) == ""
}

// podsByKey is a democluster.Store over a map.
type podsByKey map[string]*corev1.Pod

// ListKeys returns the map's keys.
func (m podsByKey) ListKeys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// GetByKey returns the pod stored under key.
func (m podsByKey) GetByKey(key string) (any, bool, error) {
	p, ok := m[key]
	return p, ok, nil
}
