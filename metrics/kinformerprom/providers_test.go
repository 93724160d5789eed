package kinformerprom_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/metrics/kinformerprom"
)

// TestRegisterProvidersReflectorMetricsFire installs the process-wide
// providers (the only test of this binary that does) and runs a named
// Reflector over the fake clientset: its list, list size and watch are
// recorded through cache.MetricsProvider, which client-go v0.37 never calls.
func TestRegisterProvidersReflectorMetricsFire(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	_, _, err := kinformerprom.RegisterProviders(reg)
	require.NoError(t, err)
	_, _, err = kinformerprom.RegisterProviders(reg)
	require.ErrorContains(t, err, "already registered")

	client := fake.NewClientset([]runtime.Object{newPod("a"), newPod("b")}...)
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, o)
		},
	}, client)
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	r := cache.NewNamedReflector("pod-reflector", lw, &corev1.Pod{}, store, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	require.Eventually(t, func() bool {
		return testutil.ToFloat64(mustVec(t, reg, "kinformer_reflector_watches_total")) == 1
	}, waitTimeout, 5*time.Millisecond)

	want := `
# HELP kinformer_reflector_lists_total Lists (paged or streaming) a Reflector started.
# TYPE kinformer_reflector_lists_total counter
kinformer_reflector_lists_total{name="pod-reflector"} 1
# HELP kinformer_reflector_watches_total Watches a Reflector opened.
# TYPE kinformer_reflector_watches_total counter
kinformer_reflector_watches_total{name="pod-reflector"} 1
# HELP kinformer_reflector_short_watches_total Watches that ended within a second without an event.
# TYPE kinformer_reflector_short_watches_total counter
kinformer_reflector_short_watches_total{name="pod-reflector"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"kinformer_reflector_lists_total", "kinformer_reflector_watches_total", "kinformer_reflector_short_watches_total"))
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "kinformer_reflector_list_items" {
			require.Len(t, f.GetMetric(), 1)
			require.Equal(t, uint64(1), f.GetMetric()[0].GetSummary().GetSampleCount())
			require.Equal(t, 2.0, f.GetMetric()[0].GetSummary().GetSampleSum())
			return
		}
	}
	t.Fatal("no kinformer_reflector_list_items")
}

// mustVec returns a collector gathering only the family name of reg.
func mustVec(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	return summedFamily{reg: reg, name: name}
}

// summedFamily collects one family of a registry, summed, as a gauge.
type summedFamily struct {
	reg  *prometheus.Registry
	name string
}

func (f summedFamily) Describe(chan<- *prometheus.Desc) {}

func (f summedFamily) Collect(ch chan<- prometheus.Metric) {
	families, _ := f.reg.Gather()
	sum := 0.0
	for _, fam := range families {
		if fam.GetName() == f.name {
			for _, m := range fam.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(f.name, "sum", nil, nil), prometheus.GaugeValue, sum)
}
