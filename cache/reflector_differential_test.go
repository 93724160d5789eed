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

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// reflectorDiffScenario is a scripted server; script builds a fresh copy of it
// for each reflector.
type reflectorDiffScenario struct {
	name        string
	watchList   bool
	pageSize    int64
	maxInternal time.Duration
	script      func() *fakeapi.API
}

// reflectorDiffResult is what one reflector did with a scenario.
type reflectorDiffResult struct {
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	ops     []string
	content []string
	lastRV  string
}

// runReflectorDiff runs a reflector built by start on a fresh script until the
// script is used up.
func runReflectorDiff(t *testing.T, sc reflectorDiffScenario, start func(s *fakeapi.API, rec *storeRecorder) (run func(ctx context.Context), lastRV func() string)) reflectorDiffResult {
	t.Helper()
	s := sc.script()
	if !sc.watchList {
		s.WithoutWatchList()
	}
	rec := newStoreRecorder()
	rec.sortReplace = true // client-go's streaming list replaces in map order
	run, lastRV := start(s, rec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	select {
	case <-s.Exhausted():
	case <-time.After(conditionTimeout):
		t.Errorf("script not consumed")
	}
	cancel()
	<-done
	res := reflectorDiffResult{watches: watchOptionsWithoutTimeout(s), ops: rec.opsSnapshot(), content: rec.content(), lastRV: lastRV()}
	// List calls after the script ran out differ in number (retries).
	for _, o := range s.ListOptions() {
		res.lists = append(res.lists, o)
		if len(res.lists) == sc.script().PendingListAnswers() {
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
		return newEvent(watch.Bookmark, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}})
	}
	scenarios := []reflectorDiffScenario{
		{
			name: "paged list, events, bookmark, resume",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "c1", newPod("p1", "1"), newPod("p2", "2"))}, fakeapi.ListAnswer{Object: newPodList("10", "", newPod("p3", "3"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{
						newEvent(watch.Added, newPod("p4", "11")), newEvent(watch.Modified, newPod("p1", "12")),
						newEvent(watch.Deleted, newPod("p2", "13")), bookmark("14"),
					}}, fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p5", "15"))}})
			},
		},
		{
			name:     "WatchListPageSize and an expired continue token",
			pageSize: 2,
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "c1", newPod("a", "1"), newPod("b", "2"))}, fakeapi.ListAnswer{Err: expired},
						fakeapi.ListAnswer{Object: newPodList("11", "", newPod("a", "1"), newPod("b", "2"), newPod("c", "11"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Deleted, newPod("a", "12"))}})
			},
		},
		{
			name: "410 relists at the last version, expired relist asks for the latest",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("p1", "1"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p2", "11")), newEvent(watch.Error, &expired.ErrStatus)}}).
					ListAnswers(fakeapi.ListAnswer{Err: expired}, fakeapi.ListAnswer{Object: newPodList("20", "", newPod("p2", "19"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p3", "21"))}})
			},
		},
		{
			name: "very short watch relists",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("p1", "1"))}, fakeapi.ListAnswer{Object: newPodList("12", "", newPod("p1", "12"))}).
					WatchAnswers(fakeapi.WatchAnswer{}, fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p2", "13"))}})
			},
		},
		{
			name: "refused and 429 watches back off without relist",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "")}).
					WatchAnswers(fakeapi.WatchAnswer{Err: syscall.ECONNREFUSED}, fakeapi.WatchAnswer{Err: apierrors.NewTooManyRequests("busy", 0)},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "11")),
							newEvent(watch.Error, &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests})}},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p2", "12"))}})
			},
		},
		{
			name: "events with objects of the wrong type are skipped, the watch goes on",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("p1", "1"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{
						newEvent(watch.Added, newPod("p2", "11")),
						newEvent(watch.Added, &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", ResourceVersion: "12"}}),
						newEvent(watch.Modified, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", ResourceVersion: "13"}}),
						newEvent(watch.Modified, newPod("p1", "14")),
					}}, fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Deleted, newPod("p2", "15"))}})
			},
		},
		{
			name: "synthetic ADDED events from resource version 0",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("0", "")}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{
						newEvent(watch.Added, newPod("b", "7")), newEvent(watch.Added, newPod("a", "5")),
						newEvent(watch.Modified, newPod("a", "8")), newEvent(watch.Added, newPod("c", "9")),
					}})
			},
		},
		{
			name:        "internal errors are retried within MaxInternalErrorRetryDuration",
			maxInternal: time.Minute,
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "")}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "11")), newEvent(watch.Error, internal)}},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Error, internal)}},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p2", "12"))}})
			},
		},
		{
			name: "internal error relists without retries",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "")}, fakeapi.ListAnswer{Object: newPodList("11", "", newPod("p1", "11"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Error, internal)}})
			},
		},
		{
			name: "a stream reset reported as a decoding error ends the watch; relist",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("p1", "1"))}, fakeapi.ListAnswer{Object: newPodList("12", "", newPod("p1", "1"), newPod("p2", "11"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{
						newEvent(watch.Added, newPod("p2", "11")),
						decodingErrorEvent("stream error: stream ID 3; INTERNAL_ERROR; received from peer"),
					}}, fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p3", "13"))}})
			},
		},
		{
			name: "an undecodable frame ends the watch; relist",
			script: func() *fakeapi.API {
				return fakeapi.New().
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("p1", "1"))}, fakeapi.ListAnswer{Object: newPodList("12", "", newPod("p1", "12"))}).
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{
						decodingErrorEvent("invalid character '\\x00' looking for beginning of value"),
					}}, fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p3", "13"))}})
			},
		},
		{
			name:      "streaming list with updates during the stream, then the same watch",
			watchList: true,
			script: func() *fakeapi.API {
				return fakeapi.New().
					WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{
						newEvent(watch.Added, newPod("p1", "1")), newEvent(watch.Added, newPod("p2", "2")),
						newEvent(watch.Modified, newPod("p1", "3")), newEvent(watch.Added, newPod("p3", "4")),
						newEvent(watch.Deleted, newPod("p3", "5")), endOfInitialEvents("5"),
						newEvent(watch.Added, newPod("p4", "6")), bookmark("7"),
					}})
			},
		},
		{
			name:      "streaming list falls back to LIST",
			watchList: true,
			script: func() *fakeapi.API {
				return fakeapi.New().
					WatchAnswers(fakeapi.WatchAnswer{Err: errors.New("no streaming")}, fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p2", "2"))}}).
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("1", "", newPod("p1", "1"))})
			},
		},
		{
			name:      "a streaming list closed before its end bookmark is opened again at once",
			watchList: true,
			script: func() *fakeapi.API {
				return fakeapi.New().
					WatchAnswers(
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1"))}},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), newEvent(watch.Added, newPod("p2", "2"))}},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), newEvent(watch.Added, newPod("p2", "2")), endOfInitialEvents("3"), newEvent(watch.Added, newPod("p3", "4"))}},
					)
			},
		},
		{
			name:      "after a fallback to LIST the next cycle streams again",
			watchList: true,
			script: func() *fakeapi.API {
				return fakeapi.New().
					WatchAnswers(
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), newEvent(watch.Error, internal)}},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p2", "11")), newEvent(watch.Error, &expired.ErrStatus)}},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "12")), endOfInitialEvents("13"), newEvent(watch.Added, newPod("p3", "14"))}},
					).
					ListAnswers(fakeapi.ListAnswer{Object: newPodList("10", "", newPod("p1", "10"))})
			},
		},
		{
			name:      "streaming list backs off on 429 and streams the latest after 410",
			watchList: true,
			script: func() *fakeapi.API {
				return fakeapi.New().
					WatchAnswers(
						fakeapi.WatchAnswer{Err: apierrors.NewTooManyRequests("busy", 0)},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), endOfInitialEvents("5"), newEvent(watch.Error, &expired.ErrStatus)}},
						fakeapi.WatchAnswer{Err: expired},
						fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "8")), endOfInitialEvents("9"), newEvent(watch.Added, newPod("p2", "10"))}},
					)
			},
		},
	}

	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, sc.watchList)
			ours := runReflectorDiff(t, sc, func(s *fakeapi.API, rec *storeRecorder) (func(context.Context), func() string) {
				r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
				r.WatchListPageSize = sc.pageSize
				r.MaxInternalErrorRetryDuration = sc.maxInternal
				return r.RunWithContext, r.LastSyncResourceVersion
			})
			theirs := runReflectorDiff(t, sc, func(s *fakeapi.API, rec *storeRecorder) (func(context.Context), func() string) {
				r := clientcache.NewReflectorWithOptions(s, &v1.Pod{}, rec, clientcache.ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
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
