package invariant

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
)

func ivPod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func ivTarget(store cache.Store, rec *Recorder, fresh map[string]string, log *WriteLog) Target {
	return Target{Name: "pods", Store: store, Recorder: rec, Writes: log,
		List: func(context.Context) (map[string]string, error) { return fresh, nil }}
}

// TestCheck walks each invariant through a consistent case and the ways it can break, and
// checks the exact divergences reported.
func TestCheck(t *testing.T) {
	fresh := map[string]string{"ns/a": "12", "ns/b": "7"}
	consistent := func() (cache.Store, *Recorder) {
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		require.NoError(t, store.Add(ivPod("a", "12")))
		require.NoError(t, store.Add(ivPod("b", "7")))
		rec := NewRecorder("pods")
		h := rec.Handler()
		h.OnAdd(ivPod("a", "5"), true)
		h.OnUpdate(ivPod("a", "5"), ivPod("a", "12"))
		h.OnAdd(ivPod("b", "7"), false)
		h.OnAdd(ivPod("c", "8"), false)
		h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/c", Obj: ivPod("c", "8")})
		h.OnAdd(ivPod("d", "9"), false)
		h.OnDelete(ivPod("d", "10"))
		return store, rec
	}
	cases := []struct {
		name   string
		mutate func(store cache.Store, rec *Recorder, log *WriteLog)
		want   []Divergence
	}{
		{name: "consistent", mutate: func(cache.Store, *Recorder, *WriteLog) {}},
		{
			name: "store missing, stale and extra",
			mutate: func(store cache.Store, _ *Recorder, _ *WriteLog) {
				require.NoError(t, store.Delete(ivPod("b", "7")))
				require.NoError(t, store.Update(ivPod("a", "11")))
				require.NoError(t, store.Add(ivPod("z", "3")))
			},
			want: []Divergence{
				{"pods", "ns/a", "stale in the store", "resourceVersion 12", "resourceVersion 11"},
				{"pods", "ns/b", "missing from the store", "resourceVersion 7", "absent"},
				{"pods", "ns/z", "extra in the store", "absent", "resourceVersion 3"},
			},
		},
		{
			name: "last events",
			mutate: func(_ cache.Store, rec *Recorder, _ *WriteLog) {
				h := rec.Handler()
				h.OnDelete(ivPod("b", "7"))      // b still exists
				h.OnAdd(ivPod("e", "13"), false) // e is gone but the handler never heard
			},
			want: []Divergence{
				{"pods", "ns/b", "last event", "add/update at 7", "delete at 7"},
				{"pods", "ns/e", "last event", "delete", "add at 13"},
			},
		},
		{
			name: "resourceVersion goes back",
			mutate: func(_ cache.Store, rec *Recorder, _ *WriteLog) {
				rec.Handler().OnUpdate(ivPod("a", "12"), ivPod("a", "6"))
				rec.Handler().OnUpdate(ivPod("a", "6"), ivPod("a", "12"))
			},
			want: []Divergence{{"pods", "ns/a", "resourceVersion went back", ">= 12 (update event)", "6"}},
		},
		{
			name: "writer's confirmed writes disagree with the server",
			mutate: func(_ cache.Store, _ *Recorder, log *WriteLog) {
				log.Deleted("ns/a")
				log.Wrote(KindAdd, "ns/q", "4")
				log.Wrote(KindUpdate, "ns/b", "9")
				log.Deleted("ns/u")
				log.Uncertain(KindAdd, "ns/u") // outcome unknown: not checked
			},
			want: []Divergence{
				{"pods", "ns/a", "writer", "deleted (confirmed by the server)", "present at 12"},
				{"pods", "ns/b", "writer", "resourceVersion >= 9", "7"},
				{"pods", "ns/q", "writer", "present at >= 4 (confirmed by the server)", "absent"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, rec := consistent()
			log := NewWriteLog()
			tc.mutate(store, rec, log)
			got, err := Check(context.Background(), ivTarget(store, rec, fresh, log))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestWaitConsistent waits for a store that converges, round after round of fresh LISTs,
// and gives up at the first round on a resourceVersion that went back. It counts the rounds
// (the LISTs) rather than timing them, so that a loaded machine changes nothing.
func TestWaitConsistent(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	rec := NewRecorder("pods")
	fresh := map[string]string{"ns/a": "3"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lists := 0
	catchUp := func() error { // the informer catching up after the first round
		if err := store.Add(ivPod("a", "3")); err != nil {
			return err
		}
		rec.Handler().OnAdd(ivPod("a", "3"), false)
		return nil
	}
	target := ivTarget(store, rec, fresh, nil)
	target.List = func(context.Context) (map[string]string, error) {
		lists++
		switch lists {
		case 2:
			if catchUp != nil {
				if err := catchUp(); err != nil {
					return nil, err
				}
			}
		case 3:
			cancel() // a third round is one too many in both cases: stop at once
		}
		return fresh, nil
	}
	// The timeout only stops a WaitConsistent that never returns.
	ds, _ := WaitConsistent(ctx, []Target{target}, time.Minute)
	require.Empty(t, ds, Summary(ds, 5))
	require.Equal(t, 2, lists, "rounds until the store converged")

	rec.Handler().OnUpdate(ivPod("a", "3"), ivPod("a", "2"))
	lists, catchUp = 0, nil
	ds, _ = WaitConsistent(ctx, []Target{target}, time.Minute)
	require.Equal(t, 1, lists, "rounds: a regression never heals, so there is no point waiting")
	require.NoError(t, ctx.Err())
	require.Equal(t, []Divergence{
		{"pods", "ns/a", "last event", "add/update at 3", "update at 2"},
		{"pods", "ns/a", "resourceVersion went back", ">= 3 (update event)", "2"},
	}, ds)
	require.Contains(t, Summary(ds, 1), "2 divergence(s)")
}
