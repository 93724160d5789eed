package framework

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func rfPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

// rfReceive reads the resource versions (and types) delivered by w until
// want events arrived, then checks that nothing else is pending.
func rfReceive(t *testing.T, w watch.Interface, want []string) {
	t.Helper()
	var got []string
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "watch closed early; got %v", got)
			got = append(got, string(ev.Type)+"@"+ev.Object.(*v1.Pod).ResourceVersion)
		case <-time.After(5 * time.Second):
			t.Fatalf("timed out; got %v, want %v", got, want)
		}
	}
	assert.Equal(t, want, got)
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Errorf("unexpected event %v", ev)
		}
	default:
	}
}

func rfListRVs(t *testing.T, f *FakeControllerSource) (string, []string) {
	t.Helper()
	obj, err := f.List(metav1.ListOptions{})
	require.NoError(t, err)
	list := obj.(*v1.List)
	var names []string
	for _, item := range list.Items {
		names = append(names, item.Object.(*v1.Pod).Name+"@"+item.Object.(*v1.Pod).ResourceVersion)
	}
	return list.ResourceVersion, names
}

func TestFakeControllerSourceResourceVersions(t *testing.T) {
	f := NewFakeControllerSource()
	defer f.Shutdown()
	f.Add(rfPod("foo"))
	f.Modify(rfPod("foo"))
	f.Modify(rfPod("foo"))

	w1, err := f.Watch(metav1.ListOptions{ResourceVersion: "1"})
	require.NoError(t, err)
	rfReceive(t, w1, []string{"MODIFIED@2", "MODIFIED@3"})
	w2, err := f.Watch(metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	rfReceive(t, w2, []string{"MODIFIED@3"})
	w3, err := f.Watch(metav1.ListOptions{ResourceVersion: "3"})
	require.NoError(t, err)
	rfReceive(t, w3, nil)
	w0, err := f.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	rfReceive(t, w0, []string{"ADDED@1", "MODIFIED@2", "MODIFIED@3"})

	rv, items := rfListRVs(t, f)
	assert.Equal(t, "3", rv)
	assert.Equal(t, []string{"foo@3"}, items)

	f.Delete(rfPod("foo"))
	rfReceive(t, w3, []string{"DELETED@4"})
	rv, items = rfListRVs(t, f)
	assert.Equal(t, "4", rv)
	assert.Empty(t, items)
	for _, w := range []watch.Interface{w0, w1, w2, w3} {
		w.Stop()
	}
}

func TestFakeControllerSourceResetWatch(t *testing.T) {
	f := NewFakeControllerSource()
	defer f.Shutdown()
	f.Add(rfPod("foo"))
	f.Modify(rfPod("foo"))
	f.Modify(rfPod("foo"))
	old, err := f.Watch(metav1.ListOptions{ResourceVersion: "3"})
	require.NoError(t, err)

	f.ResetWatch()
	select {
	case _, ok := <-old.ResultChan():
		assert.False(t, ok, "current watches are closed")
	case <-time.After(5 * time.Second):
		t.Fatal("old watch not closed")
	}
	_, err = f.Watch(metav1.ListOptions{ResourceVersion: "1"})
	assert.True(t, apierrors.IsResourceExpired(err), "history is gone: %v", err)

	w, err := f.Watch(metav1.ListOptions{ResourceVersion: "3"})
	require.NoError(t, err)
	f.Modify(rfPod("foo"))
	rfReceive(t, w, []string{"MODIFIED@4"})
	f.Modify(rfPod("foo"))
	// RV 3 is just before the recorded history (4, 5): all of it is known.
	w2, err := f.Watch(metav1.ListOptions{ResourceVersion: "3"})
	require.NoError(t, err)
	rfReceive(t, w2, []string{"MODIFIED@4", "MODIFIED@5"})
	_, err = f.Watch(metav1.ListOptions{ResourceVersion: "2"})
	assert.True(t, apierrors.IsResourceExpired(err))
	w.Stop()
	w2.Stop()
}

func TestFakeControllerSourceDropWatch(t *testing.T) {
	f := NewFakeControllerSource()
	defer f.Shutdown()
	w, err := f.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	f.AddDropWatch(rfPod("a"))
	f.Add(rfPod("b"))
	f.ModifyDropWatch(rfPod("b"))
	f.DeleteDropWatch(rfPod("a"))
	rfReceive(t, w, []string{"ADDED@2"})
	_, items := rfListRVs(t, f)
	assert.Equal(t, []string{"b@3"}, items)
	replay, err := f.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	rfReceive(t, replay, []string{"ADDED@1", "ADDED@2", "MODIFIED@3", "DELETED@4"})
	w.Stop()
	replay.Stop()
}

func TestFakeControllerSourceErrors(t *testing.T) {
	f := NewFakeControllerSource()
	f.Add(rfPod("a"))
	_, err := f.Watch(metav1.ListOptions{ResourceVersion: ""})
	assert.Error(t, err, "a streaming list (no resource version) is not supported")
	_, err = f.Watch(metav1.ListOptions{ResourceVersion: "7"})
	assert.Error(t, err, "future resource version")

	f.ListError = apierrors.NewServiceUnavailable("down")
	_, err = f.List(metav1.ListOptions{})
	assert.True(t, apierrors.IsServiceUnavailable(err))
	f.ListError = nil

	// An object without metadata is ignored.
	f.Add(&metav1.Status{})
	rv, items := rfListRVs(t, f)
	assert.Equal(t, "1", rv)
	assert.Len(t, items, 1)

	f.Shutdown()
	f.Shutdown()
	_, err = f.List(metav1.ListOptions{})
	assert.Error(t, err)
	_, err = f.Watch(metav1.ListOptions{ResourceVersion: "1"})
	assert.Error(t, err)
	f.Add(rfPod("late"))
	f.ResetWatch()
}

func TestFakeControllerSourceListCopies(t *testing.T) {
	f := NewFakeControllerSource()
	defer f.Shutdown()
	f.Add(rfPod("a"))
	obj, err := f.List(metav1.ListOptions{})
	require.NoError(t, err)
	obj.(*v1.List).Items[0].Object.(*v1.Pod).Labels = map[string]string{"changed": "yes"}
	_, err = f.List(metav1.ListOptions{})
	require.NoError(t, err)
	for _, stored := range f.Items {
		assert.Empty(t, stored.(*v1.Pod).Labels, "callers get copies")
	}
}

func TestFakePVAndPVCControllerSources(t *testing.T) {
	pv := NewFakePVControllerSource()
	defer pv.Shutdown()
	pv.Add(&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}})
	obj, err := pv.List(metav1.ListOptions{})
	require.NoError(t, err)
	pvList := obj.(*v1.PersistentVolumeList)
	assert.Equal(t, "1", pvList.ResourceVersion)
	require.Len(t, pvList.Items, 1)
	assert.Equal(t, "pv1", pvList.Items[0].Name)

	pvc := NewFakePVCControllerSource()
	defer pvc.Shutdown()
	pvc.Add(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}})
	pvc.Add(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c2"}})
	obj, err = pvc.List(metav1.ListOptions{})
	require.NoError(t, err)
	pvcList := obj.(*v1.PersistentVolumeClaimList)
	assert.Equal(t, "2", pvcList.ResourceVersion)
	assert.Len(t, pvcList.Items, 2)
}
