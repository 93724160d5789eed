package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/cache/internal/reflector"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// rfMetric records what a metric was given.
type rfMetric struct {
	mu     sync.Mutex
	incs   int
	values []float64
}

func (m *rfMetric) Inc() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.incs++
}

func (m *rfMetric) Observe(v float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.values = append(m.values, v)
}

func (m *rfMetric) Set(v float64) { m.Observe(v) }

func (m *rfMetric) snapshot() (int, []float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.incs, append([]float64(nil), m.values...)
}

// rfMetricsProvider hands out rfMetrics per reflector name and metric.
type rfMetricsProvider struct {
	mu      sync.Mutex
	metrics map[string]*rfMetric
}

func (p *rfMetricsProvider) get(name, metric string) *rfMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := name + "/" + metric
	if p.metrics[key] == nil {
		p.metrics[key] = &rfMetric{}
	}
	return p.metrics[key]
}

func (p *rfMetricsProvider) NewListsMetric(name string) CounterMetric { return p.get(name, "lists") }
func (p *rfMetricsProvider) NewListDurationMetric(name string) SummaryMetric {
	return p.get(name, "listDuration")
}
func (p *rfMetricsProvider) NewItemsInListMetric(name string) SummaryMetric {
	return p.get(name, "itemsInList")
}
func (p *rfMetricsProvider) NewWatchesMetric(name string) CounterMetric {
	return p.get(name, "watches")
}
func (p *rfMetricsProvider) NewShortWatchesMetric(name string) CounterMetric {
	return p.get(name, "shortWatches")
}
func (p *rfMetricsProvider) NewWatchDurationMetric(name string) SummaryMetric {
	return p.get(name, "watchDuration")
}
func (p *rfMetricsProvider) NewItemsInWatchMetric(name string) SummaryMetric {
	return p.get(name, "itemsInWatch")
}
func (p *rfMetricsProvider) NewLastResourceVersionMetric(name string) GaugeMetric {
	return p.get(name, "lastRV")
}

// rfInstalledMetrics is the provider installed by the first call of
// rfInstallMetrics; SetReflectorMetricsProvider only honours one call per
// process.
var (
	rfMetricsRuns      atomic.Int32
	rfInstallOnce      sync.Once
	rfInstalledMetrics = &rfMetricsProvider{metrics: map[string]*rfMetric{}}
)

func rfInstallMetrics(t *testing.T) *rfMetricsProvider {
	rfInstallOnce.Do(func() { SetReflectorMetricsProvider(rfInstalledMetrics) })
	if currentReflectorMetricsProvider() != MetricsProvider(rfInstalledMetrics) {
		t.Skip("another reflector metrics provider was installed first")
	}
	return rfInstalledMetrics
}

func TestSetReflectorMetricsProviderFirstCallWins(t *testing.T) {
	p := rfInstallMetrics(t)
	SetReflectorMetricsProvider(&rfMetricsProvider{metrics: map[string]*rfMetric{}})
	assert.Same(t, p, currentReflectorMetricsProvider())
}

func TestReflectorRecordsMetrics(t *testing.T) {
	p := rfInstallMetrics(t)
	name := fmt.Sprintf("rf-metrics-%d", rfMetricsRuns.Add(1)) // unique under -count
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Err: errors.New("down")}, fakeapi.ListAnswer{Object: rfPodList("10", "", rfPod("a", "1"), rfPod("b", "2"))}).
		WatchAnswers(fakeapi.WatchAnswer{}, fakeapi.WatchAnswer{Events: []watch.Event{rfEv(watch.Added, rfPod("c", "11")), rfEv(watch.Modified, rfPod("c", "12"))}}).
		ListAnswers(fakeapi.ListAnswer{Object: rfPodList("10", "", rfPod("a", "1"))})
	s.OnList(func(_ metav1.ListOptions) { clk.Step(2 * time.Second) })
	r := NewReflectorWithOptions(s, &v1.Pod{}, rfNewRecorder(), ReflectorOptions{Name: name, Clock: clk, Backoff: rfTinyBackoff()})
	// Move the fake clock past Run's backoff waits (the only timers here).
	stepperDone := make(chan struct{})
	stepperStopped := make(chan struct{})
	go func() {
		defer close(stepperStopped)
		for {
			select {
			case <-stepperDone:
				return
			case <-time.After(100 * time.Microsecond):
			}
			if clk.HasWaiters() {
				clk.Step(time.Microsecond)
			}
		}
	}()
	rfRunUntilExhausted(t, r, s)
	close(stepperDone)
	<-stepperStopped

	count := func(metric string) int { n, _ := p.get(name, metric).snapshot(); return n }
	values := func(metric string) []float64 { _, v := p.get(name, metric).snapshot(); return v }
	assert.Equal(t, 3, count("lists"), "every list attempt, the failed one included")
	assert.Equal(t, []float64{2, 2}, values("listDuration"))
	assert.Equal(t, []float64{2, 1}, values("itemsInList"))
	assert.Equal(t, 3, count("watches"))
	assert.Equal(t, 1, count("shortWatches"))
	assert.Equal(t, []float64{0, 2}, values("itemsInWatch"))
	assert.Len(t, values("watchDuration"), 2)
	assert.Equal(t, []float64{10, 10, 11, 12}, values("lastRV"))
}

