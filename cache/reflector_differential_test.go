package cache

import (
	"context"
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
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	clientcache "k8s.io/client-go/tools/cache"
)

// rfDiffScenario is a scripted server; script builds a fresh copy of it
// for each reflector.
type rfDiffScenario struct {
	name        string
	watchList   bool
	pageSize    int64
	maxInternal time.Duration
	script      func() *rfScriptLW
}

// rfDiffResult is what one reflector did with a scenario.
type rfDiffResult struct {
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	ops     []string
	content []string
	lastRV  string
}

// rfDiffRun runs a reflector built by start on a fresh script until the
// script is used up.
func rfDiffRun(t *testing.T, sc rfDiffScenario, start func(s *rfScriptLW, rec *rfRecorder) (run func(ctx context.Context), lastRV func() string)) rfDiffResult {
	t.Helper()
	s := sc.script()
	s.noWatchList = !sc.watchList
	rec := rfNewRecorder()
	rec.sortReplace = true // client-go's streaming list replaces in map order
	run, lastRV := start(s, rec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	select {
	case <-s.exhausted:
	case <-time.After(rfWait):
		t.Errorf("script not consumed")
	}
	cancel()
	<-done
	res := rfDiffResult{watches: s.watchOptions(), ops: rec.opsSnapshot(), content: rec.content(), lastRV: lastRV()}
	// List calls after the script ran out differ in number (retries).
	for _, o := range s.listOptions() {
		res.lists = append(res.lists, o)
		if len(res.lists) == len(sc.script().lists) {
			break
		}
	}
	return res
}

// TestReflectorMatchesClientGo runs the same scripted servers through
// kinformer's Reflector and client-go's and compares the requests, the store
// operations and the final content.
func TestReflectorMatchesClientGo(t *testing.T) {
	expired := apierrors.NewResourceExpired("too old resource version: 1 (5)")
	internal := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError}
	bookmark := func(rv string) watch.Event {
		return rfEv(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}})
	}
	scenarios := []rfDiffScenario{
		{
			name: "paged list, events, bookmark, resume",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "c1", rfPod("p1", "1"), rfPod("p2", "2"))}, rfListStep{obj: rfPodList("10", "", rfPod("p3", "3"))}).
					watch(rfWatchStep{events: []watch.Event{
						rfEv(watch.Added, rfPod("p4", "11")), rfEv(watch.Modified, rfPod("p1", "12")),
						rfEv(watch.Deleted, rfPod("p2", "13")), bookmark("14"),
					}}, rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p5", "15"))}})
			},
		},
		{
			name:     "WatchListPageSize and an expired continue token",
			pageSize: 2,
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "c1", rfPod("a", "1"), rfPod("b", "2"))}, rfListStep{err: expired},
						rfListStep{obj: rfPodList("11", "", rfPod("a", "1"), rfPod("b", "2"), rfPod("c", "11"))}).
					watch(rfWatchStep{events: []watch.Event{rfEv(watch.Deleted, rfPod("a", "12"))}})
			},
		},
		{
			name: "410 relists at the last version, expired relist asks for the latest",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "", rfPod("p1", "1"))}).
					watch(rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p2", "11")), rfEv(watch.Error, &expired.ErrStatus)}}).
					list(rfListStep{err: expired}, rfListStep{obj: rfPodList("20", "", rfPod("p2", "19"))}).
					watch(rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p3", "21"))}})
			},
		},
		{
			name: "very short watch relists",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "", rfPod("p1", "1"))}, rfListStep{obj: rfPodList("12", "", rfPod("p1", "12"))}).
					watch(rfWatchStep{}, rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p2", "13"))}})
			},
		},
		{
			name: "refused and 429 watches back off without relist",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "")}).
					watch(rfWatchStep{err: syscall.ECONNREFUSED}, rfWatchStep{err: apierrors.NewTooManyRequests("busy", 0)},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "11")),
							rfEv(watch.Error, &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests})}},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p2", "12"))}})
			},
		},
		{
			name: "events with objects of the wrong type are skipped, the watch goes on",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "", rfPod("p1", "1"))}).
					watch(rfWatchStep{events: []watch.Event{
						rfEv(watch.Added, rfPod("p2", "11")),
						rfEv(watch.Added, &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", ResourceVersion: "12"}}),
						rfEv(watch.Modified, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", ResourceVersion: "13"}}),
						rfEv(watch.Modified, rfPod("p1", "14")),
					}}, rfWatchStep{events: []watch.Event{rfEv(watch.Deleted, rfPod("p2", "15"))}})
			},
		},
		{
			name: "synthetic ADDED events from resource version 0",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("0", "")}).
					watch(rfWatchStep{events: []watch.Event{
						rfEv(watch.Added, rfPod("b", "7")), rfEv(watch.Added, rfPod("a", "5")),
						rfEv(watch.Modified, rfPod("a", "8")), rfEv(watch.Added, rfPod("c", "9")),
					}})
			},
		},
		{
			name:        "internal errors are retried within MaxInternalErrorRetryDuration",
			maxInternal: time.Minute,
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "")}).
					watch(rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "11")), rfEv(watch.Error, internal)}},
						rfWatchStep{events: []watch.Event{rfEv(watch.Error, internal)}},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p2", "12"))}})
			},
		},
		{
			name: "internal error relists without retries",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "")}, rfListStep{obj: rfPodList("11", "", rfPod("p1", "11"))}).
					watch(rfWatchStep{events: []watch.Event{rfEv(watch.Error, internal)}})
			},
		},
		{
			name: "a stream reset reported as a decoding error ends the watch; relist",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "", rfPod("p1", "1"))}, rfListStep{obj: rfPodList("12", "", rfPod("p1", "1"), rfPod("p2", "11"))}).
					watch(rfWatchStep{events: []watch.Event{
						rfEv(watch.Added, rfPod("p2", "11")),
						rlDecodingError("stream error: stream ID 3; INTERNAL_ERROR; received from peer"),
					}}, rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p3", "13"))}})
			},
		},
		{
			name: "an undecodable frame ends the watch; relist",
			script: func() *rfScriptLW {
				return rfNewScript(true).
					list(rfListStep{obj: rfPodList("10", "", rfPod("p1", "1"))}, rfListStep{obj: rfPodList("12", "", rfPod("p1", "12"))}).
					watch(rfWatchStep{events: []watch.Event{
						rlDecodingError("invalid character '\\x00' looking for beginning of value"),
					}}, rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p3", "13"))}})
			},
		},
		{
			name:      "streaming list with updates during the stream, then the same watch",
			watchList: true,
			script: func() *rfScriptLW {
				return rfNewScript(false).
					watch(rfWatchStep{events: []watch.Event{
						rfEv(watch.Added, rfPod("p1", "1")), rfEv(watch.Added, rfPod("p2", "2")),
						rfEv(watch.Modified, rfPod("p1", "3")), rfEv(watch.Added, rfPod("p3", "4")),
						rfEv(watch.Deleted, rfPod("p3", "5")), rfEndBookmark("5"),
						rfEv(watch.Added, rfPod("p4", "6")), bookmark("7"),
					}})
			},
		},
		{
			name:      "streaming list falls back to LIST",
			watchList: true,
			script: func() *rfScriptLW {
				return rfNewScript(false).
					watch(rfWatchStep{err: errors.New("no streaming")}, rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p2", "2"))}}).
					list(rfListStep{obj: rfPodList("1", "", rfPod("p1", "1"))})
			},
		},
		{
			name:      "a streaming list closed before its end bookmark is opened again at once",
			watchList: true,
			script: func() *rfScriptLW {
				return rfNewScript(false).
					watch(
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1"))}},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEv(watch.Added, rfPod("p2", "2"))}},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEv(watch.Added, rfPod("p2", "2")), rfEndBookmark("3"), rfEv(watch.Added, rfPod("p3", "4"))}},
					)
			},
		},
		{
			name:      "after a fallback to LIST the next cycle streams again",
			watchList: true,
			script: func() *rfScriptLW {
				return rfNewScript(false).
					watch(
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEv(watch.Error, internal)}},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p2", "11")), rfEv(watch.Error, &expired.ErrStatus)}},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "12")), rfEndBookmark("13"), rfEv(watch.Added, rfPod("p3", "14"))}},
					).
					list(rfListStep{obj: rfPodList("10", "", rfPod("p1", "10"))})
			},
		},
		{
			name:      "streaming list backs off on 429 and streams the latest after 410",
			watchList: true,
			script: func() *rfScriptLW {
				return rfNewScript(false).
					watch(
						rfWatchStep{err: apierrors.NewTooManyRequests("busy", 0)},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEndBookmark("5"), rfEv(watch.Error, &expired.ErrStatus)}},
						rfWatchStep{err: expired},
						rfWatchStep{events: []watch.Event{rfEv(watch.Added, rfPod("p1", "8")), rfEndBookmark("9"), rfEv(watch.Added, rfPod("p2", "10"))}},
					)
			},
		},
	}

	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, sc.watchList)
			ours := rfDiffRun(t, sc, func(s *rfScriptLW, rec *rfRecorder) (func(context.Context), func() string) {
				r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: rfTinyBackoff()})
				r.WatchListPageSize = sc.pageSize
				r.MaxInternalErrorRetryDuration = sc.maxInternal
				return r.RunWithContext, r.LastSyncResourceVersion
			})
			theirs := rfDiffRun(t, sc, func(s *rfScriptLW, rec *rfRecorder) (func(context.Context), func() string) {
				r := clientcache.NewReflectorWithOptions(s, &v1.Pod{}, rec, clientcache.ReflectorOptions{Name: "rf", Backoff: rfTinyBackoff()})
				r.WatchListPageSize = sc.pageSize
				r.MaxInternalErrorRetryDuration = sc.maxInternal
				return r.RunWithContext, r.LastSyncResourceVersion
			})
			assert.Equal(t, theirs.lists, ours.lists, "list requests")
			assert.Equal(t, theirs.watches, ours.watches, "watch requests")
			assert.Equal(t, theirs.ops, ours.ops, "store operations")
			assert.Equal(t, theirs.content, ours.content, "store content")
			assert.Equal(t, theirs.lastRV, ours.lastRV, "last resource version")
			assert.NotEmpty(t, ours.ops)
		})
	}
}
