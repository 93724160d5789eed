package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientcache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

// mutationStep drives a MutationCache and its backing indexer.
type mutationStep struct {
	store    []*v1.Pod // objects written to the backing store (Update)
	unstore  []*v1.Pod // objects deleted from the backing store
	mutation []*v1.Pod
	onAdd    []*v1.Pod
	onDelete []*v1.Pod
	advance  time.Duration
	// expectations for GetByKey("ns/a"): want is the expected resource
	// version and missing expects no object; neither skips the check.
	want    string
	missing bool
}

func TestMutationCacheGetByKey(t *testing.T) {
	cases := []struct {
		name        string
		includeAdds bool
		steps       []mutationStep
		// clientGo marks scenarios where client-go behaves the same.
		clientGo bool
	}{
		{name: "newer mutation wins", clientGo: true, steps: []mutationStep{
			{store: []*v1.Pod{newPodWithUID("a", "5", "u1")}, want: "5"},
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}, want: "7"},
			{store: []*v1.Pod{newPodWithUID("a", "7", "u1")}, want: "7"},
			{store: []*v1.Pod{newPodWithUID("a", "8", "u1")}, want: "8"},
		}},
		{name: "older mutation ignored", clientGo: true, steps: []mutationStep{
			{store: []*v1.Pod{newPodWithUID("a", "5", "u1")}},
			{mutation: []*v1.Pod{newPodWithUID("a", "4", "u1")}, want: "5"},
		}},
		{name: "mutation expires", clientGo: true, steps: []mutationStep{
			{store: []*v1.Pod{newPodWithUID("a", "5", "u1")}},
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}, want: "7"},
			{advance: 2 * time.Minute, want: "5"},
		}},
		{name: "missing from store without include adds", clientGo: true, steps: []mutationStep{
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}, missing: true},
		}},
		{name: "include adds returns created object on every read", includeAdds: true, steps: []mutationStep{
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}, want: "7"},
			{want: "7"},
			{want: "7"},
		}},
		{name: "delete leaves tombstone blocking stale mutation", includeAdds: true, clientGo: true, steps: []mutationStep{
			{store: []*v1.Pod{newPodWithUID("a", "5", "u1")}},
			{mutation: []*v1.Pod{newPodWithUID("a", "6", "u1")}, want: "6"},
			{unstore: []*v1.Pod{newPodWithUID("a", "8", "u1")}, onDelete: []*v1.Pod{newPodWithUID("a", "8", "u1")}, missing: true},
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}, missing: true},
			{mutation: []*v1.Pod{newPodWithUID("a", "9", "u1")}, missing: true}, // same UID: still deleted
			{mutation: []*v1.Pod{newPodWithUID("a", "10", "u2")}, want: "10"},   // re-created
		}},
		{name: "on add drops caught up mutation", includeAdds: true, clientGo: true, steps: []mutationStep{
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}},
			{onAdd: []*v1.Pod{newPodWithUID("a", "7", "u1")}, missing: true},
		}},
		{name: "on add keeps newer mutation", includeAdds: true, steps: []mutationStep{
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}},
			{onAdd: []*v1.Pod{newPodWithUID("a", "6", "u1")}, want: "7"},
		}},
		{name: "non integer versions prefer the store", steps: []mutationStep{
			{store: []*v1.Pod{newPodWithUID("a", "abc", "u1")}, want: "abc"},
			{mutation: []*v1.Pod{newPodWithUID("a", "7", "u1")}, want: "abc"},
			{mutation: []*v1.Pod{newPodWithUID("a", "xyz", "u1")}, want: "abc"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			backing := NewIndexer(MetaNamespaceKeyFunc, Indexers{})
			mc := newMutationCache(klog.Background(), backing, MutationCacheOptions{TTL: time.Minute, IncludeAdds: tc.includeAdds}, clk)
			for i, s := range tc.steps {
				for _, p := range s.store {
					require.NoError(t, backing.Update(p))
				}
				for _, p := range s.unstore {
					require.NoError(t, backing.Delete(p))
				}
				for _, p := range s.onAdd {
					mc.OnAddOrUpdate(p)
				}
				for _, p := range s.onDelete {
					mc.OnDelete(p)
				}
				for _, p := range s.mutation {
					mc.Mutation(p)
				}
				clk.Step(s.advance)
				if s.want == "" && !s.missing {
					continue
				}
				obj, ok, err := mc.GetByKey("ns/a")
				require.NoError(t, err)
				if s.missing {
					assert.False(t, ok, "step %d", i)
					assert.Nil(t, obj)
					continue
				}
				require.True(t, ok, "step %d", i)
				assert.Equal(t, s.want, obj.(*v1.Pod).ResourceVersion, "step %d", i)
			}
		})
	}
}

