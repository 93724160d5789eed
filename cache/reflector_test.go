package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"syscall"
	"testing"
	"time"

	fcache "github.com/kinformer/kinformer/cache/testing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

func statusError(code int32, reason metav1.StatusReason) *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: string(reason)}
}

func tooLargeErr() error {
	err := apierrors.NewTimeoutError("too large resource version", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	return err
}

// TestReflectorScenarios runs scripted servers through Run in LIST mode and
// checks the requests made, the store operations and the errors reported.
func TestReflectorScenarios(t *testing.T) {
	expired := apierrors.NewResourceExpired("too old resource version: 1 (5)")
	cases := []struct {
		name        string
		lists       []fakeapi.ListAnswer
		watches     []fakeapi.WatchAnswer
		maxInternal time.Duration
		wantLists   []metav1.ListOptions
		wantWatch   []metav1.ListOptions
		wantOps     []string
		wantErrs    []string
	}{
		{
			name: "paged list, events, bookmark, closed watch resumes without relist",
			lists: []fakeapi.ListAnswer{
				{Object: newPodList("10", "c1", newPod("p1", "1"), newPod("p2", "2"))},
				{Object: newPodList("10", "", newPod("p3", "3"))},
			},
			watches: []fakeapi.WatchAnswer{{Events: []watch.Event{
				newEvent(watch.Added, newPod("p4", "11")),
				newEvent(watch.Modified, newPod("p1", "12")),
				newEvent(watch.Deleted, newPod("p2", "13")),
				newEvent(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "14"}}),
			}}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {Continue: "c1", Limit: 500}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "14", AllowWatchBookmarks: true},
			},
			wantOps: []string{
				"replace [ns/p1@1 ns/p2@2 ns/p3@3] 10",
				"add ns/p4@11", "rv 11",
				"update ns/p1@12", "rv 12",
				"delete ns/p2@13", "rv 13",
				"bookmark 14", "rv 14",
			},
		},
		{
			name:      "server ignores the limit",
			lists:     []fakeapi.ListAnswer{{Object: newPodList("5", "", newPod("a", "1"), newPod("b", "2"), newPod("c", "3"))}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{{ResourceVersion: "5", AllowWatchBookmarks: true}},
			wantOps:   []string{"replace [ns/a@1 ns/b@2 ns/c@3] 5"},
		},
		{
			name: "expired continue token falls back to one full list at the same resource version",
			lists: []fakeapi.ListAnswer{
				{Object: newPodList("10", "c1", newPod("a", "1"))},
				{Err: expired},
				{Object: newPodList("11", "", newPod("a", "1"), newPod("b", "11"))},
			},
			wantLists: []metav1.ListOptions{
				{ResourceVersion: "0", Limit: 500},
				{Continue: "c1", Limit: 500},
				{ResourceVersion: "0"},
			},
			wantWatch: []metav1.ListOptions{{ResourceVersion: "11", AllowWatchBookmarks: true}},
			wantOps:   []string{"replace [ns/a@1 ns/b@11] 11"},
		},
		{
			name: "410 in the watch relists at the last resource version, unpaged",
			lists: []fakeapi.ListAnswer{
				{Object: newPodList("10", "", newPod("p1", "1"))},
				{Object: newPodList("20", "", newPod("p1", "15"), newPod("p2", "16"))},
			},
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p2", "11")), newEvent(watch.Error, &expired.ErrStatus)}},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "11"}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "20", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [ns/p1@1] 10", "add ns/p2@11", "rv 11", "replace [ns/p1@15 ns/p2@16] 20"},
			wantErrs: []string{"expired"},
		},
		{
			name: "expired relist retries at once with the latest data",
			lists: []fakeapi.ListAnswer{
				{Object: newPodList("10", "", newPod("p1", "1"))},
				{Err: expired},
				{Object: newPodList("30", "", newPod("p9", "29"))},
			},
			watches: []fakeapi.WatchAnswer{{Events: []watch.Event{newEvent(watch.Error, &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonGone})}}},
			wantLists: []metav1.ListOptions{
				{ResourceVersion: "0", Limit: 500},
				{ResourceVersion: "10"},
				{ResourceVersion: ""},
			},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "30", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [ns/p1@1] 10", "replace [ns/p9@29] 30"},
			wantErrs: []string{"expired"},
		},
		{
			name: "too large resource version on relist retries with the latest data",
			lists: []fakeapi.ListAnswer{
				{Object: newPodList("20", "")},
				{Err: tooLargeErr()},
				{Object: newPodList("30", "")},
			},
			watches:   []fakeapi.WatchAnswer{{Events: []watch.Event{newEvent(watch.Error, &expired.ErrStatus)}}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "20"}, {ResourceVersion: ""}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "20", AllowWatchBookmarks: true},
				{ResourceVersion: "30", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [] 20", "replace [] 30"},
			wantErrs: []string{"expired"},
		},
		{
			name: "very short watch is an error and relists",
			lists: []fakeapi.ListAnswer{
				{Object: newPodList("10", "", newPod("p1", "1"))},
				{Object: newPodList("10", "", newPod("p1", "1"))},
			},
			watches:   []fakeapi.WatchAnswer{{}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "10"}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "10", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [ns/p1@1] 10", "replace [ns/p1@1] 10"},
			wantErrs: []string{"short"},
		},
		{
			name:  "refused connection and 429 on watch open back off and retry without relist",
			lists: []fakeapi.ListAnswer{{Object: newPodList("10", "")}},
			watches: []fakeapi.WatchAnswer{
				{Err: syscall.ECONNREFUSED},
				{Err: apierrors.NewTooManyRequests("slow down", 0)},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "11"))}},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "11", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [] 10", "add ns/p1@11", "rv 11"},
			wantErrs: []string{"refused", "toomany"},
		},
		{
			name:  "429 error event resumes the watch after a backoff",
			lists: []fakeapi.ListAnswer{{Object: newPodList("10", "")}},
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "11")), newEvent(watch.Error, statusError(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests))}},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "11", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [] 10", "add ns/p1@11", "rv 11"},
			wantErrs: []string{"toomany"},
		},
		{
			name: "internal error event relists when retries are off",
			lists: []fakeapi.ListAnswer{
				{Object: newPodList("10", "")},
				{Object: newPodList("12", "")},
			},
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Error, statusError(http.StatusInternalServerError, metav1.StatusReasonInternalError))}},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "10"}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "12", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [] 10", "replace [] 12"},
			wantErrs: []string{"internal"},
		},
		{
			name:        "internal error event reopens the watch while retries are allowed",
			maxInternal: time.Minute,
			lists:       []fakeapi.ListAnswer{{Object: newPodList("10", "")}},
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Error, statusError(http.StatusInternalServerError, metav1.StatusReasonInternalError))}},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "10", AllowWatchBookmarks: true},
				{ResourceVersion: "10", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [] 10"},
			wantErrs: []string{"internal"},
		},
		{
			name: "list failure is returned and retried",
			lists: []fakeapi.ListAnswer{
				{Err: errors.New("boom")},
				{Object: newPodList("7", "", newPod("a", "7"))},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{{ResourceVersion: "7", AllowWatchBookmarks: true}},
			wantOps:   []string{"replace [ns/a@7] 7"},
			wantErrs:  []string{"other: failed to list *v1.Pod: boom"},
		},
		{
			name:  "non-retriable watch open error is returned and relists",
			lists: []fakeapi.ListAnswer{{Object: newPodList("7", "")}, {Object: newPodList("8", "")}},
			watches: []fakeapi.WatchAnswer{
				{Err: errors.New("forbidden")},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "7"}},
			wantWatch: []metav1.ListOptions{
				{ResourceVersion: "7", AllowWatchBookmarks: true},
				{ResourceVersion: "8", AllowWatchBookmarks: true},
			},
			wantOps:  []string{"replace [] 7", "replace [] 8"},
			wantErrs: []string{"other: forbidden"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().WithoutWatchList().ListAnswers(tc.lists...).WatchAnswers(tc.watches...)
			rec := newStoreRecorder()
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
			r.MaxInternalErrorRetryDuration = tc.maxInternal
			var errs watchErrors
			r.watchErrorHandler = errs.handler

			runUntilExhausted(t, r, s)

			gotLists := s.ListOptions()
			// Calls after the script (exhaustion) are not part of the scenario.
			if len(gotLists) > len(tc.wantLists) {
				gotLists = gotLists[:len(tc.wantLists)]
			}
			assert.Equal(t, tc.wantLists, gotLists, "list requests")
			assert.Equal(t, tc.wantWatch, watchOptionsWithoutTimeout(s), "watch requests")
			assert.Equal(t, tc.wantOps, rec.opsSnapshot(), "store operations")
			assert.Equal(t, tc.wantErrs, errorKinds(errs.snapshot()), "reported errors")
		})
	}
}