// TestReflectorMetricsNilProvider checks that a metric the provider leaves
// out (nil) is skipped while every other metric still records what it
// should, for each metric in turn, and that a nil provider, a provider that
// leaves every metric out, and a nil *reflector.Metrics record nothing
// without panicking.
func TestReflectorMetricsNilProvider(t *testing.T) {
	type recorded struct {
		incs   int
		values []float64
	}
	want := map[string]recorded{
		"lists":         {incs: 1},
		"listDuration":  {values: []float64{1.5}},
		"itemsInList":   {values: []float64{2}},
		"watches":       {incs: 1},
		"shortWatches":  {incs: 1},
		"watchDuration": {values: []float64{3, 5}},
		"itemsInWatch":  {values: []float64{4, 0}},
		"lastRV":        {values: []float64{12}},
	}
	record := func(m *reflector.Metrics) {
		m.ListStarted()
		m.ListDone(1.5, 2)
		m.WatchStarted()
		m.WatchEnded(3, 4, true)
		m.WatchEnded(5, 0, false)
		m.ResourceVersion("12")
		m.ResourceVersion("not a number")
		m.ResourceVersion("")
	}
	for _, leftOut := range []string{"", "lists", "listDuration", "itemsInList", "watches", "shortWatches", "watchDuration", "itemsInWatch", "lastRV"} {
		t.Run("without "+leftOut, func(t *testing.T) {
			p := &rfPartialMetricsProvider{rfMetricsProvider: rfMetricsProvider{metrics: map[string]*rfMetric{}}, leftOut: leftOut}
			m := newReflectorMetrics(p, "r")
			assert.NotPanics(t, func() { record(m) })
			for metric, w := range want {
				if metric == leftOut {
					assert.NotContains(t, p.metrics, "r/"+metric, "a metric left out was created")
					continue
				}
				incs, values := p.get("r", metric).snapshot()
				assert.Equal(t, w.incs, incs, metric)
				assert.Equal(t, w.values, values, metric)
			}
		})
	}

	for name, p := range map[string]MetricsProvider{"nil provider": nil, "every metric left out": rfNilMetricsProvider{}} {
		m := newReflectorMetrics(p, "r")
		assert.Equal(t, &reflector.Metrics{}, m, name)
		assert.NotPanics(t, func() { record(m) }, name)
	}
	var nilMetrics *reflector.Metrics
	assert.NotPanics(t, func() { record(nilMetrics) }, "nil *reflector.Metrics")
}

// rfPartialMetricsProvider hands out rfMetrics as rfMetricsProvider does,
// except nil for the metric leftOut.
type rfPartialMetricsProvider struct {
	rfMetricsProvider
	leftOut string
}

func (p *rfPartialMetricsProvider) counter(name, metric string) CounterMetric {
	if metric == p.leftOut {
		return nil
	}
	return p.get(name, metric)
}

func (p *rfPartialMetricsProvider) summary(name, metric string) SummaryMetric {
	if metric == p.leftOut {
		return nil
	}
	return p.get(name, metric)
}

func (p *rfPartialMetricsProvider) NewListsMetric(name string) CounterMetric {
	return p.counter(name, "lists")
}
func (p *rfPartialMetricsProvider) NewListDurationMetric(name string) SummaryMetric {
	return p.summary(name, "listDuration")
}
func (p *rfPartialMetricsProvider) NewItemsInListMetric(name string) SummaryMetric {
	return p.summary(name, "itemsInList")
}
func (p *rfPartialMetricsProvider) NewWatchesMetric(name string) CounterMetric {
	return p.counter(name, "watches")
}
func (p *rfPartialMetricsProvider) NewShortWatchesMetric(name string) CounterMetric {
	return p.counter(name, "shortWatches")
}
func (p *rfPartialMetricsProvider) NewWatchDurationMetric(name string) SummaryMetric {
	return p.summary(name, "watchDuration")
}
func (p *rfPartialMetricsProvider) NewItemsInWatchMetric(name string) SummaryMetric {
	return p.summary(name, "itemsInWatch")
}
func (p *rfPartialMetricsProvider) NewLastResourceVersionMetric(name string) GaugeMetric {
	if p.leftOut == "lastRV" {
		return nil
	}
	return p.get(name, "lastRV")
}

type rfNilMetricsProvider struct{}

func (rfNilMetricsProvider) NewListsMetric(string) CounterMetric             { return nil }
func (rfNilMetricsProvider) NewListDurationMetric(string) SummaryMetric      { return nil }
func (rfNilMetricsProvider) NewItemsInListMetric(string) SummaryMetric       { return nil }
func (rfNilMetricsProvider) NewWatchesMetric(string) CounterMetric           { return nil }
func (rfNilMetricsProvider) NewShortWatchesMetric(string) CounterMetric      { return nil }
func (rfNilMetricsProvider) NewWatchDurationMetric(string) SummaryMetric     { return nil }
func (rfNilMetricsProvider) NewItemsInWatchMetric(string) SummaryMetric      { return nil }
func (rfNilMetricsProvider) NewLastResourceVersionMetric(string) GaugeMetric { return nil }
