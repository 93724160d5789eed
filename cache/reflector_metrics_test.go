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

// reflectorMetric records what a metric was given.
type reflectorMetric struct {
	mu     sync.Mutex
	incs   int
	values []float64
}

func (m *reflectorMetric) Inc() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.incs++
}

func (m *reflectorMetric) Observe(v float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.values = append(m.values, v)
}

func (m *reflectorMetric) Set(v float64) { m.Observe(v) }

func (m *reflectorMetric) snapshot() (int, []float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.incs, append([]float64(nil), m.values...)
}

// recordingMetricsProvider hands out reflectorMetrics per reflector name and metric.
type recordingMetricsProvider struct {
	mu      sync.Mutex
	metrics map[string]*reflectorMetric
}

func (p *recordingMetricsProvider) get(name, metric string) *reflectorMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := name + "/" + metric
	if p.metrics[key] == nil {
		p.metrics[key] = &reflectorMetric{}
	}
	return p.metrics[key]
}

func (p *recordingMetricsProvider) NewListsMetric(name string) CounterMetric {
	return p.get(name, "lists")
}
func (p *recordingMetricsProvider) NewListDurationMetric(name string) SummaryMetric {
	return p.get(name, "listDuration")
}
func (p *recordingMetricsProvider) NewItemsInListMetric(name string) SummaryMetric {
	return p.get(name, "itemsInList")
}
func (p *recordingMetricsProvider) NewWatchesMetric(name string) CounterMetric {
	return p.get(name, "watches")
}
func (p *recordingMetricsProvider) NewShortWatchesMetric(name string) CounterMetric {
	return p.get(name, "shortWatches")
}
func (p *recordingMetricsProvider) NewWatchDurationMetric(name string) SummaryMetric {
	return p.get(name, "watchDuration")
}
func (p *recordingMetricsProvider) NewItemsInWatchMetric(name string) SummaryMetric {
	return p.get(name, "itemsInWatch")
}
func (p *recordingMetricsProvider) NewLastResourceVersionMetric(name string) GaugeMetric {
	return p.get(name, "lastRV")
}

// installedReflectorMetrics is the provider installed by the first call of
// installReflectorMetrics; SetReflectorMetricsProvider only honours one call per
// process.
var (
	reflectorMetricsRuns        atomic.Int32
	installReflectorMetricsOnce sync.Once
	installedReflectorMetrics   = &recordingMetricsProvider{metrics: map[string]*reflectorMetric{}}
)

func installReflectorMetrics(t *testing.T) *recordingMetricsProvider {
	installReflectorMetricsOnce.Do(func() { SetReflectorMetricsProvider(installedReflectorMetrics) })
	if currentReflectorMetricsProvider() != MetricsProvider(installedReflectorMetrics) {
		t.Skip("another reflector metrics provider was installed first")
	}
	return installedReflectorMetrics
}

func TestSetReflectorMetricsProviderFirstCallWins(t *testing.T) {
	p := installReflectorMetrics(t)
	SetReflectorMetricsProvider(&recordingMetricsProvider{metrics: map[string]*reflectorMetric{}})
	assert.Same(t, p, currentReflectorMetricsProvider())
}

func TestReflectorRecordsMetrics(t *testing.T) {
	p := installReflectorMetrics(t)
	name := fmt.Sprintf("rf-metrics-%d", reflectorMetricsRuns.Add(1)) // unique under -count
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Err: errors.New("down")}, fakeapi.ListAnswer{Object: newPodList("10", "", newPod("a", "1"), newPod("b", "2"))}).
		WatchAnswers(fakeapi.WatchAnswer{}, fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("c", "11")), newEvent(watch.Modified, newPod("c", "12"))}}).
		ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("a", "1"))})
	s.OnList(func(_ metav1.ListOptions) { clk.Step(2 * time.Second) })
	r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: name, Clock: clk, Backoff: tinyBackoff()})
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
	runUntilExhausted(t, r, s)
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
			p := &partialReflectorMetricsProvider{recordingMetricsProvider: recordingMetricsProvider{metrics: map[string]*reflectorMetric{}}, leftOut: leftOut}
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

	for name, p := range map[string]MetricsProvider{"nil provider": nil, "every metric left out": nilReflectorMetricsProvider{}} {
		m := newReflectorMetrics(p, "r")
		assert.Equal(t, &reflector.Metrics{}, m, name)
		assert.NotPanics(t, func() { record(m) }, name)
	}
	var nilMetrics *reflector.Metrics
	assert.NotPanics(t, func() { record(nilMetrics) }, "nil *reflector.Metrics")
}

// partialReflectorMetricsProvider hands out reflectorMetrics as recordingMetricsProvider does,
// except nil for the metric leftOut.
type partialReflectorMetricsProvider struct {
	recordingMetricsProvider
	leftOut string
}

func (p *partialReflectorMetricsProvider) counter(name, metric string) CounterMetric {
	if metric == p.leftOut {
		return nil
	}
	return p.get(name, metric)
}

func (p *partialReflectorMetricsProvider) summary(name, metric string) SummaryMetric {
	if metric == p.leftOut {
		return nil
	}
	return p.get(name, metric)
}

func (p *partialReflectorMetricsProvider) NewListsMetric(name string) CounterMetric {
	return p.counter(name, "lists")
}
func (p *partialReflectorMetricsProvider) NewListDurationMetric(name string) SummaryMetric {
	return p.summary(name, "listDuration")
}
func (p *partialReflectorMetricsProvider) NewItemsInListMetric(name string) SummaryMetric {
	return p.summary(name, "itemsInList")
}
func (p *partialReflectorMetricsProvider) NewWatchesMetric(name string) CounterMetric {
	return p.counter(name, "watches")
}
func (p *partialReflectorMetricsProvider) NewShortWatchesMetric(name string) CounterMetric {
	return p.counter(name, "shortWatches")
}
func (p *partialReflectorMetricsProvider) NewWatchDurationMetric(name string) SummaryMetric {
	return p.summary(name, "watchDuration")
}
func (p *partialReflectorMetricsProvider) NewItemsInWatchMetric(name string) SummaryMetric {
	return p.summary(name, "itemsInWatch")
}
func (p *partialReflectorMetricsProvider) NewLastResourceVersionMetric(name string) GaugeMetric {
	if p.leftOut == "lastRV" {
		return nil
	}
	return p.get(name, "lastRV")
}

type nilReflectorMetricsProvider struct{}

func (nilReflectorMetricsProvider) NewListsMetric(string) CounterMetric             { return nil }
func (nilReflectorMetricsProvider) NewListDurationMetric(string) SummaryMetric      { return nil }
func (nilReflectorMetricsProvider) NewItemsInListMetric(string) SummaryMetric       { return nil }
func (nilReflectorMetricsProvider) NewWatchesMetric(string) CounterMetric           { return nil }
func (nilReflectorMetricsProvider) NewShortWatchesMetric(string) CounterMetric      { return nil }
func (nilReflectorMetricsProvider) NewWatchDurationMetric(string) SummaryMetric     { return nil }
func (nilReflectorMetricsProvider) NewItemsInWatchMetric(string) SummaryMetric      { return nil }
func (nilReflectorMetricsProvider) NewLastResourceVersionMetric(string) GaugeMetric { return nil }
