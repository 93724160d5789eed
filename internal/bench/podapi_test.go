package bench

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func podAPIClient(t *testing.T, a *PodAPI) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: a.URL(), QPS: -1})
	require.NoError(t, err)
	return cs
}

// requireSamePod fails unless got is want (TypeMeta aside, which the API
// leaves out of items and events): their protobuf encodings are equal.
func requireSamePod(t *testing.T, want, got *v1.Pod, msgAndArgs ...interface{}) {
	t.Helper()
	w, err := want.Marshal()
	require.NoError(t, err)
	g, err := got.Marshal()
	require.NoError(t, err)
	require.Equal(t, w, g, msgAndArgs...)
}

func TestPodSetChange(t *testing.T) {
	base, err := NewPodSet(250)
	require.NoError(t, err)
	assert.Equal(t, PodSetBaseRV+250, base.ResourceVersion())
	for _, tc := range []struct{ percent, changed int }{{1, 3}, {10, 25}, {100, 250}} {
		next, changed, err := base.Change(tc.percent)
		require.NoError(t, err)
		assert.Equal(t, tc.changed, changed, "percent %d", tc.percent)
		assert.Equal(t, base.ResourceVersion()+changed, next.ResourceVersion())
		step := 100 / tc.percent
		for i := range base.Len() {
			var pod v1.Pod
			require.NoError(t, pod.Unmarshal(next.pods[i]))
			want := NewPod(i, strconv.Itoa(base.PodResourceVersion(i)))
			if i%step == 0 {
				want.ResourceVersion = strconv.Itoa(base.ResourceVersion() + 1 + i/step)
				want.Annotations[PodSetChangedAnnotation] = PodSetChangedValue
			}
			requireSamePod(t, want, &pod, "pod %d at %d%%", i, tc.percent)
			require.Equal(t, want.ResourceVersion, strconv.Itoa(next.PodResourceVersion(i)))
		}
	}
	for _, percent := range []int{0, 3, 101} {
		_, _, err := base.Change(percent)
		assert.Error(t, err, "percent %d", percent)
	}
}

func TestPodAPIList(t *testing.T) {
	base, err := NewPodSet(1100)
	require.NoError(t, err)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		paging PodAPIPaging
		rv     string
		limit  int64
		pages  int
	}{
		{"watch cache, at 0", PagingLikeWatchCache, "0", 500, 1},
		{"watch cache, at a version", PagingLikeWatchCache, "1200", 500, 1},
		{"watch cache, latest", PagingLikeWatchCache, "", 500, 3},
		{"watch cache, no limit", PagingLikeWatchCache, "", 0, 1},
		{"always, at 0", PagingAlways, "0", 500, 3},
		{"always, at a version", PagingAlways, "1200", 400, 3},
		{"always, no limit", PagingAlways, "0", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewPodAPI(base, tc.paging)
			require.NoError(t, err)
			defer a.Close()
			pods := podAPIClient(t, a).CoreV1().Pods("")
			opts := metav1.ListOptions{ResourceVersion: tc.rv, Limit: tc.limit}
			var got []v1.Pod
			pages := 0
			for {
				list, err := pods.List(ctx, opts)
				require.NoError(t, err)
				pages++
				assert.Equal(t, strconv.Itoa(base.ResourceVersion()), list.ResourceVersion)
				got = append(got, list.Items...)
				if list.Continue == "" {
					break
				}
				if pages == 1 {
					// A page continues the snapshot its list started from.
					require.NoError(t, a.Expire(mustChange(t, base, 100)))
				}
				opts = metav1.ListOptions{Continue: list.Continue, Limit: tc.limit}
			}
			assert.Equal(t, tc.pages, pages)
			require.Len(t, got, base.Len())
			for i := range got {
				want := NewPod(i, strconv.Itoa(base.PodResourceVersion(i)))
				requireSamePod(t, want, &got[i], "pod %d", i)
			}
			r := a.Requests()
			if tc.pages > 1 {
				assert.Equal(t, PodAPIRequests{Pages: int64(tc.pages)}, r)
			} else {
				assert.Equal(t, PodAPIRequests{Lists: 1}, r)
			}
		})
	}
}

func mustChange(t *testing.T, s *PodSet, percent int) *PodSet {
	t.Helper()
	next, _, err := s.Change(percent)
	require.NoError(t, err)
	return next
}

