package kinformerprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/metrics/kinformerprom"
)

// TestTwoFactoriesWithTheSameTypeScrapeCleanly: two factories that both
// build a pod informer (one per namespace, or per cluster: a legitimate
// setup) are registered together; every scrape succeeds and each factory's
// pod informer has its own series, told apart by the factory label.
func TestTwoFactoriesWithTheSameTypeScrapeCleanly(t *testing.T) {
	first := informers.NewSharedInformerFactoryWithOptions(fake.NewClientset(), 0, informers.WithNamespace("a"))
	second := informers.NewSharedInformerFactoryWithOptions(fake.NewClientset(), 0, informers.WithNamespace("b"))
	_ = first.Core().V1().Pods().Informer()
	_ = second.Core().V1().Pods().Informer()
	reg := prometheus.NewPedanticRegistry()
	_, err := kinformerprom.Register(reg, first, second)
	require.NoError(t, err)

	factories := factoryLabels(t, reg)
	assert.Len(t, factories, 2, "one synced series per factory's pod informer")
	if len(factories) == 2 {
		assert.NotEqual(t, factories[0], factories[1], "the two pod informers share a factory label value")
	}
}

// factoryLabels returns the factory label values of the synced series.
func factoryLabels(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err, "the scrape failed")
	var out []string
	for _, f := range families {
		if f.GetName() != "kinformer_informer_synced" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "factory" {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	return out
}

// TestNamedSourcesLabelTheirFactory: Named sets the factory label; two
// sources named alike still scrape, the second suffixed "#2".
func TestNamedSourcesLabelTheirFactory(t *testing.T) {
	first := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	second := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	_ = first.Core().V1().Pods().Informer()
	_ = second.Core().V1().Pods().Informer()

	reg := prometheus.NewPedanticRegistry()
	_, err := kinformerprom.Register(reg, kinformerprom.Named("east", first), kinformerprom.Named("west", second))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"east", "west"}, factoryLabels(t, reg))

	alike := prometheus.NewPedanticRegistry()
	_, err = kinformerprom.Register(alike, kinformerprom.Named("x", first), kinformerprom.Named("x", second))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"x", "x#2"}, factoryLabels(t, alike))
}
