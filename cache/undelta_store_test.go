package cache

import (
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUndeltaStorePushesSnapshots(t *testing.T) {
	var pushes [][]string
	push := func(objs []interface{}) {
		keys := keysOfObjects(objs)
		pushes = append(pushes, keys)
	}
	u := NewUndeltaStore(push, MetaNamespaceKeyFunc)
	a, b := newPodIn("ns", "a", "1"), newPodIn("ns", "b", "2")
	require.NoError(t, u.Add(a))
	require.NoError(t, u.Add(b))
	require.NoError(t, u.Update(newPodIn("ns", "a", "3")))
	require.NoError(t, u.Delete(b))
	require.NoError(t, u.Replace([]interface{}{b}, "5"))
	assert.Error(t, u.Add("no key"), "failures push nothing")
	assert.Equal(t, [][]string{
		{"ns/a"},
		{"ns/a", "ns/b"},
		{"ns/a", "ns/b"},
		{"ns/a"},
		{"ns/b"},
	}, pushes)
	// Reads go to the underlying store without pushing.
	_, ok, err := u.Get(b)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Len(t, pushes, 5)
}

func TestUndeltaStoreLastPushIsFinalState(t *testing.T) {
	var mu sync.Mutex
	var last []string
	pushes := 0
	u := NewUndeltaStore(func(objs []interface{}) {
		mu.Lock()
		defer mu.Unlock()
		last = keysOfObjects(objs)
		pushes++
	}, MetaNamespaceKeyFunc)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				assert.NoError(t, u.Add(newPodIn("ns", strconv.Itoa(w)+"-"+strconv.Itoa(i), "1")))
			}
		}(w)
	}
	wg.Wait()
	keys := u.ListKeys()
	sort.Strings(keys)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 200, pushes, "one push per change")
	assert.Equal(t, keys, last, "the last push carries the final content")
}

func TestUndeltaStoreNilPushFunc(t *testing.T) {
	u := &UndeltaStore{Store: NewStore(MetaNamespaceKeyFunc)}
	require.NoError(t, u.Add(newPodIn("ns", "a", "1")))
	assert.Len(t, u.List(), 1)
}
