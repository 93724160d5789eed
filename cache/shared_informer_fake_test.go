package cache

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// fakeClientLW returns a ListerWatcher over the fake clientset's pods
// and a channel that receives a value whenever a watch is opened.
func fakeClientLW(cs *fake.Clientset) (ListerWatcher, <-chan struct{}) {
	opened := make(chan struct{}, 100)
	cs.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		opened <- struct{}{}
		return false, nil, nil
	})
	lw := &ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods("").List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods("").Watch(ctx, options)
		},
	}
	return ToListWatcherWithWatchListSemantics(lw, cs), opened
}

func TestSharedInformerWithFakeClientset(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(klogContext(t))
			defer cancel()
			cs := fake.NewClientset(newPod("a", "1"), newPod("b", "2"))
			lw, opened := fakeClientLW(cs)
			informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{UseDeltaFIFO: q.useDeltaFIFO})
			rec := &eventRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, informer)
			waitUntilSynced(t, reg.HasSyncedChecker())
			<-opened

			pods := cs.CoreV1().Pods("ns")
			_, err = pods.Create(ctx, newPod("c", "3"), metav1.CreateOptions{})
			require.NoError(t, err)
			_, err = pods.Update(ctx, newPod("a", "4"), metav1.UpdateOptions{})
			require.NoError(t, err)
			require.NoError(t, pods.Delete(ctx, "b", metav1.DeleteOptions{}))

			got := rec.waitN(t, 5)
			want := []string{
				"add ns/a@1 initial=true",
				"add ns/b@2 initial=true",
				"add ns/c@3 initial=false",
				"update ns/a@1 -> ns/a@4",
				"delete ns/b@2",
			}
			if q.useDeltaFIFO {
				assert.Equal(t, perObject(want), perObject(got))
			} else {
				assert.Equal(t, want, got)
			}
			assert.Equal(t, []string{"ns/a@4", "ns/c@3"}, describedStore(informer.GetStore()))
		})
	}
}
