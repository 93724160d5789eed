package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcache "k8s.io/client-go/tools/cache"
)

func TestStoreBasicOperations(t *testing.T) {
	a1 := newPodIn("ns", "a", "1")
	a2 := newPodIn("ns", "a", "2")
	b := newPodIn("", "b", "3")
	for _, mk := range []struct {
		name string
		new  func() Store
	}{
		{"NewStore", func() Store { return NewStore(MetaNamespaceKeyFunc) }},
		{"NewIndexer", func() Store {
			return NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		}},
	} {
		t.Run(mk.name, func(t *testing.T) {
			s := mk.new()
			require.NoError(t, s.Add(a1))
			require.NoError(t, s.Add(b))
			require.NoError(t, s.Update(a2))
			assert.Equal(t, map[string]interface{}{"ns/a": a2, "b": b}, storeContents(t, s))

			obj, ok, err := s.Get(a1)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Same(t, a2, obj)
			obj, ok, err = s.GetByKey("missing")
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Nil(t, obj)

			require.NoError(t, s.Delete(ExplicitKey("b")))
			require.NoError(t, s.Delete(newPodIn("x", "absent", "")))
			assert.Equal(t, map[string]interface{}{"ns/a": a2}, storeContents(t, s))

			require.NoError(t, s.Replace([]interface{}{b}, "10"))
			assert.Equal(t, map[string]interface{}{"b": b}, storeContents(t, s))
			assert.Equal(t, "10", s.LastStoreSyncResourceVersion())
			s.Bookmark("11")
			assert.Equal(t, "11", s.LastStoreSyncResourceVersion())
			require.NoError(t, s.Resync())

			_, ok = s.(TransactionStore)
			assert.True(t, ok, "implements TransactionStore")
		})
	}
}

func TestStoreTransaction(t *testing.T) {
	keyErr := errors.New("no key")
	keyFunc := func(obj interface{}) (string, error) {
		if s, ok := obj.(string); ok && s == "unkeyable" {
			return "", keyErr
		}
		return DeletionHandlingMetaNamespaceKeyFunc(obj)
	}
	a := newPodIn("ns", "a", "1", "app", "web")
	b := newPodIn("ns", "b", "2", "app", "db")
	aBad := newPodIn("ns", "a", "3", "bad", "true")
	type want struct {
		contents  map[string]interface{}
		success   []int
		errs      int
		failed    int // operations not applied, when not errs
		errIs     []error
		rv        string
		nilResult bool
	}
	cases := []struct {
		name string
		seed []*v1.Pod
		txns []Transaction
		want want
	}{
		{
			name: "all succeed",
			txns: []Transaction{{a, TransactionTypeAdd}, {b, TransactionTypeAdd}, {a, TransactionTypeDelete}},
			want: want{contents: map[string]interface{}{"ns/b": b}, nilResult: true, rv: "1"},
		},
		{
			name: "empty",
			seed: []*v1.Pod{a},
			want: want{contents: map[string]interface{}{"ns/a": a}, nilResult: true, rv: "1"},
		},
		{
			name: "key error, unknown type and index error are reported per item",
			seed: []*v1.Pod{a},
			txns: []Transaction{
				{"unkeyable", TransactionTypeAdd},
				{b, TransactionTypeAdd},
				{b, "Frobnicate"},
				{aBad, TransactionTypeUpdate},
				{DeletedFinalStateUnknown{Key: "ns/zz"}, TransactionTypeDelete},
			},
			// The index error's object is stored, outside the failing index.
			want: want{
				contents: map[string]interface{}{"ns/a": aBad, "ns/b": b},
				success:  []int{1, 3, 4},
				errs:     3,
				failed:   2,
				errIs:    []error{keyErr, errBadIndex},
				rv:       "3",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			idx := NewIndexer(keyFunc, Indexers{"name": failingIndex})
			for _, p := range tc.seed {
				require.NoError(t, idx.Add(p))
			}
			te := idx.(TransactionStore).Transaction(tc.txns...)
			if tc.want.nilResult {
				assert.Nil(t, te)
			} else {
				require.NotNil(t, te)
				assert.Equal(t, tc.want.success, te.SuccessfulIndices)
				assert.Equal(t, len(tc.txns), te.TotalTransactions)
				assert.Len(t, te.Errors, tc.want.errs)
				for _, target := range tc.want.errIs {
					assert.ErrorIs(t, te, target)
				}
				var ke KeyError
				assert.ErrorAs(t, te, &ke)
				failed := tc.want.failed
				if failed == 0 {
					failed = tc.want.errs
				}
				assert.Contains(t, te.Error(), fmt.Sprintf("(%d/%d)", failed, len(tc.txns)))
			}
			assert.Equal(t, tc.want.contents, storeContents(t, idx))
			assert.Equal(t, tc.want.rv, idx.LastStoreSyncResourceVersion())
			checkIndexer(t, idx, Indexers{"name": failingIndex})
		})
	}
}

