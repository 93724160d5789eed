package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/sharding"
)

// The sharded scenario's names on its server.
const (
	// shardedNamespace holds the pods the replicas share.
	shardedNamespace = "bench-sharded"
	// shardedLeaseNamespace holds the groups' Leases and the barriers.
	shardedLeaseNamespace = "default"
)

// shardedAPIServer is the real etcd and kube-apiserver of BenchmarkShardedSync,
// with the ShardedListAndWatch gate on, started and filled with pods once per
// benchmark process and stopped by TestMain (as sharedAPIServer).
var shardedAPIServer struct {
	once sync.Once
	env  *testenv.Env
	pods int
	err  error
}

// stopShardedAPIServer stops BenchmarkShardedSync's server, if it was started.
func stopShardedAPIServer() {
	if shardedAPIServer.env != nil {
		shardedAPIServer.env.Stop()
	}
}

// shardedAPIServerEnv starts the gated server and creates pods pods in it, once.
func shardedAPIServerEnv(b *testing.B, pods int) *testenv.Env {
	b.Helper()
	if testenv.BinDir() == "" {
		b.Skipf("the sharded scenario needs a real etcd and kube-apiserver: run `make bench-sharding`, or build them with "+
			"internal/testenv/build.sh and set %s to the folder it prints", testenv.BinDirEnv)
	}
	shardedAPIServer.once.Do(func() {
		env, err := testenv.New(nil, testenv.Options{FeatureGates: map[string]bool{testenv.ShardedListAndWatchGate: true}})
		if err != nil {
			shardedAPIServer.err = fmt.Errorf("starting the API server: %w", err)
			return
		}
		shardedAPIServer.env = env
		start := time.Now()
		shardedAPIServer.err = CreatePods(env.Clientset(), shardedNamespace, pods)
		shardedAPIServer.pods = pods
		if shardedAPIServer.err == nil {
			b.Logf("sharded scenario: created %d pods in %v", pods, time.Since(start).Round(time.Millisecond))
		}
	})
	if shardedAPIServer.err != nil {
		b.Fatal(shardedAPIServer.err)
	}
	if shardedAPIServer.pods != pods {
		b.Fatalf("the API server holds %d pods, not %d", shardedAPIServer.pods, pods)
	}
	return shardedAPIServer.env
}

// shardedGroups numbers the groups of BenchmarkShardedSync's ops, so that each
// op starts a group of its own, free of an earlier op's Leases.
var shardedGroups atomic.Int64

// BenchmarkShardedSync is one controller's pods (2,000; 20,000 with
// KINFORMER_BENCH_FULL=1) split between 1, 2 and 4 replicas by dynamic
// membership (package sharding, with its default 16 ranges and Lease timings)
// on a real kube-apiserver with the ShardedListAndWatch gate on. Each replica
// is a child process of its own: a sharding.Member of the op's group and a
// typed factory with informers.WithMembership whose pod informer starts once
// the member sees all replicas and acts on exactly the ranges assigned to it
// (a controller whose group has settled), so that it lists its share only.
// Per replica, from the factory's start to its WaitForCacheSync: sync-ms,
// recv-MB (bytes read from the API server's connections, TLS included, the
// member's Lease requests of that time too), peaklive-MB and retained-MB
// (HeapPhase), cpu-ms; each reported as the mean over the replicas of an op
// ("/replica") and their maximum ("-max"), with share-max the largest
// fraction of the pods one replica caches (rendezvous hashing balances 16
// ranges only statistically). With 2 and 4 replicas, once all have synced,
// one replica stops without releasing its Leases (a crash, KeepLeasesOnStop)
// and handoff-ms is the time from then until every survivor acts on and has
// synced every range assigned to it among the survivors: the crashed
// member's Leases expire first (sharding.DefaultLeaseDuration, 15 s).
// Figures are medians over the ops of a result line: with -benchtime 1x
// (make bench-sharding) each line is one op.
func BenchmarkShardedSync(b *testing.B) {
	pods := sizeFor(2000, 20000)
	env := shardedAPIServerEnv(b, pods)
	cfg := env.Config()
	admin := env.Clientset()
	for _, replicas := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("replicas=%d/pods=%d", replicas, pods), func(b *testing.B) {
			samples := map[string][]float64{}
			for range b.N {
				op, err := runShardedOp(admin, cfg, replicas, pods)
				if err != nil {
					b.Fatal(err)
				}
				for k, v := range op {
					samples[k] = append(samples[k], v)
				}
			}
			for k, vs := range samples {
				b.ReportMetric(Median(vs), k)
			}
		})
	}
}