// TestMutationCacheMatchesClientGo replays the scenarios both
// implementations agree on through client-go's MutationCache (without time
// steps, which client-go cannot fake).
func TestMutationCacheMatchesClientGo(t *testing.T) {
	type op struct {
		kind string
		pod  *v1.Pod
	}
	scenarios := [][]op{
		{{"store", newPodWithUID("a", "5", "u1")}, {"mutation", newPodWithUID("a", "7", "u1")}, {"store", newPodWithUID("a", "8", "u1")}},
		{{"store", newPodWithUID("a", "5", "u1")}, {"mutation", newPodWithUID("a", "4", "u1")}},
		{{"store", newPodWithUID("a", "5", "u1")}, {"mutation", newPodWithUID("a", "6", "u1")}, {"unstore", newPodWithUID("a", "8", "u1")},
			{"onDelete", newPodWithUID("a", "8", "u1")}, {"mutation", newPodWithUID("a", "7", "u1")}, {"mutation", newPodWithUID("a", "10", "u2")}},
		{{"mutation", newPodWithUID("a", "7", "u1")}, {"onAdd", newPodWithUID("a", "7", "u1")}},
		{{"store", newPodWithUID("a", "5", "u1")}, {"mutation", newPodWithUID("a", "9", "u1")}, {"onAdd", newPodWithUID("a", "6", "u1")}},
	}
	for si, sc := range scenarios {
		ours := NewIndexer(MetaNamespaceKeyFunc, Indexers{})
		theirs := clientcache.NewIndexer(clientcache.MetaNamespaceKeyFunc, clientcache.Indexers{})
		mcOurs := NewIntegerResourceVersionMutationCache(klog.Background(), ours, ours, time.Minute, false)
		mcTheirs := clientcache.NewIntegerResourceVersionMutationCache(klog.Background(), theirs, theirs, time.Minute, false)
		for oi, o := range sc {
			switch o.kind {
			case "store":
				require.NoError(t, ours.Update(o.pod))
				require.NoError(t, theirs.Update(o.pod))
			case "unstore":
				require.NoError(t, ours.Delete(o.pod))
				require.NoError(t, theirs.Delete(o.pod))
			case "mutation":
				mcOurs.Mutation(o.pod)
				mcTheirs.Mutation(o.pod)
			case "onAdd":
				mcOurs.OnAddOrUpdate(o.pod)
				mcTheirs.OnAddOrUpdate(o.pod)
			case "onDelete":
				mcOurs.OnDelete(o.pod)
				mcTheirs.OnDelete(o.pod)
			}
			a, okA, errA := mcOurs.GetByKey("ns/a")
			b, okB, errB := mcTheirs.GetByKey("ns/a")
			require.NoError(t, errA)
			require.NoError(t, errB)
			require.Equal(t, okB, okA, "scenario %d op %d", si, oi)
			if okA {
				assert.Equal(t, b.(*v1.Pod).ResourceVersion, a.(*v1.Pod).ResourceVersion, "scenario %d op %d", si, oi)
			}
		}
	}
}

func TestMutationCacheByIndex(t *testing.T) {
	indexers := Indexers{"app": appIndex}
	cases := []struct {
		name        string
		includeAdds bool
		want        map[string]string // key -> rv
	}{
		{name: "store objects, newer mutation overlaid", want: map[string]string{"ns/a": "7", "ns/b": "2"}},
		{name: "include adds", includeAdds: true, want: map[string]string{"ns/a": "7", "ns/b": "2", "ns/new": "9", "ns/moved": "12"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			backing := NewIndexer(MetaNamespaceKeyFunc, indexers)
			require.NoError(t, backing.Add(newPodWithUID("a", "1", "ua", "app", "web")))
			require.NoError(t, backing.Add(newPodWithUID("b", "2", "ub", "app", "web")))
			require.NoError(t, backing.Add(newPodWithUID("c", "3", "uc", "app", "db")))
			require.NoError(t, backing.Add(newPodWithUID("moved", "4", "um", "app", "db")))
			mc := NewIntegerResourceVersionMutationCacheWithOptions(klog.Background(), backing, MutationCacheOptions{
				Indexer: backing, IncludeAdds: tc.includeAdds, MaxCacheSize: -1, TTL: -1,
			})
			mc.Mutation(newPodWithUID("a", "7", "ua", "app", "web"))
			mc.Mutation(newPodWithUID("new", "9", "un", "app", "web"))
			mc.Mutation(newPodWithUID("other", "10", "uo", "app", "db"))
			mc.Mutation(newPodWithUID("moved", "12", "um", "app", "web"))
			mc.Mutation(newPodWithUID("c", "2", "uc", "app", "web")) // older than the store's
			objs, err := mc.ByIndex("app", "web")
			require.NoError(t, err)
			got := map[string]string{}
			for _, o := range objs {
				got[mustKey(o)] = o.(*v1.Pod).ResourceVersion
			}
			assert.Equal(t, tc.want, got)

			_, err = mc.ByIndex("nope", "x")
			assert.Error(t, err)
		})
	}
	t.Run("no indexer", func(t *testing.T) {
		mc := NewIntegerResourceVersionMutationCache(klog.Background(), NewStore(MetaNamespaceKeyFunc), nil, 0, false)
		_, err := mc.ByIndex("app", "web")
		assert.Error(t, err)
	})
}

func TestMutationCacheBadInput(t *testing.T) {
	backing := NewIndexer(MetaNamespaceKeyFunc, Indexers{})
	mc := NewIntegerResourceVersionMutationCache(klog.Background(), backing, backing, time.Minute, true)
	mc.Mutation("not an object")
	mc.Mutation(nil)
	var nilPod *v1.Pod
	mc.Mutation(nilPod)
	mc.OnAddOrUpdate(nilPod)
	mc.OnDelete(nilPod)
	mc.OnAddOrUpdate(nil)
	mc.OnDelete(nil)
	_, ok, err := mc.GetByKey("ns/a")
	require.NoError(t, err)
	assert.False(t, ok)

	tomb := &mutationTombstone{}
	tomb.Name = "x"
	cp := tomb.DeepCopyObject().(*mutationTombstone)
	assert.Equal(t, "x", cp.GetName())
	assert.NotNil(t, cp.GetObjectKind())
	var _ runtime.Object = cp
}