func TestTransactionErrorFormatMatchesClientGo(t *testing.T) {
	ours := &TransactionError{SuccessfulIndices: []int{0, 2}, TotalTransactions: 3, Errors: []error{errors.New("x")}}
	theirs := &clientcache.TransactionError{SuccessfulIndices: []int{0, 2}, TotalTransactions: 3, Errors: []error{errors.New("x")}}
	assert.Equal(t, theirs.Error(), ours.Error())
}

// countingTransform counts how often it sees each object and labels the
// object it returns.
type countingTransform struct {
	mu    sync.Mutex
	calls map[string]int
	fail  string
}

func (c *countingTransform) fn(obj interface{}) (interface{}, error) {
	p := obj.(*v1.Pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[p.Name]++
	if p.Name == c.fail {
		return nil, errors.New("transform refused")
	}
	out := p.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations["transformed"] = "yes"
	return out, nil
}

func TestStoreWithTransformer(t *testing.T) {
	cases := []struct {
		name      string
		do        func(s Store) error
		wantCalls map[string]int
		wantKeys  []string
		wantErr   bool
	}{
		{name: "add", do: func(s Store) error { return s.Add(newPodIn("ns", "a", "1")) }, wantCalls: map[string]int{"a": 1}, wantKeys: []string{"ns/a"}},
		{name: "update", do: func(s Store) error { return s.Update(newPodIn("ns", "a", "1")) }, wantCalls: map[string]int{"a": 1}, wantKeys: []string{"ns/a"}},
		{name: "replace", do: func(s Store) error {
			return s.Replace([]interface{}{newPodIn("ns", "a", "1"), newPodIn("ns", "b", "1")}, "1")
		}, wantCalls: map[string]int{"a": 1, "b": 1}, wantKeys: []string{"ns/a", "ns/b"}},
		{name: "transaction", do: func(s Store) error {
			if te := s.(TransactionStore).Transaction(
				Transaction{newPodIn("ns", "a", "1"), TransactionTypeAdd},
				Transaction{newPodIn("ns", "b", "1"), TransactionTypeUpdate},
				Transaction{newPodIn("ns", "c", "1"), TransactionTypeDelete},
			); te != nil {
				return te
			}
			return nil
		}, wantCalls: map[string]int{"a": 1, "b": 1}, wantKeys: []string{"ns/a", "ns/b"}},
		{name: "delete does not transform", do: func(s Store) error { return s.Delete(newPodIn("ns", "a", "1")) }, wantCalls: map[string]int{}, wantKeys: []string{}},
		{name: "error rejects add", do: func(s Store) error { return s.Add(newPodIn("ns", "bad", "1")) }, wantCalls: map[string]int{"bad": 1}, wantKeys: []string{}, wantErr: true},
		{name: "error rejects replace", do: func(s Store) error {
			return s.Replace([]interface{}{newPodIn("ns", "a", "1"), newPodIn("ns", "bad", "1")}, "1")
		}, wantCalls: map[string]int{"a": 1, "bad": 1}, wantKeys: []string{}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &countingTransform{fail: "bad", calls: map[string]int{}}
			s := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, WithTransformer(tr.fn))
			err := tc.do(s)
			if tc.wantErr {
				assert.ErrorContains(t, err, "transform refused")
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantCalls, tr.calls)
			assert.ElementsMatch(t, tc.wantKeys, s.ListKeys())
			for _, obj := range s.List() {
				assert.Equal(t, "yes", obj.(*v1.Pod).Annotations["transformed"])
			}
		})
	}
}

