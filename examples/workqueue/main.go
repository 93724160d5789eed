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
	workers := fs.Int("workers", 2, "number of workers reconciling keys")
	kubeconfigPath := fs.String("kubeconfig", "", "watch the cluster of this kubeconfig (default $KUBECONFIG, then in-cluster, then the embedded cluster)")
	embedded := fs.Bool("embedded", false, "use the embedded cluster even when $KUBECONFIG is set")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 || *pods < 0 || *rate <= 0 || *duration < 0 || *workers < 1 {
		fmt.Fprintln(stderr, "workqueue: need --pods >= 0, --rate > 0, --duration >= 0, --workers >= 1 and no arguments")
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
		cluster = democluster.New(*pods, 7)
		client = cluster.Client
	case err != nil:
		return err
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
			if err := cluster.Run(ctx, *rate); err != nil {
				c.printf("workload generator: %v\n", err)
				cancel()
			}
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
	err := c.reconcile(ctx, key)
	switch {
	case err == nil:
		c.queue.Forget(key)
	case c.queue.NumRequeues(key) < maxRetries:
		c.retried.Add(1)
		c.printf("retry   %s (attempt %d): %v\n", key, c.queue.NumRequeues(key)+1, err)
		c.queue.AddRateLimited(key)
	default:
		c.dropped.Add(1)
		c.printf("drop    %s after %d retries: %v\n", key, maxRetries, err)
		c.queue.Forget(key)
	}
	return true
}

// reconcile brings the world in line with the cached state of key. Here it only reports;
// a pod in CrashLoopBackOff fails its first attempts, to show retries with backoff.
func (c *controller) reconcile(_ context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pod, err := c.lister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.deleted.Add(1)
		c.printf("deleted %s: cleaning up\n", key)
		return nil
	}
	if err != nil {
		return err
	}
	if crashLooping(pod) && c.queue.NumRequeues(key) < 2 {
		return fmt.Errorf("pod %s is crash-looping", key)
	}
	c.reconciled.Add(1)
	c.printf("synced  %s: phase %s on %q\n", key, pod.Status.Phase, pod.Spec.NodeName)
	return nil
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