// runShardedOp runs one group of replicas, each in a child process, and
// returns the op's figures (see BenchmarkShardedSync).
func runShardedOp(admin kubernetes.Interface, cfg *rest.Config, replicas, pods int) (map[string]float64, error) {
	group := fmt.Sprintf("bench-%d-%d", replicas, shardedGroups.Add(1))
	var readied atomic.Int64
	var barrierErr error
	var barrierOnce sync.Once
	openBarrier := func() error {
		if int(readied.Add(1)) < replicas {
			return nil
		}
		barrierOnce.Do(func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: group}, Data: map[string]string{"go": "1"}}
			_, barrierErr = admin.CoreV1().ConfigMaps(shardedLeaseNamespace).Create(context.Background(), cm, metav1.CreateOptions{})
		})
		return barrierErr
	}
	results := make([]childFigures, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		spec := childSpec{
			Scenario: childSharded, Side: SideKinformer, Pods: pods,
			URL: cfg.Host, BearerToken: cfg.BearerToken, CAFile: cfg.CAFile,
			Group: group, Replica: i, Replicas: replicas,
		}
		wg.Go(func() { errs[i] = runChild(spec, nil, openBarrier, &results[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return shardedOpFigures(results, pods)
}

// shardedOpFigures aggregates one op's per-replica figures.
func shardedOpFigures(results []childFigures, pods int) (map[string]float64, error) {
	out := map[string]float64{}
	cached := 0.0
	for _, name := range []string{"sync-ms", "recv-MB", "peaklive-MB", "retained-MB", "cpu-ms"} {
		sum, most := 0.0, 0.0
		for _, r := range results {
			sum += r[name]
			most = max(most, r[name])
		}
		out[name+"/replica"] = sum / float64(len(results))
		out[name+"-max"] = most
	}
	share := 0.0
	for _, r := range results {
		cached += r["pods"]
		share = max(share, r["pods"]/float64(pods))
	}
	if int(cached) != pods {
		return nil, fmt.Errorf("the replicas cached %d pods in all, not %d", int(cached), pods)
	}
	out["share-max"] = share
	if len(results) > 1 {
		crashed := results[len(results)-1]["crashed-at-ms"]
		settled := 0.0
		for _, r := range results[:len(results)-1] {
			settled = max(settled, r["settled-at-ms"])
		}
		if crashed == 0 || settled < crashed {
			return nil, fmt.Errorf("no handoff measured: crashed at %v ms, settled at %v ms", crashed, settled)
		}
		out["handoff-ms"] = settled - crashed
	}
	return out, nil
}

// countingDialer dials TCP connections that count the bytes read from them.
type countingDialer struct {
	dialer net.Dialer
	read   atomic.Int64
}

func (d *countingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := d.dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, read: &d.read}, nil
}

// countingConn adds what it reads to *read.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// shardedChild is one replica of BenchmarkShardedSync: it joins the group,
// waits until it acts on exactly its ranges among all replicas, then
// measures its factory's sync, prints "ready", and waits for the barrier
// (the ConfigMap named after the group, created once every replica is
// ready). The last replica then crashes (stops without releasing its
// Leases) and reports when; the others report when they have settled
// among the survivors.
func shardedChild(s childSpec, ready func() error) (any, error) {
	dialer := &countingDialer{}
	cfg := &rest.Config{
		Host:            s.URL,
		BearerToken:     s.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: s.CAFile},
		QPS:             -1,
		Dial:            dialer.DialContext,
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	victim := s.Replicas > 1 && s.Replica == s.Replicas-1
	m, err := sharding.NewMember(sharding.Config{
		Client: cs.CoordinationV1(), Namespace: shardedLeaseNamespace, Group: s.Group,
		Identity: fmt.Sprintf("replica-%d", s.Replica), KeepLeasesOnStop: victim,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	memberDone := make(chan struct{})
	go func() {
		defer close(memberDone)
		_ = m.Run(ctx)
	}()
	defer func() {
		cancel()
		<-memberDone
	}()
	if err := waitFor(func() bool { return shardedSettled(m, nil, s.Replicas) }, "the group to settle"); err != nil {
		return nil, err
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithNamespace(shardedNamespace), informers.WithMembership(m, cache.ShardByUID))
	pods := factory.Core().V1().Pods()
	informer, ok := sharding.InformerOf(pods.Informer())
	if !ok {
		return nil, errors.New("the factory's pod informer is not sharded")
	}
	factoryCtx, stopFactory := context.WithCancel(ctx)
	defer func() {
		stopFactory()
		factory.Shutdown()
	}()
	phase := StartHeapPhase()
	cpu := processCPU()
	read0 := dialer.read.Load()
	start := time.Now()
	factory.StartWithContext(factoryCtx)
	syncCtx, syncCancel := context.WithTimeout(ctx, childTimeout)
	res := factory.WaitForCacheSyncWithContext(syncCtx)
	syncCancel()
	if res.Err != nil {
		return nil, fmt.Errorf("sync: %w", res.Err)
	}
	elapsed := time.Since(start)
	received := dialer.read.Load() - read0
	cpuUsed := processCPU() - cpu
	peak, _ := phase.End()
	cached, err := pods.Lister().List(labels.Everything())
	if err != nil {
		return nil, err
	}
	figures := childFigures{
		"sync-ms":     float64(elapsed.Microseconds()) / 1000,
		"recv-MB":     float64(received) / bytesPerMiB,
		"peaklive-MB": peak,
		"retained-MB": phase.Retained(),
		"cpu-ms":      float64(cpuUsed.Microseconds()) / 1000,
		"pods":        float64(len(cached)),
		"ranges":      float64(len(informer.RangeStatus())),
	}
	if s.Replicas == 1 {
		return figures, nil
	}
	if err := ready(); err != nil {
		return nil, err
	}
	if err := waitForConfigMaps(ctx, cs, "the barrier", s.Group); err != nil {
		return nil, err
	}
	if victim {
		figures["crashed-at-ms"] = unixMillis(time.Now())
		cancel()
		<-memberDone
		return figures, nil
	}
	if err := waitFor(func() bool { return shardedSettled(m, informer, s.Replicas-1) }, "the survivors to settle"); err != nil {
		return nil, err
	}
	figures["settled-at-ms"] = unixMillis(time.Now())
	// A survivor that left now would move ranges again under the others
	// still settling: it says it settled, and leaves once all have.
	settled := func(i int) string { return fmt.Sprintf("%s-settled-%d", s.Group, i) }
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settled(s.Replica)}}
	if _, err := cs.CoreV1().ConfigMaps(shardedLeaseNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("saying it settled: %w", err)
	}
	var names []string
	for i := range s.Replicas - 1 {
		names = append(names, settled(i))
	}
	if err := waitForConfigMaps(ctx, cs, "every survivor to settle", names...); err != nil {
		return nil, err
	}
	return figures, nil
}

// waitForConfigMaps waits until the ConfigMaps names exist in the Lease
// namespace (the scenario's barriers), for at most childTimeout.
func waitForConfigMaps(ctx context.Context, cs kubernetes.Interface, what string, names ...string) error {
	return waitFor(func() bool {
		for _, name := range names {
			if _, err := cs.CoreV1().ConfigMaps(shardedLeaseNamespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return false
			}
		}
		return true
	}, what)
}

// shardedSettled reports whether m sees n members and acts on exactly the
// ranges assigned to it, and, when informer is not nil, the informer holds
// exactly those ranges, each synced.
func shardedSettled(m *sharding.Member, informer *sharding.Informer, n int) bool {
	st := m.Status()
	if len(st.Members) != n {
		return false
	}
	var mine []int
	for _, r := range st.Ranges {
		assigned := r.Assigned == m.Identity()
		if assigned != (r.State == sharding.RangeActing) {
			return false
		}
		if assigned {
			mine = append(mine, r.Range.Index)
		}
	}
	if informer == nil {
		return true
	}
	var held []int
	for _, r := range informer.RangeStatus() {
		if !r.Synced {
			return false
		}
		held = append(held, r.Range.Index)
	}
	return slices.Equal(held, mine)
}

// waitFor polls done every 50 ms until it returns true, for at most
// childTimeout.
func waitFor(done func() bool, what string) error {
	deadline := time.Now().Add(childTimeout)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: timed out after %v", what, childTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// unixMillis returns t in milliseconds since the Unix epoch.
func unixMillis(t time.Time) float64 {
	return float64(t.UnixMicro()) / 1000
}

// TestShardedOpFigures: an op's figures are the replicas' means and
// maxima, the largest share of the pods, and the handoff from the crash of
// the last replica to the last survivor settling; replicas whose caches do
// not add up to the pods, or a handoff not measured, fail the op.
func TestShardedOpFigures(t *testing.T) {
	two := []childFigures{
		{"sync-ms": 100, "recv-MB": 2, "peaklive-MB": 10, "retained-MB": 8, "cpu-ms": 50, "pods": 30, "settled-at-ms": 5000},
		{"sync-ms": 300, "recv-MB": 4, "peaklive-MB": 20, "retained-MB": 16, "cpu-ms": 70, "pods": 70, "crashed-at-ms": 1000},
	}
	got, err := shardedOpFigures(two, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"sync-ms/replica": 200, "sync-ms-max": 300, "recv-MB/replica": 3, "recv-MB-max": 4,
		"peaklive-MB/replica": 15, "peaklive-MB-max": 20, "retained-MB/replica": 12, "retained-MB-max": 16,
		"cpu-ms/replica": 60, "cpu-ms-max": 70, "share-max": 0.7, "handoff-ms": 4000,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures %v, want %v", got, want)
	}
	one, err := shardedOpFigures([]childFigures{{"sync-ms": 1, "pods": 100}}, 100)
	if err != nil || one["share-max"] != 1 {
		t.Errorf("one replica: %v, %v", one, err)
	}
	if _, ok := one["handoff-ms"]; ok {
		t.Errorf("one replica has no handoff: %v", one)
	}
	if _, err := shardedOpFigures(two, 101); err == nil {
		t.Error("caches of 100 pods in all accepted for 101")
	}
	two[0]["settled-at-ms"] = 0
	if _, err := shardedOpFigures(two, 100); err == nil {
		t.Error("a survivor settled before the crash accepted")
	}
}