// unstructuredPod returns an unstructured v1 Pod.
func unstructuredPod(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

// TestReflectorWatchErrorEventWithoutStatus checks an ERROR event without a
// usable object.
func TestReflectorWatchErrorEventWithoutStatus(t *testing.T) {
	var nilStatus *metav1.Status
	for _, obj := range []runtime.Object{nil, nilStatus, newPod("x", "1")} {
		s := fakeapi.New().WithoutWatchList().
			ListAnswers(fakeapi.ListAnswer{Object: newPodList("5", "")}, fakeapi.ListAnswer{Object: newPodList("6", "")}).
			WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{{Type: watch.Error, Object: obj}}})
		rec := newStoreRecorder()
		r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
		var errs watchErrors
		r.watchErrorHandler = errs.handler
		runUntilExhausted(t, r, s)
		assert.Equal(t, []string{"replace [] 5", "replace [] 6"}, rec.opsSnapshot(), "an error event relists")
		require.Len(t, errs.snapshot(), 1)
	}
}

// TestReflectorEmptyResourceVersionKeepsLastSync checks that objects without
// a resourceVersion are stored without moving the resource version back.
func TestReflectorEmptyResourceVersionKeepsLastSync(t *testing.T) {
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("5", "")}).
		WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("a", "7")), newEvent(watch.Modified, newPod("a", ""))}})
	rec := newStoreRecorder()
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf"})
	runUntilExhausted(t, r, s)
	assert.Equal(t, []string{"replace [] 5", "add ns/a@7", "rv 7", "update ns/a@"}, rec.opsSnapshot())
	assert.Equal(t, "7", r.LastSyncResourceVersion())
	assert.Equal(t, []metav1.ListOptions{watchOptionsFrom("5"), watchOptionsFrom("7")}, watchOptionsWithoutTimeout(s))
}

