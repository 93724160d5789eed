// Command sharded runs the replicas of one controller in one process, each with its own
// clientset and identity, sharing the pods of a namespace through package sharding: every
// replica is a sharding.Member of one group (coordination.k8s.io/v1 Leases), and its informer
// factory, built with informers.WithMembership, keeps only the pods of the hash ranges its
// member holds, each range listed and watched with kube-apiserver's shard selector.
//
// It starts the project's own etcd and kube-apiserver on 127.0.0.1 with the
// ShardedListAndWatch feature gate on (see examples/internal/localcluster), creates --pods
// pods, starts --replicas replicas and prints which ranges each owns and how many pods its
// cache holds, then changes the group and prints the ranges again once they settled:
//
//  1. a new replica joins: it takes only the ranges it wins, listing only those;
//  2. replica-0 leaves cleanly: it releases its ranges, which others take at once;
//  3. replica-1 crashes (stops without releasing): its ranges move once their Leases
//     expired, a --lease-duration later; the handoff time is printed.
//
// Along the way each replica prints its range events as they happen (Acquired, Lost, ...) and
// the sync of every range its informer lists (sharding.RangeSyncHandler).
//
// Ranges go to replicas by rendezvous hashing, which moves few ranges when a replica comes
// or goes but balances them only statistically: with 16 ranges and 3 replicas, one replica
// may own 4 ranges and another 7. More ranges balance better, at one list and one watch per
// range held.
//
//	go run ./examples/sharded                          # 3 replicas, 300 pods, 16 ranges
//	go run ./examples/sharded --replicas 4 --ranges 32 --key namespace
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
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/examples/internal/localcluster"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/testenv"
	corelisters "github.com/kinformer/kinformer/listers/core/v1"
	"github.com/kinformer/kinformer/sharding"
)

// The names the program gives things on the cluster.
const (
	namespace = "sharded-demo"
	group     = "pod-controller"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "sharded:", err)
		os.Exit(1)
	}
}

// options are the command line's settings.
type options struct {
	replicas, pods, ranges int
	key                    cache.ShardKey
	lease, renew, retry    time.Duration
	settle                 time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("sharded", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var key string
	fs.IntVar(&o.replicas, "replicas", 3, "replicas started first (at least 2: one leaves and one crashes)")
	fs.IntVar(&o.pods, "pods", 300, "pods created in namespace "+namespace)
	fs.IntVar(&o.ranges, "ranges", sharding.DefaultRanges, "ranges the hash space is cut into")
	fs.StringVar(&key, "key", "uid", "hashed field: uid or namespace")
	fs.DurationVar(&o.lease, "lease-duration", 3*time.Second, "Lease duration (whole seconds): how long a crashed replica's ranges stay unowned")
	fs.DurationVar(&o.renew, "renew-deadline", 2*time.Second, "how long after its last renewal a replica acts on its ranges")
	fs.DurationVar(&o.retry, "retry-period", 500*time.Millisecond, "time between two rounds of a member")
	fs.DurationVar(&o.settle, "settle-timeout", 2*time.Minute, "longest wait for the ranges to settle after a change")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch key {
	case "uid":
		o.key = cache.ShardByUID
	case "namespace":
		o.key = cache.ShardByNamespace
	default:
		return o, fmt.Errorf("--key %q: want uid or namespace", key)
	}
	if o.replicas < 2 {
		return o, fmt.Errorf("--replicas %d: want at least 2", o.replicas)
	}
	return o, nil
}

// printer serializes the replicas' lines.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	out := &printer{w: stdout}
	out.printf("cluster: starting a local etcd and kube-apiserver with the %s feature gate...\n", testenv.ShardedListAndWatchGate)
	env, err := localcluster.StartWithOptions(ctx, stderr, testenv.Options{FeatureGates: map[string]bool{testenv.ShardedListAndWatchGate: true}})
	if err != nil {
		return err
	}
	defer env.Stop()
	cfg := env.Config()
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := createPods(ctx, admin, o.pods); err != nil {
		return err
	}
	out.printf("cluster: local kube-apiserver at %s, %d pods in %s; group %q of %d ranges by %s, lease %v\n",
		cfg.Host, o.pods, namespace, group, o.ranges, o.key, o.lease)

	g := &replicas{o: o, cfg: cfg, out: out, ctx: ctx}
	defer g.stopAll()
	for i := range o.replicas {
		if err := g.start(fmt.Sprintf("replica-%d", i)); err != nil {
			return err
		}
	}
	if err := g.steady("started", o.pods); err != nil {
		return err
	}

	if err := g.start(fmt.Sprintf("replica-%d", o.replicas)); err != nil {
		return err
	}
	if err := g.steady("replica-"+fmt.Sprint(o.replicas)+" joined", o.pods); err != nil {
		return err
	}

	g.stop("replica-0")
	if err := g.steady("replica-0 left", o.pods); err != nil {
		return err
	}

	crashed := time.Now()
	g.stop("replica-1")
	if err := g.steady("replica-1 crashed", o.pods); err != nil {
		return err
	}
	out.printf("handoff after the crash: %v (the Leases expire %v after their last renewal)\n", time.Since(crashed).Round(10*time.Millisecond), o.lease)
	return nil
}

