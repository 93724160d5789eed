package cache

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// streamingListServer serves pods a@1 and b@2 at resource version 5, by LIST
// and, when streaming is true, by streaming list (sendInitialEvents). When
// streaming is false it rejects streaming requests as an old server would.
// It logs the kind of every request. It is not a fakeapi.Server: a server
// refusing streams here must not say so through
// IsWatchListSemanticsUnSupported (fakeapi.Server does), so that both
// informers try a stream and fall back to LIST.
type streamingListServer struct {
	streaming bool

	mu       sync.Mutex
	requests []string
	watchers []*fakeapi.Watch
	opened   chan struct{}
}

func newStreamingListServer(streaming bool) *streamingListServer {
	return &streamingListServer{streaming: streaming, opened: make(chan struct{}, 10)}
}

func (s *streamingListServer) List(metav1.ListOptions) (kruntime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, "list")
	return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []v1.Pod{*newPod("a", "1"), *newPod("b", "2")}}, nil
}

func (s *streamingListServer) Watch(options metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stream := options.SendInitialEvents != nil && *options.SendInitialEvents
	if stream && !s.streaming {
		s.requests = append(s.requests, "stream refused")
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "sendInitialEvents", nil)
	}
	w := fakeapi.NewWatch(nil, true)
	if stream {
		s.requests = append(s.requests, "stream")
		w.Send(watch.Event{Type: watch.Added, Object: newPod("a", "1")})
		w.Send(watch.Event{Type: watch.Added, Object: newPod("b", "2")})
		w.Send(watch.Event{Type: watch.Bookmark, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: "5",
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}}})
	} else {
		s.requests = append(s.requests, "watch from "+options.ResourceVersion)
	}
	s.watchers = append(s.watchers, w)
	s.opened <- struct{}{}
	return w, nil
}

// waitOpened waits for the next watch to be opened.
func (s *streamingListServer) waitOpened(t *testing.T) {
	t.Helper()
	select {
	case <-s.opened:
	case <-time.After(waitTimeout):
		t.Fatalf("no watch opened; requests so far: %v", s.log())
	}
}

// send delivers ev to every open watch.
func (s *streamingListServer) send(ev watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w.Send(ev)
	}
}

func (s *streamingListServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w.Stop()
	}
}

func (s *streamingListServer) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// streamingListResult is what one run observed.
type streamingListResult struct {
	events, store, requests []string
}

// runStreamingListScenario syncs an informer from s, then sends two watch
// events. newInformer builds the informer under test and returns its
// AddEventHandler, Run, HasSynced and store List.
func runStreamingListScenario(t *testing.T, s *streamingListServer, newInformer func(s *streamingListServer) (func(ResourceEventHandler) error, func(context.Context), func() bool, func() []interface{})) streamingListResult {
	defer s.stop()
	add, run, hasSynced, list := newInformer(s)
	rec := &eventRecorder{}
	require.NoError(t, add(rec))
	ctx, cancel := context.WithCancel(klogContext(t))
	done := make(chan struct{})
	go func() { defer close(done); run(ctx) }()
	defer func() { cancel(); <-done }()
	rec.waitN(t, 2)
	require.Eventually(t, hasSynced, waitTimeout, eventuallyTick)
	// The watch (the stream itself, or the one after the LIST) is open.
	s.waitOpened(t)
	s.send(watch.Event{Type: watch.Modified, Object: newPod("a", "6")})
	s.send(watch.Event{Type: watch.Added, Object: newPod("c", "7")})
	events := rec.waitN(t, 4)
	// client-go's streaming list collects the initial objects in a map:
	// their order is not defined.
	sort.Strings(events[:2])
	return streamingListResult{events: events, store: describedStore(listFunc(list)), requests: s.log()}
}

// TestSharedInformerStreamingListMatchesClientGo runs a shared informer on a
// server that supports streaming lists and on one that refuses them, on
// client-go and on ours: both stream when they can, fall back to LIST when
// they cannot, and deliver the same events.
func TestSharedInformerStreamingListMatchesClientGo(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	ours := func(useDeltaFIFO bool) func(s *streamingListServer) (func(ResourceEventHandler) error, func(context.Context), func() bool, func() []interface{}) {
		return func(s *streamingListServer) (func(ResourceEventHandler) error, func(context.Context), func() bool, func() []interface{}) {
			informer := NewSharedIndexInformerWithOptions(s, &v1.Pod{}, SharedIndexInformerOptions{UseDeltaFIFO: useDeltaFIFO})
			add := func(h ResourceEventHandler) error { _, err := informer.AddEventHandler(h); return err }
			return add, informer.RunWithContext, informer.HasSynced, informer.GetStore().List
		}
	}
	clientGo := func(s *streamingListServer) (func(ResourceEventHandler) error, func(context.Context), func() bool, func() []interface{}) {
		informer := clientcache.NewSharedIndexInformer(s, &v1.Pod{}, 0, clientcache.Indexers{})
		add := func(h ResourceEventHandler) error { _, err := informer.AddEventHandler(h); return err }
		return add, informer.RunWithContext, informer.HasSynced, informer.GetStore().List
	}
	wantEvents := []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		"update ns/a@1 -> ns/a@6",
		"add ns/c@7 initial=false",
	}
	for _, streaming := range []bool{true, false} {
		name := "streaming server"
		if !streaming {
			name = "server refusing streams"
		}
		t.Run(name, func(t *testing.T) {
			want := runStreamingListScenario(t, newStreamingListServer(streaming), clientGo)
			require.Equal(t, wantEvents, want.events)
			if streaming {
				require.Equal(t, []string{"stream"}, want.requests)
			} else {
				require.Equal(t, []string{"stream refused", "list", "watch from 5"}, want.requests)
			}
			for _, q := range queueKinds {
				t.Run(q.name, func(t *testing.T) {
					got := runStreamingListScenario(t, newStreamingListServer(streaming), ours(q.useDeltaFIFO))
					assert.Equal(t, want, got)
				})
			}
		})
	}
}