// TestReflectorResourceVersionPropagation checks when watch events move the
// resource version (and reach a ResourceVersionUpdater).
func TestReflectorResourceVersionPropagation(t *testing.T) {
	cases := []struct {
		name    string
		listRV  string
		events  []watch.Event
		wantOps []string
		wantRV  string
	}{
		{
			name:    "from a list resource version every event counts",
			listRV:  "10",
			events:  []watch.Event{newEvent(watch.Added, newPod("a", "10")), newEvent(watch.Modified, newPod("a", "20")), newEvent(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "30"}}), newEvent(watch.Deleted, newPod("a", "40"))},
			wantOps: []string{"replace [] 10", "add ns/a@10", "rv 10", "update ns/a@20", "rv 20", "bookmark 30", "rv 30", "delete ns/a@40", "rv 40"},
			wantRV:  "40",
		},
		{
			name:    "from an empty list resource version synthetic ADDED events do not count",
			listRV:  "",
			events:  []watch.Event{newEvent(watch.Added, newPod("a", "12")), newEvent(watch.Added, newPod("b", "11")), newEvent(watch.Modified, newPod("a", "13")), newEvent(watch.Added, newPod("c", "14"))},
			wantOps: []string{"replace [] ", "add ns/a@12", "add ns/b@11", "update ns/a@13", "rv 13", "add ns/c@14", "rv 14"},
			wantRV:  "14",
		},
		{
			name:    "from resource version 0 synthetic ADDED events do not count",
			listRV:  "0",
			events:  []watch.Event{newEvent(watch.Added, newPod("a", "12")), newEvent(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "15"}})},
			wantOps: []string{"replace [] 0", "add ns/a@12", "bookmark 15", "rv 15"},
			wantRV:  "15",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList(tc.listRV, "")}).WatchAnswers(fakeapi.WatchAnswer{Events: tc.events})
			rec := newStoreRecorder()
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf"})
			runUntilExhausted(t, r, s)
			assert.Equal(t, tc.wantOps, rec.opsSnapshot())
			assert.Equal(t, tc.wantRV, r.LastSyncResourceVersion())
		})
	}
}

