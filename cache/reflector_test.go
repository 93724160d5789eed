package cache

import (
	"errors"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func rfStatus(code int32, reason metav1.StatusReason) *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: string(reason)}
}

func rfTooLargeErr() error {
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
		lists       []rfListStep
		watches     []rfWatchStep
		maxInternal time.Duration
		wantLists   []metav1.ListOptions
		wantWatch   []metav1.ListOptions
		wantOps     []string
		wantErrs    []string
	}{
		{
			name: "paged list, events, bookmark, closed watch resumes without relist",
			lists: []rfListStep{
				{obj: rfPodList("10", "c1", rfPod("p1", "1"), rfPod("p2", "2"))},
				{obj: rfPodList("10", "", rfPod("p3", "3"))},
			},
			watches: []rfWatchStep{{events: []watch.Event{
				rfEv(watch.Added, rfPod("p4", "11")),
				rfEv(watch.Modified, rfPod("p1", "12")),
				rfEv(watch.Deleted, rfPod("p2", "13")),
				rfEv(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "14"}}),
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
			lists:     []rfListStep{{obj: rfPodList("5", "", rfPod("a", "1"), rfPod("b", "2"), rfPod("c", "3"))}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{{ResourceVersion: "5", AllowWatchBookmarks: true}},
			wantOps:   []string{"replace [ns/a@1 ns/b@2 ns/c@3] 5"},
		},
		{
			name: "expired continue token falls back to one full list at the same resource version",
			lists: []rfListStep{
				{obj: rfPodList("10", "c1", rfPod("a", "1"))},
				{err: expired},
				{obj: rfPodList("11", "", rfPod("a", "1"), rfPod("b", "11"))},
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
			lists: []rfListStep{
				{obj: rfPodList("10", "", rfPod("p1", "1"))},
				{obj: rfPodList("20", "", rfPod("p1", "15"), rfPod("p2", "16"))},
			},
			watches: []rfWatchStep{
				{events: []watch.Event{rfEv(watch.Added, rfPod("p2", "11")), rfEv(watch.Error, &expired.ErrStatus)}},
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
			lists: []rfListStep{
				{obj: rfPodList("10", "", rfPod("p1", "1"))},
				{err: expired},
				{obj: rfPodList("30", "", rfPod("p9", "29"))},
			},
			watches: []rfWatchStep{{events: []watch.Event{rfEv(watch.Error, &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonGone})}}},
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
			lists: []rfListStep{
				{obj: rfPodList("20", "")},
				{err: rfTooLargeErr()},
				{obj: rfPodList("30", "")},
			},
			watches:   []rfWatchStep{{events: []watch.Event{rfEv(watch.Error, &expired.ErrStatus)}}},
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
			lists: []rfListStep{
				{obj: rfPodList("10", "", rfPod("p1", "1"))},
				{obj: rfPodList("10", "", rfPod("p1", "1"))},
			},
			watches:   []rfWatchStep{{}},
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
			lists: []rfListStep{{obj: rfPodList("10", "")}},
			watches: []rfWatchStep{
				{err: syscall.ECONNREFUSED},
				{err: apierrors.NewTooManyRequests("slow down", 0)},
				{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "11"))}},
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
			lists: []rfListStep{{obj: rfPodList("10", "")}},
			watches: []rfWatchStep{
				{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "11")), rfEv(watch.Error, rfStatus(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests))}},
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
			lists: []rfListStep{
				{obj: rfPodList("10", "")},
				{obj: rfPodList("12", "")},
			},
			watches: []rfWatchStep{
				{events: []watch.Event{rfEv(watch.Error, rfStatus(http.StatusInternalServerError, metav1.StatusReasonInternalError))}},
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
			lists:       []rfListStep{{obj: rfPodList("10", "")}},
			watches: []rfWatchStep{
				{events: []watch.Event{rfEv(watch.Error, rfStatus(http.StatusInternalServerError, metav1.StatusReasonInternalError))}},
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
			lists: []rfListStep{
				{err: errors.New("boom")},
				{obj: rfPodList("7", "", rfPod("a", "7"))},
			},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{{ResourceVersion: "7", AllowWatchBookmarks: true}},
			wantOps:   []string{"replace [ns/a@7] 7"},
			wantErrs:  []string{"other: failed to list *v1.Pod: boom"},
		},
		{
			name:  "non-retriable watch open error is returned and relists",
			lists: []rfListStep{{obj: rfPodList("7", "")}, {obj: rfPodList("8", "")}},
			watches: []rfWatchStep{
				{err: errors.New("forbidden")},
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
			s := rfNewScript(true).list(tc.lists...).watch(tc.watches...)
			rec := rfNewRecorder()
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: rfTinyBackoff()})
			r.MaxInternalErrorRetryDuration = tc.maxInternal
			var errs rfErrors
			r.watchErrorHandler = errs.handler

			rfRunUntilExhausted(t, r, s)

			gotLists := s.listOptions()
			// Calls after the script (exhaustion) are not part of the scenario.
			if len(gotLists) > len(tc.wantLists) {
				gotLists = gotLists[:len(tc.wantLists)]
			}
			assert.Equal(t, tc.wantLists, gotLists, "list requests")
			assert.Equal(t, tc.wantWatch, s.watchOptions(), "watch requests")
			assert.Equal(t, tc.wantOps, rec.opsSnapshot(), "store operations")
			assert.Equal(t, tc.wantErrs, rfErrKinds(errs.snapshot()), "reported errors")
		})
	}
}
