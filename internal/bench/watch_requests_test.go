package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/testenv"
)

// watchRequestsDurationEnv sets how long BenchmarkWatchRequests runs (a
// time.ParseDuration string); the benchmark is skipped without it.
const watchRequestsDurationEnv = "KINFORMER_BENCH_WATCH_DURATION"

// watchRequestsResources are the 20 resources each side's factory informs
// on in BenchmarkWatchRequests: built-in types every kube-apiserver serves.
var watchRequestsResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "nodes"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Version: "v1", Resource: "persistentvolumes"},
	{Version: "v1", Resource: "limitranges"},
	{Version: "v1", Resource: "resourcequotas"},
	{Version: "v1", Resource: "podtemplates"},
	{Version: "v1", Resource: "replicationcontrollers"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
}

// requestCounter counts the requests a client sends, by kind.
type requestCounter struct {
	watches, streamingLists, lists, other atomic.Int64
}

// wrap is a rest.Config WrapTransport that counts every request before
// passing it on.
func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		switch {
		case req.Method != http.MethodGet:
			c.other.Add(1)
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			if q.Get("sendInitialEvents") == "true" {
				c.streamingLists.Add(1)
			} else {
				c.watches.Add(1)
			}
		default:
			c.lists.Add(1)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// BenchmarkWatchRequests counts the requests that 20 informers send a real
// kube-apiserver over a long run (KINFORMER_BENCH_WATCH_DURATION, 20m in
// `make bench-watch-requests`), for kinformer's factory and client-go's side
// by side in the same run against the same server: each factory informs on
// the same 20 resources through its own clientset, on its default
// configuration, and a writer updates one ConfigMap every two seconds so
// that watches carry events as a quiet cluster's do. Reported per side:
// plain watch requests, streaming-list requests, LIST requests, and watch
// requests per informer-hour.
func BenchmarkWatchRequests(b *testing.B) {
	raw := os.Getenv(watchRequestsDurationEnv)
	if raw == "" {
		b.Skipf("set %s (for example 20m) to count the watch requests of 20 informers over that time", watchRequestsDurationEnv)
	}
	duration, err := time.ParseDuration(raw)
	if err != nil || duration <= 0 {
		b.Fatalf("%s=%q: not a positive duration", watchRequestsDurationEnv, raw)
	}
	if testenv.BinDir() == "" {
		b.Skipf("needs a real etcd and kube-apiserver: build them with internal/testenv/build.sh and set %s", testenv.BinDirEnv)
	}
	env, err := testenv.New(nil, testenv.Options{})
	if err != nil {
		b.Fatalf("starting the API server: %v", err)
	}
	defer env.Stop()

	for range b.N {
		kin, cgo := watchRequestsOnce(b, env, duration)
		hours := duration.Hours() * float64(len(watchRequestsResources))
		for _, side := range []struct {
			name string
			c    *requestCounter
		}{{"kinformer", kin}, {"client-go", cgo}} {
			b.ReportMetric(float64(side.c.watches.Load()), side.name+"-watches")
			b.ReportMetric(float64(side.c.streamingLists.Load()), side.name+"-streaming-lists")
			b.ReportMetric(float64(side.c.lists.Load()), side.name+"-lists")
			b.ReportMetric(float64(side.c.watches.Load())/hours, side.name+"-watches/informer-hour")
		}
		b.Logf("%v, %d informers per side: kinformer %d watches, %d streaming lists, %d lists; client-go %d watches, %d streaming lists, %d lists",
			duration, len(watchRequestsResources),
			kin.watches.Load(), kin.streamingLists.Load(), kin.lists.Load(),
			cgo.watches.Load(), cgo.streamingLists.Load(), cgo.lists.Load())
	}
}

// watchRequestsOnce runs both sides' 20 informers against env for duration,
// from the moment both have synced, and returns their request counts over
// the whole run, sync included.
func watchRequestsOnce(b *testing.B, env *testenv.Env, duration time.Duration) (kin, cgo *requestCounter) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := env.Clientset()
	ns := fmt.Sprintf("watch-requests-%d", time.Now().UnixNano())
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	cm, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ticker"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}

	clientFor := func(c *requestCounter) kubernetes.Interface {
		cfg := rest.CopyConfig(env.Config())
		cfg.Wrap(c.wrap)
		return kubernetes.NewForConfigOrDie(cfg)
	}
	kin, cgo = &requestCounter{}, &requestCounter{}
	kf := informers.NewSharedInformerFactory(clientFor(kin), 0)
	cf := clientinformers.NewSharedInformerFactory(clientFor(cgo), 0)
	for _, gvr := range watchRequestsResources {
		ki, err := kf.ForResource(gvr)
		if err != nil {
			b.Fatalf("kinformer %v: %v", gvr, err)
		}
		ki.Informer()
		ci, err := cf.ForResource(gvr)
		if err != nil {
			b.Fatalf("client-go %v: %v", gvr, err)
		}
		ci.Informer()
	}
	kf.StartWithContext(ctx)
	cf.Start(ctx.Done())
	defer cf.Shutdown()
	defer kf.Shutdown()
	defer cancel()
	syncCtx, syncCancel := context.WithTimeout(ctx, waitTimeout)
	defer syncCancel()
	if err := kf.WaitForCacheSyncWithContext(syncCtx).AsError(); err != nil {
		b.Fatalf("kinformer did not sync: %v", err)
	}
	for typ, ok := range cf.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			b.Fatalf("client-go's %v informer did not sync", typ)
		}
	}

	var writer sync.WaitGroup
	writer.Go(func() {
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			cm.Data = map[string]string{"i": fmt.Sprint(i)}
			next, err := admin.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			if err != nil {
				if ctx.Err() == nil {
					b.Errorf("updating the ConfigMap: %v", err)
				}
				return
			}
			cm = next
		}
	})
	select {
	case <-time.After(duration):
	case <-ctx.Done():
	}
	cancel()
	writer.Wait()
	return kin, cgo
}
