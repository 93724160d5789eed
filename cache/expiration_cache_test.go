package cache

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/sets"
	clocktesting "k8s.io/utils/clock/testing"
)

// ttlStore returns an ExpirationCache with a TTLPolicy on a fake clock.
func ttlStore(ttl time.Duration) (*ExpirationCache, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	return &ExpirationCache{
		cacheStorage:     NewThreadSafeStore(Indexers{}, Indices{}),
		keyFunc:          MetaNamespaceKeyFunc,
		clock:            clk,
		expirationPolicy: &TTLPolicy{TTL: ttl, Clock: clk},
	}, clk
}

func TestExpirationCacheTTL(t *testing.T) {
	a, b := newPodIn("ns", "a", "1"), newPodIn("ns", "b", "2")
	cases := []struct {
		name     string
		ttl      time.Duration
		steps    func(c *ExpirationCache, clk *clocktesting.FakeClock)
		wantKeys []string
	}{
		{name: "fresh entries live", ttl: time.Minute, steps: func(c *ExpirationCache, clk *clocktesting.FakeClock) {
			require.NoError(t, c.Add(a))
			clk.Step(time.Minute)
		}, wantKeys: []string{"ns/a"}},
		{name: "old entries expire", ttl: time.Minute, steps: func(c *ExpirationCache, clk *clocktesting.FakeClock) {
			require.NoError(t, c.Add(a))
			clk.Step(30 * time.Second)
			require.NoError(t, c.Add(b))
			clk.Step(31 * time.Second)
		}, wantKeys: []string{"ns/b"}},
		{name: "update refreshes", ttl: time.Minute, steps: func(c *ExpirationCache, clk *clocktesting.FakeClock) {
			require.NoError(t, c.Add(a))
			clk.Step(50 * time.Second)
			require.NoError(t, c.Update(a))
			clk.Step(50 * time.Second)
		}, wantKeys: []string{"ns/a"}},
		{name: "replace stamps all", ttl: time.Minute, steps: func(c *ExpirationCache, clk *clocktesting.FakeClock) {
			require.NoError(t, c.Add(a))
			clk.Step(2 * time.Minute)
			require.NoError(t, c.Replace([]interface{}{a, b}, "9"))
			clk.Step(30 * time.Second)
		}, wantKeys: []string{"ns/a", "ns/b"}},
		{name: "zero ttl never expires", ttl: 0, steps: func(c *ExpirationCache, clk *clocktesting.FakeClock) {
			require.NoError(t, c.Add(a))
			clk.Step(1000 * time.Hour)
		}, wantKeys: []string{"ns/a"}},
		{name: "delete", ttl: time.Minute, steps: func(c *ExpirationCache, clk *clocktesting.FakeClock) {
			require.NoError(t, c.Add(a))
			require.NoError(t, c.Add(b))
			require.NoError(t, c.Delete(a))
		}, wantKeys: []string{"ns/b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := ttlStore(tc.ttl)
			tc.steps(c, clk)
			keys := c.ListKeys()
			sort.Strings(keys)
			assert.Equal(t, tc.wantKeys, keys)
			assert.Equal(t, tc.wantKeys, keysOfObjects(c.List()))
			for _, k := range []string{"ns/a", "ns/b"} {
				obj, ok, err := c.GetByKey(k)
				require.NoError(t, err)
				want := false
				for _, w := range tc.wantKeys {
					want = want || w == k
				}
				assert.Equal(t, want, ok, k)
				if ok {
					assert.Equal(t, k, mustKey(obj), "timestamps are stripped")
				}
			}
			// Expired entries are gone from the storage, not just hidden.
			assert.Len(t, c.cacheStorage.ListKeys(), len(tc.wantKeys))
		})
	}
}

