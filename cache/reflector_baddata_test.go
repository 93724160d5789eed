package cache

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/klog/v2/ktesting"

	"github.com/kinformer/kinformer/cache/internal/reflector"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// decodingErrorEvent is the ERROR event client-go's watch decoder makes when a frame cannot
// be decoded, with the decoder's message.
func decodingErrorEvent(msg string) watch.Event {
	obj := apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding").
		AsObject(fmt.Errorf("unable to decode an event from the watch stream: %s", msg))
	return watch.Event{Type: watch.Error, Object: obj}
}

// TestReflectorSkipsUnusableWatchEvents feeds, between two good events, one
// event of each kind the Reflector cannot store. As client-go does, it logs
// the event, drops it and goes on reading the same watch: the good event
// after it is applied without a new watch or a relist, and the watch error
// handler hears nothing. The event is counted under its kind and does not
// move the resourceVersion.
func TestReflectorSkipsUnusableWatchEvents(t *testing.T) {
	var nilPod *v1.Pod
	table := &unstructured.Unstructured{}
	table.SetAPIVersion("meta.k8s.io/v1")
	table.SetKind("Table")
	table.SetName("t")
	table.SetResourceVersion("13")
	wrongKind := unstructuredPod("svc", "14")
	wrongKind.SetKind("Service")
	typedGood := func(name, rv string) watch.Event { return newEvent(watch.Added, newPod(name, rv)) }
	unstructuredGood := func(name, rv string) watch.Event { return newEvent(watch.Added, unstructuredPod(name, rv)) }

	cases := []struct {
		name     string
		expected interface{}
		good     func(name, rv string) watch.Event
		bad      watch.Event
		kind     reflector.BadData
	}{
		{"wrong type", &v1.Pod{}, typedGood, newEvent(watch.Added, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", ResourceVersion: "11"}}), reflector.BadDataWrongType},
		{"no object", &v1.Pod{}, typedGood, watch.Event{Type: watch.Modified}, reflector.BadDataNoObject},
		{"nil pointer", &v1.Pod{}, typedGood, newEvent(watch.Deleted, nilPod), reflector.BadDataNoObject},
		{"bookmark without resourceVersion", &v1.Pod{}, typedGood, newEvent(watch.Bookmark, &v1.Pod{}), reflector.BadDataBookmarkWithoutRV},
		{"unknown event type", &v1.Pod{}, typedGood, newEvent(watch.EventType("SURPRISE"), newPod("s", "12")), reflector.BadDataUnknownEventType},
		{"table", unstructuredPod("", ""), unstructuredGood, newEvent(watch.Added, table), reflector.BadDataWrongGVK},
		{"wrong kind", unstructuredPod("", ""), unstructuredGood, newEvent(watch.Added, wrongKind), reflector.BadDataWrongGVK},
		{"typed object for an unstructured reflector", unstructuredPod("", ""), unstructuredGood, newEvent(watch.Added, newPod("typed", "15")), reflector.BadDataWrongType},
		{"no object metadata", nil, typedGood, newEvent(watch.Added, &metav1.Status{}), reflector.BadDataNoMetadata},
		{"table without an expected type", nil, typedGood, newEvent(watch.Added, table), reflector.BadDataTable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().WithoutWatchList().
				ListAnswers(fakeapi.ListAnswer{Object: newPodList("5", "", newPod("kept", "3"))}).
				WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{tc.good("first", "10"), tc.bad, tc.good("last", "20")}, Hold: true})
			rec := newStoreRecorder()
			r := NewReflectorWithOptions(s, tc.expected, rec, ReflectorOptions{Name: "rl-reflector", Backoff: tinyBackoff()})
			var errs watchErrors
			r.watchErrorHandler = errs.handler
			stop := startRun(t, r)
			requireEventually(t, func() bool { return r.LastSyncResourceVersion() == "20" }, "the event after the bad one was not applied")
			stop()

			assert.Equal(t, []string{"replace [ns/kept@3] 5", "add ns/first@10", "rv 10", "add ns/last@20", "rv 20"}, rec.opsSnapshot())
			assert.Equal(t, []string{"ns/first@10", "ns/kept@3", "ns/last@20"}, rec.content())
			assert.Equal(t, []metav1.ListOptions{watchOptionsFrom("5")}, watchOptionsWithoutTimeout(s), "one watch, read to its end")
			assert.Len(t, s.ListOptions(), 1, "no relist")
			for k := reflector.BadData(0); k < reflector.BadDataKinds; k++ {
				want := uint64(0)
				if k == tc.kind {
					want = 1
				}
				assert.Equal(t, want, r.badDataCount(k), "count of %s", k)
			}
			assert.Equal(t, uint64(1), r.badDataTotal())
			assert.Empty(t, errs.snapshot(), "a skipped event is no watch failure")
		})
	}
}