// createPods creates n pods in the demo namespace.
func createPods(ctx context.Context, cs kubernetes.Interface, n int) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if _, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", pod.Name, err)
		}
	}
	return nil
}

// replica is one replica of the controller: its own clientset, member, and informer factory.
type replica struct {
	id       string
	member   *sharding.Member
	factory  informers.SharedInformerFactory
	lister   corelisters.PodLister
	informer *sharding.Informer
	cancel   context.CancelFunc
	done     chan struct{} // closed once the member's Run returned
}

// replicas is the group as this program runs it.
type replicas struct {
	o   options
	cfg *rest.Config
	out *printer
	ctx context.Context

	live []*replica
}

// start starts replica id: a member of the group, and a factory whose pod informer keeps the
// ranges the member holds. replica-1 is built to crash: stopping it leaves its Leases behind.
func (g *replicas) start(id string) error {
	cs, err := kubernetes.NewForConfig(g.cfg)
	if err != nil {
		return err
	}
	m, err := sharding.NewMember(sharding.Config{
		Client: cs.CoordinationV1(), Namespace: namespace, Group: group, Identity: id, Ranges: g.o.ranges,
		LeaseDuration: g.o.lease, RenewDeadline: g.o.renew, RetryPeriod: g.o.retry,
		KeepLeasesOnStop: id == "replica-1",
	})
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithNamespace(namespace), informers.WithMembership(m, g.o.key))
	pods := factory.Core().V1().Pods()
	informer, ok := sharding.InformerOf(pods.Informer())
	if !ok {
		return fmt.Errorf("%s: the factory's pod informer is not sharded", id)
	}
	if _, err := pods.Informer().AddEventHandler(&rangeReporter{id: id, out: g.out}); err != nil {
		return err
	}
	m.AddRangeHandler(sharding.RangeHandlerFunc(func(e sharding.RangeEvent) {
		g.out.printf("  %s: range %d %s\n", id, e.Range.Index, strings.ToLower(string(e.Type)))
	}))
	ctx, cancel := context.WithCancel(g.ctx)
	r := &replica{id: id, member: m, factory: factory, lister: pods.Lister(), informer: informer, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = m.Run(ctx)
	}()
	factory.Start(ctx.Done())
	g.live = append(g.live, r)
	g.out.printf("%s: started\n", id)
	return nil
}

// stop stops replica id: its member leaves the group (or, for replica-1, crashes) and its
// factory shuts down.
func (g *replicas) stop(id string) {
	for i, r := range g.live {
		if r.id != id {
			continue
		}
		how := "leaving"
		if id == "replica-1" {
			how = "crashing"
		}
		g.out.printf("%s: %s\n", id, how)
		r.cancel()
		<-r.done
		r.factory.Shutdown()
		g.live = slices.Delete(g.live, i, i+1)
		return
	}
}