func TestExpirationCacheErrorsAndVersions(t *testing.T) {
	c, _ := ttlStore(time.Minute)
	var ke KeyError
	assert.ErrorAs(t, c.Add("x"), &ke)
	assert.ErrorAs(t, c.Delete("x"), &ke)
	_, _, err := c.Get("x")
	assert.ErrorAs(t, err, &ke)
	assert.ErrorAs(t, c.Replace([]interface{}{"x"}, "1"), &ke)
	assert.NoError(t, c.Resync())

	require.NoError(t, c.Add(newPodIn("ns", "a", "4")))
	assert.Equal(t, "4", c.LastStoreSyncResourceVersion())
	c.Bookmark("5")
	assert.Equal(t, "5", c.LastStoreSyncResourceVersion())
	require.NoError(t, c.Replace(nil, "6"))
	assert.Equal(t, "6", c.LastStoreSyncResourceVersion())
	require.NoError(t, c.Delete(newPodIn("ns", "a", "7")))
	assert.Equal(t, "7", c.LastStoreSyncResourceVersion())
	obj, ok, err := c.Get(newPodIn("ns", "a", ""))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Nil(t, obj)
}

func TestTTLPolicy(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	e := &TimestampedEntry{Obj: 1, Timestamp: clk.Now()}
	cases := []struct {
		ttl, age time.Duration
		want     bool
	}{
		{time.Second, 0, false},
		{time.Second, time.Second, false},
		{time.Second, time.Second + 1, true},
		{0, time.Hour, false},
		{-time.Second, time.Hour, false},
	}
	for _, tc := range cases {
		c := clocktesting.NewFakeClock(clk.Now().Add(tc.age))
		assert.Equal(t, tc.want, (&TTLPolicy{TTL: tc.ttl, Clock: c}).IsExpired(e), "ttl %v age %v", tc.ttl, tc.age)
	}
	assert.False(t, (&TTLPolicy{TTL: time.Hour}).IsExpired(&TimestampedEntry{Timestamp: time.Now()}), "nil clock uses real time")
	s := NewTTLStore(MetaNamespaceKeyFunc, time.Hour)
	require.NoError(t, s.Add(newPodIn("ns", "a", "1")))
	assert.Len(t, s.List(), 1)
}

func TestFakeExpirationStore(t *testing.T) {
	deleted := make(chan string, 10)
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	policy := &FakeExpirationPolicy{
		NeverExpire: sets.New("ns/keep"),
		RetrieveKeyFunc: func(obj interface{}) (string, error) {
			return MetaNamespaceKeyFunc(obj.(*TimestampedEntry).Obj)
		},
	}
	s := NewFakeExpirationStore(MetaNamespaceKeyFunc, deleted, policy, clk)
	require.NoError(t, s.Add(newPodIn("ns", "keep", "1")))
	require.NoError(t, s.Add(newPodIn("ns", "drop", "1")))
	assert.Equal(t, []string{"ns/keep"}, keysOfObjects(s.List()))
	select {
	case k := <-deleted:
		assert.Equal(t, "ns/drop", k)
	case <-time.After(5 * time.Second):
		t.Fatal("expired key not reported")
	}
	// Explicit deletes are not reported as expiries.
	require.NoError(t, s.Delete(newPodIn("ns", "keep", "2")))
	assert.Empty(t, s.List())
	assert.Len(t, deleted, 0)

	t.Run("nil channel and nil key func", func(t *testing.T) {
		s := NewFakeExpirationStore(MetaNamespaceKeyFunc, nil, &FakeExpirationPolicy{NeverExpire: sets.New("ns/keep")}, nil)
		require.NoError(t, s.Add(newPodIn("ns", "keep", "1")))
		require.NoError(t, s.Add(newPodIn("ns", "drop", "1")))
		assert.Equal(t, []string{"ns/keep"}, keysOfObjects(s.List()))
		assert.Equal(t, []string{"ns/keep"}, s.ListKeys(), "expired entries are removed even without a channel")
	})
	t.Run("key error expires", func(t *testing.T) {
		p := &FakeExpirationPolicy{NeverExpire: sets.New(""), RetrieveKeyFunc: func(interface{}) (string, error) {
			return "", assert.AnError
		}}
		assert.True(t, p.IsExpired(&TimestampedEntry{}))
		assert.True(t, p.IsExpired(nil))
	})
}