// TestReflectorDecodingErrorEndsTheWatch: a frame the client could not decode
// reaches the Reflector as client-go's ERROR event (500, ClientWatchDecoding).
// As in client-go, the watch ends with that internal error and the Reflector
// relists; an undecodable frame counts as bad data, an HTTP/2 stream reset
// (a broken connection) does not.
func TestReflectorDecodingErrorEndsTheWatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		msg     string
		badData uint64
	}{
		{name: "stream reset", msg: "stream error: stream ID 5; INTERNAL_ERROR; received from peer"},
		{name: "undecodable frame", msg: "invalid character '\\x00' looking for beginning of value", badData: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().WithoutWatchList().
				ListAnswers(fakeapi.ListAnswer{Object: newPodList("5", "")}, fakeapi.ListAnswer{Object: newPodList("12", "", newPod("a", "10"), newPod("b", "12"))}).
				WatchAnswers(
					fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("a", "10")), decodingErrorEvent(tc.msg)}},
					fakeapi.WatchAnswer{Events: []watch.Event{newEvent(watch.Added, newPod("c", "13"))}},
				)
			rec := newStoreRecorder()
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rl-reflector", Backoff: tinyBackoff()})
			var errs watchErrors
			r.watchErrorHandler = errs.handler
			runUntilExhausted(t, r, s)
			assert.Equal(t, []string{"replace [] 5", "add ns/a@10", "rv 10", "replace [ns/a@10 ns/b@12] 12", "add ns/c@13", "rv 13"}, rec.opsSnapshot())
			assert.Equal(t, []metav1.ListOptions{watchOptionsFrom("5"), watchOptionsFrom("12"), watchOptionsFrom("13")}, watchOptionsWithoutTimeout(s))
			assert.Equal(t, []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}, {ResourceVersion: "10"}}, s.ListOptions()[:2], "a relist from the last resourceVersion")
			assert.Equal(t, tc.badData, r.badDataCount(reflector.BadDataUndecodable))
			assert.Equal(t, tc.badData, r.badDataTotal())
			assert.Equal(t, []string{"internal"}, errorKinds(errs.snapshot()))
		})
	}
}

// TestReflectorStreamingListSkipsUnusableEvents: an event of the wrong type
// during a streaming list is logged, counted and dropped, and the stream goes
// on to its end bookmark; the store is replaced once, with the good objects.
func TestReflectorStreamingListSkipsUnusableEvents(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	s := fakeapi.New().WatchAnswers(
		fakeapi.WatchAnswer{Events: []watch.Event{
			newEvent(watch.Added, newPod("first", "10")),
			newEvent(watch.Added, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", ResourceVersion: "11"}}),
			newEvent(watch.Added, newPod("last", "12")),
			endOfInitialEvents("12"),
		}, Hold: true},
	)
	rec := newStoreRecorder()
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rl-reflector", Backoff: tinyBackoff()})
	var errs watchErrors
	r.watchErrorHandler = errs.handler
	stop := startRun(t, r)
	requireEventually(t, func() bool { return len(rec.opsSnapshot()) > 0 }, "no replace")
	stop()
	assert.Equal(t, []string{"replace [ns/first@10 ns/last@12] 12"}, rec.opsWithout("rv", "bookmark"))
	assert.Empty(t, s.ListOptions(), "no fallback to LIST")
	assert.Equal(t, []metav1.ListOptions{streamOptionsFrom("")}, watchOptionsWithoutTimeout(s), "one stream")
	assert.Equal(t, uint64(1), r.badDataCount(reflector.BadDataWrongType))
	assert.Empty(t, errs.snapshot())
}

// TestReflectorSkippedEventLoggedWithName captures the log line of a skipped
// event: client-go's message, naming the Reflector.
func TestReflectorSkippedEventLoggedWithName(t *testing.T) {
	s := fakeapi.New().WithoutWatchList().
		ListAnswers(fakeapi.ListAnswer{Object: newPodList("5", "")}).
		WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{{Type: watch.Added}}})
	rec := newStoreRecorder()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rl-named-reflector", Backoff: tinyBackoff(), Logger: &logger})
	runUntilExhausted(t, r, s)
	var line string
	out := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Unable to understand watch event") {
			line = l
		}
	}
	require.NotEmpty(t, line, "no log line for the skipped event in %s", out)
	assert.Contains(t, line, `reflector="rl-named-reflector"`)
	assert.Contains(t, line, "ADDED event without an object")
}

