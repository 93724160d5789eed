package informers_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/informers"
)

// TestWithRelistPageByPage: a factory's informers relist atomically by
// default, with one unpaged LIST at the last resourceVersion as client-go
// does; WithRelistPageByPage makes them relist page by page, which asks for
// pages (limit 500) of data not older than that version.
func TestWithRelistPageByPage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []informers.SharedInformerOption
		relist metav1.ListOptions
	}{
		{"atomic by default", nil, metav1.ListOptions{ResourceVersion: "5"}},
		{"page by page", []informers.SharedInformerOption{informers.WithRelistPageByPage()},
			metav1.ListOptions{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := newFakeClientset()
			var mu sync.Mutex
			var lists []metav1.ListOptions
			client.PrependReactor("list", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				lists = append(lists, action.(clienttesting.ListActionImpl).GetListOptions())
				return true, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []corev1.Pod{*newPod("ns", "a", nil)}}, nil
			})
			watchers := make(chan *watch.FakeWatcher, 10)
			client.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
				w := watch.NewFake()
				watchers <- w
				return true, w, nil
			})
			factory := informers.NewSharedInformerFactoryWithOptions(client, 0, tc.opts...)
			factory.Core().V1().Pods().Informer()
			startAndSync(t, factory)

			var w *watch.FakeWatcher
			select {
			case w = <-watchers:
			case <-time.After(waitTimeout):
				t.Fatal("no watch was opened")
			}
			w.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(lists) >= 2
			}, waitTimeout, time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tc.relist, lists[1])
		})
	}
}