// TestReflectorOptionalStoreInterfaces checks that a store without the
// optional interfaces gets only the basic operations.
func TestReflectorOptionalStoreInterfaces(t *testing.T) {
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).
		WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("a", "2")), newEvent(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "3"}})}})
	rec := newStoreRecorder()
	r := NewReflectorWithOptions(s, &v1.Pod{}, plainStore{rec}, ReflectorOptions{Name: "rf"})
	runUntilExhausted(t, r, s)
	assert.Equal(t, []string{"replace [] 1", "add ns/a@2"}, rec.opsSnapshot())
	assert.Equal(t, "3", r.LastSyncResourceVersion())
}

// TestReflectorStoreErrorsDoNotStopTheWatch checks that store failures are
// logged and the watch goes on.
func TestReflectorStoreErrorsDoNotStopTheWatch(t *testing.T) {
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")}).
		WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("a", "2")), newEvent(watch.Modified, newPod("a", "3")), newEvent(watch.Deleted, newPod("a", "4")), newEvent(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "5"}}), newEvent(watch.Added, newPod("b", "6"))}})
	rec := newStoreRecorder()
	for _, verb := range []string{"add", "update", "delete", "bookmark"} {
		rec.fail(verb, errors.New(verb+" failed"))
	}
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf"})
	runUntilExhausted(t, r, s)
	assert.Equal(t, []string{"replace [] 1", "add ns/a@2", "rv 2", "update ns/a@3", "rv 3", "delete ns/a@4", "rv 4", "bookmark 5", "rv 5", "add ns/b@6", "rv 6"}, rec.opsSnapshot())
}

func TestReflectorListFailures(t *testing.T) {
	var nilList *v1.PodList
	tableList := &unstructured.UnstructuredList{}
	tableList.SetAPIVersion("meta.k8s.io/v1")
	tableList.SetKind("Table")
	cases := []struct {
		name    string
		lists   []fakeapi.ListAnswer
		replace error
		wantErr string
	}{
		{"error", []fakeapi.ListAnswer{{Err: errors.New("boom")}}, nil, "failed to list *v1.Pod: boom"},
		{"nil list", []fakeapi.ListAnswer{{Object: nil}}, nil, "failed to list *v1.Pod: the list call returned no object"},
		{"typed nil list", []fakeapi.ListAnswer{{Object: nilList}}, nil, "failed to list *v1.Pod: the list call returned no object"},
		{"not a list", []fakeapi.ListAnswer{{Object: newPod("a", "1")}}, nil, "failed to list *v1.Pod: unable to understand list result of type *v1.Pod"},
		{"table", []fakeapi.ListAnswer{{Object: tableList}}, nil, "failed to list *v1.Pod: unsupported list gvk: meta.k8s.io/v1, Kind=Table"},
		{"page error", []fakeapi.ListAnswer{{Object: newPodList("1", "c")}, {Err: errors.New("page")}}, nil, "failed to list *v1.Pod: page"},
		{"replace error", []fakeapi.ListAnswer{{Object: newPodList("1", "")}}, errors.New("nope"), "unable to sync list result: nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().WithoutWatchList().ListAnswers(tc.lists...)
			rec := newStoreRecorder()
			if tc.replace != nil {
				rec.fail("replace", tc.replace)
			}
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf"})
			err := r.ListAndWatchWithContext(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Empty(t, watchOptionsWithoutTimeout(s), "no watch after a failed list")
			assert.Equal(t, "", r.LastSyncResourceVersion())
		})
	}
}