// TestReflectorExpiredContinueFollowsPagesOfTheFallbackList: when a continue token
// expires, the list is made again from the start in one request; if the answer still
// comes in pages (a ListWatch that forces a limit), every page is followed, so the store
// is never replaced with part of the list.
func TestReflectorExpiredContinueFollowsPagesOfTheFallbackList(t *testing.T) {
	expired := apierrors.NewResourceExpired("continue token expired")
	s := fakeapi.New().WithoutWatchList().
		ListAnswers(
			fakeapi.ListAnswer{Object: newPodList("10", "c1", newPod("a", "1"))},
			fakeapi.ListAnswer{Err: expired},
			fakeapi.ListAnswer{Object: newPodList("11", "c2", newPod("a", "1"), newPod("b", "2"))},
			fakeapi.ListAnswer{Object: newPodList("11", "", newPod("c", "11"))},
		)
	rec := newStoreRecorder()
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rl-reflector", Backoff: tinyBackoff()})
	runUntilExhausted(t, r, s)
	assert.Equal(t, "replace [ns/a@1 ns/b@2 ns/c@11] 11", rec.opsSnapshot()[0])
	opts := s.ListOptions()
	require.GreaterOrEqual(t, len(opts), 4)
	assert.Equal(t, []metav1.ListOptions{
		{ResourceVersion: "0", Limit: 500},
		{Continue: "c1", Limit: 500},
		{ResourceVersion: "0"},
		{Continue: "c2"},
	}, opts[:4])
}

// TestReflectorSkippedEventLogsNoObjectContent: an unknown event type, an
// object without metadata and a bookmark without a resourceVersion are logged
// with client-go's message, the event type, the object's Go type and its
// namespace/name when it has them, never the object itself: the Secret data
// and the message the server sent stay out of the log.
func TestReflectorSkippedEventLogsNoObjectContent(t *testing.T) {
	const secretText = "hunter2-do-not-log"
	secret := func(rv string) *v1.Secret {
		return &v1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds", ResourceVersion: rv},
			Data:       map[string][]byte{"password": []byte(secretText)},
			StringData: map[string]string{"token": secretText},
		}
	}
	for _, tc := range []struct {
		name     string
		expected interface{}
		event    watch.Event
		want     []string
	}{
		{"unknown event type", &v1.Secret{}, newEvent(watch.EventType("SURPRISE"), secret("12")),
			[]string{`Unknown watch event`, `eventType="SURPRISE"`, `object="ns/creds"`, `objectType="*v1.Secret"`}},
		{"bookmark without a resourceVersion", &v1.Secret{}, newEvent(watch.Bookmark, secret("")),
			[]string{`Unable to understand watch event`, `eventType="BOOKMARK"`, `object="ns/creds"`, `objectType="*v1.Secret"`}},
		{"object without metadata", nil, newEvent(watch.Added, &metav1.Status{Message: secretText}),
			[]string{`Unable to understand watch event`, `eventType="ADDED"`, `objectType="*v1.Status"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().WithoutWatchList().
				ListAnswers(fakeapi.ListAnswer{Object: &v1.SecretList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}}).
				WatchAnswers(fakeapi.WatchAnswer{Events: []watch.Event{tc.event}})
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			r := NewReflectorWithOptions(s, tc.expected, newStoreRecorder(), ReflectorOptions{Name: "rl-secret-reflector", Backoff: tinyBackoff(), Logger: &logger})
			runUntilExhausted(t, r, s)
			out := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			assert.NotContains(t, out, secretText, "the object's content was logged")
			var line string
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "watch event") {
					line = l
				}
			}
			require.NotEmpty(t, line, "no log line for the skipped event in %s", out)
			for _, w := range tc.want {
				assert.Contains(t, line, w)
			}
			assert.Equal(t, uint64(1), r.badDataTotal())
		})
	}
}
