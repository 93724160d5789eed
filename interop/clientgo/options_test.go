package clientgo

import (
	"context"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
	"github.com/kinformer/kinformer/listadmission"
)

// TestMemoryLeanRunsAfterTheTransformAndSharesOneTablePerOption: informers
// built with one WithMemoryLean Option keep their objects without
// managedFields, after the transform set with SetTransform, and equal label
// values, the transform's included, share one copy across those informers;
// an informer built with another WithMemoryLean call has a table of its own,
// and one without the Option keeps the objects as listed.
func TestMemoryLeanRunsAfterTheTransformAndSharesOneTablePerOption(t *testing.T) {
	listed := func(name string) *fakeapi.API {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       "ns",
			Name:            name,
			ResourceVersion: "1",
			// A copy of its own in every pod, as decoding makes it.
			Labels:        map[string]string{"app": strings.Clone("frontend")},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}}
		list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []v1.Pod{*pod}}
		return fakeapi.New().WithoutWatchList().
			ListAnswers(fakeapi.ListAnswer{Object: list}).
			WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	}
	// tier adds a label whose value is a copy of its own for every object.
	tier := func(obj any) (any, error) {
		pod := obj.(*v1.Pod)
		pod.Labels["tier"] = strings.Clone("web")
		return pod, nil
	}
	// cached runs informer until it has synced and returns its one pod.
	cached := func(t *testing.T, informer toolscache.SharedIndexInformer) *v1.Pod {
		t.Helper()
		start(t, informer)
		waitDone(t, informer.HasSyncedChecker())
		objs := informer.GetStore().List()
		require.Len(t, objs, 1)
		return objs[0].(*v1.Pod)
	}
	sameData := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

	shared := WithMemoryLean()
	a := NewSharedIndexInformer(listed("a"), &v1.Pod{}, 0, nil, shared)
	require.NoError(t, a.SetTransform(tier))
	b := NewSharedIndexInformer(listed("b"), &v1.Pod{}, 0, nil, shared)
	require.NoError(t, b.SetTransform(tier))
	own := NewSharedIndexInformer(listed("c"), &v1.Pod{}, 0, nil, WithMemoryLean())
	plain := NewSharedIndexInformer(listed("d"), &v1.Pod{}, 0, nil)

	podA, podB, podC, podD := cached(t, a), cached(t, b), cached(t, own), cached(t, plain)
	for _, p := range []*v1.Pod{podA, podB, podC} {
		assert.Nil(t, p.ManagedFields, "%s: managedFields dropped", p.Name)
	}
	assert.Equal(t, map[string]string{"app": "frontend", "tier": "web"}, podA.Labels)
	assert.True(t, sameData(podA.Labels["app"], podB.Labels["app"]), "one table for the informers of one Option")
	assert.True(t, sameData(podA.Labels["tier"], podB.Labels["tier"]), "the lean step runs on the transform's result")
	assert.False(t, sameData(podA.Labels["app"], podC.Labels["app"]), "another WithMemoryLean call, another table")
	assert.Len(t, podD.ManagedFields, 1, "without the Option the object is kept as listed")
	assert.False(t, sameData(podA.Labels["app"], podD.Labels["app"]))
}

// TestListAdmissionHoldsTheSecondInformersListUntilTheFirstCompletes: two
// informers built with WithListAdmission of one admission that admits one
// list at a time: while the first informer's LIST is held, the second
// makes none; once the first completes, the second lists and both sync.
func TestListAdmissionHoldsTheSecondInformersListUntilTheFirstCompletes(t *testing.T) {
	admission := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	gate := fakeapi.NewGate()
	t.Cleanup(gate.Open)
	emptyList := func() fakeapi.ListAnswer {
		return fakeapi.ListAnswer{Object: &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}}
	}
	first := fakeapi.New().WithoutWatchList().
		ListAnswers(emptyList()).WatchAnswers(fakeapi.WatchAnswer{Hold: true}).
		BeforeList(func(ctx context.Context, _ metav1.ListOptions) error { return gate.Pass(ctx) })
	second := fakeapi.New().WithoutWatchList().
		ListAnswers(emptyList()).WatchAnswers(fakeapi.WatchAnswer{Hold: true})

	a := NewSharedIndexInformer(first, &v1.Pod{}, 0, nil, WithListAdmission(admission), WithListAdmissionPriority(1))
	start(t, a)
	select {
	case <-gate.Arrived():
	case <-time.After(waitTimeout):
		t.Fatal("the first informer did not list")
	}
	b := NewSharedIndexInformer(second, &v1.Pod{}, 0, nil, WithListAdmission(admission))
	start(t, b)
	// The second informer waits for the slot the held list has.
	require.Eventually(t, func() bool { return admission.Stats().Waiting == 1 }, waitTimeout, tick)
	assert.Empty(t, second.ListOptions(), "no LIST while the first holds the only slot")

	gate.Release(nil)
	waitDone(t, a.HasSyncedChecker())
	waitDone(t, b.HasSyncedChecker())
	assert.Len(t, second.ListOptions(), 1)
}