func TestReflectorNilDependencies(t *testing.T) {
	r := NewReflector(nil, &v1.Pod{}, newStoreRecorder(), 0)
	assert.Error(t, r.ListAndWatchWithContext(context.Background()))
	r = NewReflector(fakeapi.New().WithoutWatchList(), &v1.Pod{}, nil, 0)
	assert.Error(t, r.ListAndWatchWithContext(context.Background()))
	r = NewReflector(&ListWatch{}, &v1.Pod{}, newStoreRecorder(), 0)
	r.useWatchList = false
	err := r.ListAndWatchWithContext(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "neither ListWithContextFunc nor ListFunc is set")
}

// TestListWatchDisablesChunkingSeesThroughTheWatchListWrapper checks that
// ListWatch.DisableChunking is found on a ListWatch, also when wrapped by
// ToListWatcherWithWatchListSemantics, and on nothing else.
func TestListWatchDisablesChunkingSeesThroughTheWatchListWrapper(t *testing.T) {
	s := fakeapi.New().WithoutWatchList()
	off := &ListWatch{ListWithContextFunc: s.ListWithContext, WatchFuncWithContext: s.WatchWithContext, DisableChunking: true}
	on := &ListWatch{ListWithContextFunc: s.ListWithContext, WatchFuncWithContext: s.WatchWithContext}
	assert.True(t, listWatchDisablesChunking(off))
	assert.True(t, listWatchDisablesChunking(ToListWatcherWithWatchListSemantics(off, s)))
	assert.False(t, listWatchDisablesChunking(on))
	assert.False(t, listWatchDisablesChunking(s))
	assert.False(t, listWatchDisablesChunking(nil))
}

// TestReflectorPaginatedFirstListIsRemembered checks that a first list
// (resourceVersion 0) answered in pages keeps later relists paged.
func TestReflectorPaginatedFirstListIsRemembered(t *testing.T) {
	expired := apierrors.NewResourceExpired("gone")
	s := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "c1", newPod("a", "1"))}, fakeapi.ListAnswer{Object: newPodList("10", "", newPod("b", "2"))}).
		WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Error, &expired.ErrStatus)}}).
		ListAnswers(fakeapi.ListAnswer{Object: newPodList("12", "", newPod("a", "1"))})
	r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
	runUntilExhausted(t, r, s)
	assert.Equal(t, []metav1.ListOptions{
		{ResourceVersion: "0", Limit: 500},
		{Continue: "c1", Limit: 500},
		{ResourceVersion: "10", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500}, // paged relist: not an exact snapshot (reflectorListOptions)
	}, s.ListOptions()[:3])
}