// storeGauge records the values set on it.
type storeGauge struct {
	mu     sync.Mutex
	values []float64
}

func (g *storeGauge) Set(v float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.values = append(g.values, v)
}

func (g *storeGauge) get() []float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]float64(nil), g.values...)
}

// storeHistogram records observations.
type storeHistogram struct{ storeGauge }

func (h *storeHistogram) Observe(v float64) { h.Set(v) }

// storeMetricsProvider hands out recording metrics and counts requests.
type storeMetricsProvider struct {
	mu      sync.Mutex
	rv      map[string]*storeGauge
	queued  map[string]*storeGauge
	latency map[string]*storeHistogram
}

func newStoreMetricsProvider() *storeMetricsProvider {
	return &storeMetricsProvider{rv: map[string]*storeGauge{}, queued: map[string]*storeGauge{}, latency: map[string]*storeHistogram{}}
}

func (p *storeMetricsProvider) NewQueuedItemMetric(id InformerNameAndResource) GaugeMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := &storeGauge{}
	p.queued[id.Name()] = g
	return g
}

func (p *storeMetricsProvider) NewProcessingLatencyMetric(id InformerNameAndResource) HistogramMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := &storeHistogram{}
	p.latency[id.Name()] = h
	return h
}

func (p *storeMetricsProvider) NewStoreResourceVersionMetric(id InformerNameAndResource) GaugeMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := &storeGauge{}
	p.rv[id.Name()] = g
	return g
}

func TestStoreMetrics(t *testing.T) {
	name, err := NewInformerName("st-store-metrics")
	require.NoError(t, err)
	defer name.Release()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	id := name.WithResource(gvr)
	require.True(t, id.Reserved())

	p := newStoreMetricsProvider()
	s := NewStore(MetaNamespaceKeyFunc, WithStoreMetrics(id, p))
	require.NoError(t, s.Add(newPodIn("ns", "a", "5")))
	require.NoError(t, s.Update(newPodIn("ns", "a", "1234567890123456789")))
	require.NoError(t, s.Add(newPodIn("ns", "b", "not-a-number")))
	s.Bookmark("8")
	require.NoError(t, s.Replace(nil, "9"))
	assert.Equal(t, []float64{5, 567890123456789, 8, 9}, p.rv["st-store-metrics"].get())
	// The store still tracks non-numeric versions.
	require.NoError(t, s.Add(newPodIn("ns", "b", "abc")))
	assert.Equal(t, "abc", s.LastStoreSyncResourceVersion())

	t.Run("duplicate identity publishes nothing", func(t *testing.T) {
		dup := name.WithResource(gvr)
		require.False(t, dup.Reserved())
		p2 := newStoreMetricsProvider()
		s2 := NewStore(MetaNamespaceKeyFunc, WithStoreMetrics(dup, p2))
		require.NoError(t, s2.Add(newPodIn("ns", "a", "5")))
		assert.Empty(t, p2.rv)
	})
	t.Run("thread safe store option", func(t *testing.T) {
		other, err := NewInformerName("st-store-metrics-2")
		require.NoError(t, err)
		defer other.Release()
		p3 := newStoreMetricsProvider()
		ts := NewThreadSafeStore(Indexers{}, Indices{}, WithThreadSafeStoreMetrics(other.WithResource(gvr), p3))
		ts.Add("k", newPodIn("ns", "k", "77"))
		assert.Equal(t, []float64{77}, p3.rv["st-store-metrics-2"].get())
	})
}

func TestStoreNilKeyFuncAndOptions(t *testing.T) {
	s := NewStore(nil, nil)
	err := s.Add(newPodIn("ns", "a", "1"))
	var ke KeyError
	require.ErrorAs(t, err, &ke)
	assert.Empty(t, s.List())
}

