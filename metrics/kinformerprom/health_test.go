package kinformerprom_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/health"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/metrics/kinformerprom"
)

// TestCollectorReportsHealthAndStaleness: a factory whose configmaps are
// refused with 403 while its pods sync reports each informer's health
// state (one-hot), the reason of the unhealthy one, the factory-wide worst
// state, and a staleness gauge and probe counters per informer.
func TestCollectorReportsHealthAndStaleness(t *testing.T) {
	client := fake.NewClientset(newPod("a"))
	client.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC"))
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	factory.Core().V1().ConfigMaps().Informer()
	reg := prometheus.NewPedanticRegistry()
	_, err := kinformerprom.Register(reg, factory)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), pods.HasSynced))
	require.Eventually(t, func() bool {
		r, err := health.Check(health.Options{}, factory)
		return err == nil && len(r.Unhealthy()) == 1 && r.Unhealthy()[0].Reason == health.ReasonForbidden
	}, waitTimeout, time.Millisecond)

	const want = `
# HELP kinformer_health 1 for the worst health state (ready, degraded, failing) over all the informers of the Collector's sources (a factory's health when the Collector has one factory), 0 for the others.
# TYPE kinformer_health gauge
kinformer_health{state="degraded"} 0
kinformer_health{state="failing"} 1
kinformer_health{state="ready"} 0
# HELP kinformer_informer_health 1 for the informer's health state (ready, degraded, failing), 0 for the others.
# TYPE kinformer_informer_health gauge
kinformer_informer_health{factory="",group="",informer="",resource="configmaps",state="degraded",type="*v1.ConfigMap",version="v1"} 0
kinformer_informer_health{factory="",group="",informer="",resource="configmaps",state="failing",type="*v1.ConfigMap",version="v1"} 1
kinformer_informer_health{factory="",group="",informer="",resource="configmaps",state="ready",type="*v1.ConfigMap",version="v1"} 0
kinformer_informer_health{factory="",group="",informer="",resource="pods",state="degraded",type="*v1.Pod",version="v1"} 0
kinformer_informer_health{factory="",group="",informer="",resource="pods",state="failing",type="*v1.Pod",version="v1"} 0
kinformer_informer_health{factory="",group="",informer="",resource="pods",state="ready",type="*v1.Pod",version="v1"} 1
# HELP kinformer_informer_health_reason 1 for the reason the informer is not ready (forbidden, not_found, throttled, stale, never_synced, ...); absent when it is ready.
# TYPE kinformer_informer_health_reason gauge
kinformer_informer_health_reason{factory="",group="",informer="",reason="forbidden",resource="configmaps",type="*v1.ConfigMap",version="v1"} 1
# HELP kinformer_informer_staleness_probes_total Staleness probes made: LISTs of one object asking the server for its current resourceVersion when no bookmark or list confirmed one for the probe interval.
# TYPE kinformer_informer_staleness_probes_total counter
kinformer_informer_staleness_probes_total{factory="",group="",informer="",resource="configmaps",type="*v1.ConfigMap",version="v1"} 0
kinformer_informer_staleness_probes_total{factory="",group="",informer="",resource="pods",type="*v1.Pod",version="v1"} 0
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"kinformer_health", "kinformer_informer_health", "kinformer_informer_health_reason", "kinformer_informer_staleness_probes_total"))

	// The staleness gauge is there for both started informers, small.
	families, err := reg.Gather()
	require.NoError(t, err)
	found := 0
	for _, mf := range families {
		if mf.GetName() != "kinformer_informer_staleness_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			found++
			assert.GreaterOrEqual(t, m.GetGauge().GetValue(), 0.0)
			assert.Less(t, m.GetGauge().GetValue(), waitTimeout.Seconds())
		}
	}
	assert.Equal(t, 2, found)
}