func TestNewReflectorDefaults(t *testing.T) {
	unstructuredNoGVK := &unstructured.Unstructured{}
	cases := []struct {
		name       string
		expected   interface{}
		options    ReflectorOptions
		wantDesc   string
		wantGVK    *schema.GroupVersionKind
		wantMinSec int64
	}{
		{name: "nil type", expected: nil, wantDesc: "<unspecified>", wantMinSec: 300},
		{name: "typed", expected: &v1.Pod{}, wantDesc: "*v1.Pod", wantMinSec: 300},
		{name: "unstructured with gvk", expected: unstructuredPod("", ""), wantDesc: "/v1, Kind=Pod", wantGVK: &schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, wantMinSec: 300},
		{name: "unstructured without gvk", expected: unstructuredNoGVK, wantDesc: "*unstructured.Unstructured", wantMinSec: 300},
		{name: "explicit description", expected: &v1.Pod{}, options: ReflectorOptions{TypeDescription: "pods"}, wantDesc: "pods", wantMinSec: 300},
		{name: "small watch timeout not honoured", expected: &v1.Pod{}, options: ReflectorOptions{MinWatchTimeout: time.Second}, wantDesc: "*v1.Pod", wantMinSec: 300},
		{name: "30m watch timeout", expected: &v1.Pod{}, options: ReflectorOptions{MinWatchTimeout: 30 * time.Minute}, wantDesc: "*v1.Pod", wantMinSec: 1800},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")})
			r := NewReflectorWithOptions(s, tc.expected, newStoreRecorder(), tc.options)
			assert.Equal(t, tc.wantDesc, r.TypeDescription())
			assert.Equal(t, tc.wantGVK, r.expectedGVK)
			assert.NotEmpty(t, r.Name())
			assert.NotContains(t, r.Name(), "cache/reflector.go", "the default name points outside the package")
			for i := 0; i < 50; i++ {
				got := *r.watchTimeoutSeconds()
				assert.GreaterOrEqual(t, got, tc.wantMinSec)
				assert.Less(t, got, 2*tc.wantMinSec)
			}
			runUntilExhausted(t, r, s)
			timeout := s.WatchOptions()[0].TimeoutSeconds
			require.NotNil(t, timeout)
			assert.GreaterOrEqual(t, *timeout, tc.wantMinSec)
			assert.Less(t, *timeout, 2*tc.wantMinSec)
		})
	}
}

func TestReflectorConstructors(t *testing.T) {
	s := fakeapi.New().WithoutWatchList()
	r := NewNamedReflector("named", s, &v1.Pod{}, newStoreRecorder(), time.Minute)
	assert.Equal(t, "named", r.Name())
	assert.Equal(t, time.Minute, r.resyncPeriod)

	r = NewReflector(s, &v1.Pod{}, newStoreRecorder(), 2*time.Minute)
	assert.NotEmpty(t, r.Name())
	assert.Equal(t, 2*time.Minute, r.resyncPeriod)
	assert.Nil(t, r.watchErrorHandler, "the default handler is DefaultWatchErrorHandler")

	indexer, r := NewNamespaceKeyedIndexerAndReflector(s, &v1.Pod{}, 3*time.Minute)
	require.NotNil(t, indexer)
	assert.Same(t, indexer, r.store.(Indexer))
	assert.Equal(t, 3*time.Minute, r.resyncPeriod)
	require.NoError(t, indexer.Add(newPod("a", "1")))
	byNS, err := indexer.ByIndex(NamespaceIndex, "ns")
	require.NoError(t, err)
	assert.Len(t, byNS, 1)
}

func verboseBufferedLogger(t *testing.T) (klog.Logger, func() string) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(10)))
	buffer := logger.GetSink().(ktesting.Underlier).GetBuffer()
	return logger, buffer.String
}

func TestDefaultWatchErrorHandler(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"expired", apierrors.NewResourceExpired("too old"), "INFO Watch closed reflector"},
		{"gone", apierrors.NewGone("gone"), "INFO Watch closed reflector"},
		{"eof", io.EOF, ""},
		{"wrapped eof", fmt.Errorf("read: %w", io.EOF), ""},
		{"unexpected eof", io.ErrUnexpectedEOF, "Watch closed with unexpected EOF"},
		{"other", errors.New("boom"), "Failed to watch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := verboseBufferedLogger(t)
			ctx := klog.NewContext(context.Background(), logger)
			r := NewNamedReflector("rf-handler", fakeapi.New().WithoutWatchList(), &v1.Pod{}, newStoreRecorder(), 0)
			DefaultWatchErrorHandler(ctx, r, tc.err)
			if tc.want == "" {
				assert.Empty(t, logs())
				return
			}
			assert.Contains(t, logs(), tc.want)
			assert.Contains(t, logs(), "rf-handler")
			DefaultWatchErrorHandler(ctx, nil, tc.err) // no panic without a reflector
		})
	}
}