func TestStoreTransactionWithPrevious(t *testing.T) {
	a1, a2 := newPodIn("ns", "a", "1"), newPodIn("ns", "a", "2")
	b1 := newPodIn("ns", "b", "3")
	c := NewIndexer(MetaNamespaceKeyFunc, Indexers{"name": failingIndex}).(*cache)
	require.NoError(t, c.Add(a1))

	txns := []Transaction{
		{a2, TransactionTypeAdd},                                      // exists: becomes Update, prev a1
		{b1, TransactionTypeUpdate},                                   // absent: becomes Add, prev nil
		{b1, TransactionTypeDelete},                                   // prev b1
		{"bad", TransactionTypeAdd},                                   // key error
		{newPodIn("ns", "x", "4", "bad", "true"), TransactionTypeAdd}, // index error: stored
	}
	prev := make([]interface{}, len(txns))
	te := c.transactionWithPrevious(txns, prev)
	require.NotNil(t, te)
	assert.Equal(t, []int{0, 1, 2, 4}, te.SuccessfulIndices)
	assert.Len(t, te.Errors, 2)
	assert.Equal(t, TransactionTypeAdd, txns[4].Type)
	assert.Nil(t, prev[4])
	assert.Equal(t, []TransactionType{TransactionTypeUpdate, TransactionTypeAdd, TransactionTypeDelete},
		[]TransactionType{txns[0].Type, txns[1].Type, txns[2].Type})
	assert.Same(t, a1, prev[0])
	assert.Nil(t, prev[1])
	assert.Same(t, b1, prev[2])
	assert.Equal(t, map[string]interface{}{"ns/a": a2, "ns/x": txns[4].Object}, storeContents(t, c))

	assert.NotNil(t, c.transactionWithPrevious(txns, nil), "prev too short")

	old, existed, err := c.updateWithPrevious(newPodIn("ns", "a", "5"))
	require.NoError(t, err)
	assert.True(t, existed)
	assert.Same(t, a2, old)
	old, existed, err = c.updateWithPrevious(b1)
	require.NoError(t, err)
	assert.False(t, existed)
	assert.Nil(t, old)
	_, _, err = c.updateWithPrevious("bad")
	assert.Error(t, err)
}

func TestStoreTransactionUsesGivenKeys(t *testing.T) {
	kf := &countingKeyFunc{}
	c := NewIndexer(kf.fn, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}).(*cache)
	a1, a2, b1 := newPod("a", "1"), newPod("a", "2"), newPod("b", "1")
	require.NoError(t, c.Add(a1))
	kf.calls.Store(0)

	txns := []Transaction{
		{Type: TransactionTypeUpdate, Object: a2},
		{Type: TransactionTypeUpdate, Object: b1},
		{Type: TransactionTypeDelete, Object: a2},
	}
	prev := make([]interface{}, len(txns))
	require.Nil(t, c.transactionWithKeys(txns, []string{"ns/a", "ns/b", "ns/a"}, prev))
	assert.Equal(t, int64(0), kf.calls.Load(), "known keys are not computed again")
	assert.Equal(t, []TransactionType{TransactionTypeUpdate, TransactionTypeAdd, TransactionTypeDelete},
		[]TransactionType{txns[0].Type, txns[1].Type, txns[2].Type})
	assert.Equal(t, []interface{}{a1, nil, a2}, prev)
	assert.Equal(t, []string{"ns/b@1"}, describedStore(c))
	byNS, err := c.ByIndex(NamespaceIndex, "ns")
	require.NoError(t, err)
	assert.Equal(t, []interface{}{b1}, byNS)

	// Keys of the wrong length are ignored: the store computes them.
	txns = []Transaction{{Type: TransactionTypeUpdate, Object: a1}}
	require.Nil(t, c.transactionWithKeys(txns, []string{"x", "y"}, make([]interface{}, 1)))
	assert.Equal(t, int64(1), kf.calls.Load())
	assert.Equal(t, []string{"ns/a@1", "ns/b@1"}, describedStore(c))

	old, existed, err := c.updateKeyedWithPrevious("ns/a", a2)
	require.NoError(t, err)
	assert.True(t, existed)
	assert.Same(t, a1, old)
	c.deleteKeyed("ns/b", b1)
	assert.Equal(t, int64(1), kf.calls.Load())
	assert.Equal(t, []string{"ns/a@2"}, describedStore(c))
}