func TestPodAPIRefuses(t *testing.T) {
	base, err := NewPodSet(10)
	require.NoError(t, err)
	a, err := NewPodAPI(base, PagingAlways)
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	pods := podAPIClient(t, a).CoreV1().Pods("")

	_, err = pods.List(ctx, metav1.ListOptions{Continue: "999/0", Limit: 5})
	assert.True(t, apierrors.IsResourceExpired(err), "unknown snapshot: %v", err)
	_, err = pods.List(ctx, metav1.ListOptions{Continue: "1010/5", ResourceVersion: "1010", Limit: 5})
	assert.True(t, apierrors.IsBadRequest(err), "continue with a resourceVersion: %v", err)
	_, err = podAPIClient(t, a).CoreV1().Pods("team-1").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsNotFound(err), "namespaced path: %v", err)

	json, err := kubernetes.NewForConfig(&rest.Config{Host: a.URL(), ContentConfig: rest.ContentConfig{
		ContentType: "application/json", AcceptContentTypes: "application/json"}})
	require.NoError(t, err)
	_, err = json.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	assert.Equal(t, int32(http.StatusNotAcceptable), status.Status().Code)
	assert.Equal(t, int64(4), a.Requests().Refused)
}

// nextEvent returns the next event of w, failing after a while.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "the watch ended")
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
		return watch.Event{}
	}
}

func requireExpired(t *testing.T, w watch.Interface) {
	t.Helper()
	ev := nextEvent(t, w)
	require.Equal(t, watch.Error, ev.Type)
	err := apierrors.FromObject(ev.Object)
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)
	select {
	case _, ok := <-w.ResultChan():
		assert.False(t, ok, "the watch goes on after its ERROR event")
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not end after its ERROR event")
	}
}

func TestPodAPIWatch(t *testing.T) {
	base, err := NewPodSet(600)
	require.NoError(t, err)
	next := mustChange(t, base, 10)
	a, err := NewPodAPI(base, PagingLikeWatchCache)
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	pods := podAPIClient(t, a).CoreV1().Pods("")

	// A streaming list: every pod, then the bookmark that ends the initial
	// events, then a watch.
	stream, err := pods.Watch(ctx, metav1.ListOptions{
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks: true, ResourceVersion: "",
	})
	require.NoError(t, err)
	defer stream.Stop()
	for i := range base.Len() {
		ev := nextEvent(t, stream)
		require.Equal(t, watch.Added, ev.Type)
		want := NewPod(i, strconv.Itoa(base.PodResourceVersion(i)))
		got, ok := ev.Object.(*v1.Pod)
		require.True(t, ok, "event %d carries a %T", i, ev.Object)
		requireSamePod(t, want, got, "pod %d", i)
	}
	ev := nextEvent(t, stream)
	require.Equal(t, watch.Bookmark, ev.Type)
	bookmark := ev.Object.(*v1.Pod)
	assert.Equal(t, strconv.Itoa(base.ResourceVersion()), bookmark.ResourceVersion)
	assert.Equal(t, "true", bookmark.Annotations[metav1.InitialEventsAnnotationKey])

	// A watch from the set's version: quiet until the version expires.
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.Itoa(base.ResourceVersion())})
	require.NoError(t, err)
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("unexpected event %v", ev)
	case <-time.After(20 * time.Millisecond):
	}
	n, _ := a.OpenWatches()
	assert.Equal(t, 2, n)
	require.NoError(t, a.Expire(next))
	requireExpired(t, stream)
	requireExpired(t, w)
	assert.Error(t, a.Expire(base), "going back")

	// Later watches from an expired version fail at once; from the new
	// version they are quiet.
	old, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.Itoa(base.ResourceVersion())})
	require.NoError(t, err)
	defer old.Stop()
	requireExpired(t, old)
	fresh, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.Itoa(next.ResourceVersion())})
	require.NoError(t, err)
	defer fresh.Stop()
	select {
	case ev := <-fresh.ResultChan():
		t.Fatalf("unexpected event %v", ev)
	case <-time.After(20 * time.Millisecond):
	}
	assert.Equal(t, PodAPIRequests{Streams: 1, Watches: 3, ExpiredWatches: 1}, a.Requests())

	// Reset ends open watches quietly and serves the given set.
	a.Reset(base)
	select {
	case _, ok := <-fresh.ResultChan():
		assert.False(t, ok)
	case <-time.After(30 * time.Second):
		t.Fatal("Reset did not end the watch")
	}
	list, err := pods.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(base.ResourceVersion()), list.ResourceVersion)
	assert.Equal(t, PodAPIRequests{Lists: 1}, a.Requests())
}