// TestReflectorRunUsesDefaultWatchErrorHandler checks that without a handler
// Run passes the errors of ListAndWatch to DefaultWatchErrorHandler.
func TestReflectorRunUsesDefaultWatchErrorHandler(t *testing.T) {
	logger, logs := verboseBufferedLogger(t)
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Err: errors.New("list boom")}, fakeapi.ListAnswer{Object: newPodList("1", "")})
	r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(ctx)
	}()
	waitExhausted(t, s)
	cancel()
	<-done
	assert.Contains(t, logs(), "Failed to watch")
	assert.Contains(t, logs(), "list boom")
}

// TestReflectorLoggerOption checks that ReflectorOptions.Logger is used.
func TestReflectorLoggerOption(t *testing.T) {
	logger, logs := verboseBufferedLogger(t)
	s := fakeapi.New().WithoutWatchList().ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "")})
	r := NewReflectorWithOptions(s, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf-logged", Logger: &logger})
	runUntilExhausted(t, r, s)
	assert.Contains(t, logs(), "Caches populated")
	assert.Contains(t, logs(), "rf-logged")
}

// TestReflectorWithFakeClientset runs a Reflector on the fake clientset,
// which supports neither streaming lists nor paging: through
// ToListWatcherWithWatchListSemantics the Reflector lists and watches.
func TestReflectorWithFakeClientset(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	// NewSimpleClientset has the same list/watch tracker as NewClientset
	// without its costly (seconds under -race) managed-fields setup.
	client := fake.NewSimpleClientset(newPod("a", ""), newPod("b", "")) //nolint:staticcheck // see above
	pods := client.CoreV1().Pods(metav1.NamespaceAll)
	lw := ToListWatcherWithWatchListSemantics(&ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			return pods.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, options)
		},
	}, client)
	indexer, r := NewNamespaceKeyedIndexerAndReflector(lw, &v1.Pod{}, 0)
	assert.False(t, r.useWatchList)
	stop := startRun(t, r)

	names := func() []string {
		var out []string
		for _, key := range indexer.ListKeys() {
			out = append(out, key)
		}
		sort.Strings(out)
		return out
	}
	requireEventually(t, func() bool { return reflect.DeepEqual(names(), []string{"ns/a", "ns/b"}) }, "initial list")

	ctx := context.Background()
	_, err := client.CoreV1().Pods("ns").Create(ctx, newPod("c", ""), metav1.CreateOptions{})
	require.NoError(t, err)
	updated := newPod("a", "")
	updated.Labels = map[string]string{"x": "y"}
	_, err = client.CoreV1().Pods("ns").Update(ctx, updated, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, client.CoreV1().Pods("ns").Delete(ctx, "b", metav1.DeleteOptions{}))

	requireEventually(t, func() bool {
		obj, ok, _ := indexer.GetByKey("ns/a")
		return reflect.DeepEqual(names(), []string{"ns/a", "ns/c"}) && ok && obj.(*v1.Pod).Labels["x"] == "y"
	}, "watch events applied: %v", names())
	stop()
	assert.NotEmpty(t, r.LastSyncResourceVersion())
}

// TestReflectorWithFakeControllerSource runs a Reflector on the
// FakeControllerSource of cache/testing: it falls back from the streaming
// list to LIST, follows changes, and relists after the source forgets its
// history.
func TestReflectorWithFakeControllerSource(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	src := fcache.NewFakeControllerSource()
	src.Add(newPod("a", ""))
	store := NewStore(MetaNamespaceKeyFunc)
	r := NewReflectorWithOptions(src, &v1.Pod{}, store, ReflectorOptions{Name: "fcs", Backoff: tinyBackoff()})
	var errs watchErrors
	r.watchErrorHandler = errs.handler
	stop := startRun(t, r)
	keys := func() []string {
		k := store.ListKeys()
		sort.Strings(k)
		return k
	}
	requireEventually(t, func() bool { return reflect.DeepEqual(keys(), []string{"ns/a"}) }, "initial list")

	src.Add(newPod("b", ""))
	src.Delete(newPod("a", ""))
	requireEventually(t, func() bool { return reflect.DeepEqual(keys(), []string{"ns/b"}) && r.LastSyncResourceVersion() == "3" }, "watch: %v", keys())

	src.AddDropWatch(newPod("c", ""))
	src.ResetWatch()
	requireEventually(t, func() bool { return reflect.DeepEqual(keys(), []string{"ns/b", "ns/c"}) }, "relist: %v", keys())
	stop()
	src.Shutdown()
	// The streaming list is refused (strconv.Atoi of the empty
	// resourceVersion) and LIST is used, without a report, as in client-go.
	assert.Equal(t, []string{"expired"}, errorKinds(errs.snapshot()))
}