// stopAll stops every replica still running.
func (g *replicas) stopAll() {
	for len(g.live) > 0 {
		g.stop(g.live[0].id)
	}
}

// steady waits until the live replicas agree on the members, every range is acted on by
// exactly the live replica it is assigned to, every replica has synced every range it holds,
// and their caches hold the pods pods times in all with none twice; then it prints who owns
// what under the title what.
func (g *replicas) steady(what string, pods int) error {
	start := time.Now()
	problem := "not checked"
	for ; problem != ""; problem = g.problem(pods) {
		if time.Since(start) > g.o.settle {
			return fmt.Errorf("%s: the ranges did not settle within %v: %s", what, g.o.settle, problem)
		}
		select {
		case <-g.ctx.Done():
			return g.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	g.out.printf("--- %s: steady after %v, %d replicas\n", what, time.Since(start).Round(10*time.Millisecond), len(g.live))
	for _, r := range g.live {
		var held []string
		ignored := uint64(0)
		for _, st := range r.informer.RangeStatus() {
			held = append(held, fmt.Sprint(st.Range.Index))
			ignored += st.Status.ShardIgnored
		}
		cached, _ := r.lister.List(labels.Everything())
		line := fmt.Sprintf("%-10s owns ranges %-16s caches %d pods", r.id, strings.Join(held, ","), len(cached))
		if ignored > 0 {
			line += " (the server ignored the shard selector: degraded, every pod crossed the wire)"
		}
		g.out.printf("%s\n", line)
	}
	return nil
}

// problem says what keeps the group from being steady, or "" when it is.
func (g *replicas) problem(pods int) string {
	ids := make([]string, len(g.live))
	for i, r := range g.live {
		ids[i] = r.id
	}
	slices.Sort(ids)
	status := g.live[0].member.Status()
	for _, r := range g.live {
		if members := r.member.Status().Members; !slices.Equal(members, ids) {
			return fmt.Sprintf("%s sees members %v", r.id, members)
		}
	}
	for _, rg := range status.Ranges {
		var acting []string
		for _, r := range g.live {
			if r.member.Acting(rg.Range.Index) {
				acting = append(acting, r.id)
			}
		}
		if len(acting) != 1 || acting[0] != rg.Assigned {
			return fmt.Sprintf("range %d is acted on by %v, assigned to %s", rg.Range.Index, acting, rg.Assigned)
		}
	}
	seen := map[string]string{}
	for _, r := range g.live {
		for _, st := range r.informer.RangeStatus() {
			if !st.Synced {
				return fmt.Sprintf("%s has not synced range %d", r.id, st.Range.Index)
			}
		}
		cached, err := r.lister.List(labels.Everything())
		if err != nil {
			return err.Error()
		}
		for _, pod := range cached {
			if other, twice := seen[pod.Name]; twice {
				return fmt.Sprintf("pod %s is cached by %s and %s", pod.Name, other, r.id)
			}
			seen[pod.Name] = r.id
		}
	}
	if len(seen) != pods {
		return fmt.Sprintf("the caches hold %d pods of %d", len(seen), pods)
	}
	return ""
}

// rangeReporter is the replica's event handler: it ignores the pods' changes and prints the
// sync and the loss of each range (sharding.RangeSyncHandler).
type rangeReporter struct {
	cache.ResourceEventHandlerFuncs
	id  string
	out *printer
}

// OnRangeSynced prints that the range's initial list reached the handler.
func (h *rangeReporter) OnRangeSynced(r sharding.Range) {
	h.out.printf("  %s: range %d synced\n", h.id, r.Index)
}

// OnRangeLost prints that the range's pods left the cache, without delete notifications.
func (h *rangeReporter) OnRangeLost(r sharding.Range) {
	h.out.printf("  %s: range %d dropped from the cache\n", h.id, r.Index)
}