// TestReflectorMisbehavingWatcher checks a Watcher that returns both a watch
// and an error, or neither.
func TestReflectorMisbehavingWatcher(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, streaming)
		w := fakeapi.NewWatch(nil, true)
		calls := 0
		lw := &ListWatch{
			ListFunc: func(metav1.ListOptions) (runtime.Object, error) { return newPodList("1", ""), nil },
			WatchFunc: func(metav1.ListOptions) (watch.Interface, error) {
				calls++
				if calls == 1 {
					return w, errors.New("both")
				}
				return nil, nil
			},
		}
		r := NewReflectorWithOptions(lw, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf"})
		var errs watchErrors
		r.watchErrorHandler = errs.handler
		err := r.ListAndWatchWithContext(context.Background())
		require.Error(t, err, "streaming=%v", streaming)
		assert.True(t, w.IsStopped(), "streaming=%v", streaming)
		if streaming {
			// The stream failed ("both"), LIST was used (no report, as in
			// client-go), then the plain watch returned neither a watch nor
			// an error.
			assert.Empty(t, errs.snapshot())
			assert.Contains(t, err.Error(), "neither a watch nor an error")
		} else {
			assert.Contains(t, err.Error(), "both")
		}
	}
}

func TestReflectorDefaultName(t *testing.T) {
	lw := &ListWatch{}
	named := NewReflectorWithOptions(lw, &v1.Pod{}, NewStore(MetaNamespaceKeyFunc), ReflectorOptions{Name: "mine"})
	require.Equal(t, "mine", named.Name())

	// Built under the test runner: the closest frame outside this package's folder names it.
	require.Contains(t, NewReflector(lw, &v1.Pod{}, NewStore(MetaNamespaceKeyFunc), 0).Name(), "testing.go:")

	// Built from a goroutine whose only frames are this package's and the runtime's: the type names it.
	got := make(chan string)
	go buildReflectorFromBareGoroutine(got)
	require.Equal(t, "reflector *v1.Pod", <-got)
}

func buildReflectorFromBareGoroutine(name chan<- string) {
	name <- NewReflector(&ListWatch{}, &v1.Pod{}, NewStore(MetaNamespaceKeyFunc), 0).Name()
}

// TestReflectorWithoutStoreOrListerWatcherFailsWithoutPanic: a Reflector
// built with a nil store or ListerWatcher, or with a nil queue of this
// package, is built without panic, and ListAndWatch reports a missing
// store or ListerWatcher as an error.
func TestReflectorWithoutStoreOrListerWatcherFailsWithoutPanic(t *testing.T) {
	ctx := context.Background()
	err := NewReflector(fakeapi.New(), &v1.Pod{}, nil, 0).ListAndWatchWithContext(ctx)
	assert.ErrorContains(t, err, "no store")
	err = NewReflector(nil, &v1.Pod{}, newStoreRecorder(), 0).ListAndWatchWithContext(ctx)
	assert.ErrorContains(t, err, "no ListerWatcher")
	assert.NotPanics(t, func() { NewReflector(fakeapi.New(), &v1.Pod{}, (*RealFIFO)(nil), 0) })
	assert.NotPanics(t, func() { NewReflector(fakeapi.New(), &v1.Pod{}, (*DeltaFIFO)(nil), 0) })
}
