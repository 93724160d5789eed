package controllerruntime

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

func TestStoppingADrainingWatchFreesAFilterBlockedOnASend(t *testing.T) {
	// A stream that delivered one more event after its reader stopped
	// reading, under apimachinery's filter, as controller-runtime builds
	// metadata-only watches.
	stream := watch.NewFakeWithChanSize(1, false)
	stream.Error(&metav1.Status{Message: "context canceled"})
	w, err := drainOnStop(watch.Filter(stream, func(e watch.Event) (watch.Event, bool) { return e, true }), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	// Stop returned, so the filter closed its channel: its goroutine is
	// gone. Without the drain it would still hold the event.
	if e, ok := <-w.ResultChan(); ok {
		t.Fatalf("after Stop the watch still delivers %v", e.Type)
	}
	w.Stop() // a second Stop returns at once
}

// watchListClient answers IsWatchListSemanticsUnSupported with unsupported.
type watchListClient struct{ unsupported bool }

func (c watchListClient) IsWatchListSemanticsUnSupported() bool { return c.unsupported }

func TestDrainingListerWatcherKeepsTheWatchListAnswerAndTheCalls(t *testing.T) {
	var calls []string
	plain := &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			calls = append(calls, "list")
			return &metav1.List{}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			calls = append(calls, "watch")
			return watch.NewFake(), nil
		},
	}
	for _, tc := range []struct {
		name string
		lw   toolscache.ListerWatcher
		want bool
	}{
		{"a ListWatch, which does not say", plain, false},
		{"a client that supports streaming lists", toolscache.ToListWatcherWithWatchListSemantics(plain, watchListClient{}), false},
		{"a client that does not", toolscache.ToListWatcherWithWatchListSemantics(plain, watchListClient{unsupported: true}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := watchlist.DoesClientNotSupportWatchListSemantics(drainWatches(tc.lw)); got != tc.want {
				t.Errorf("watch list unsupported: %v, want %v", got, tc.want)
			}
		})
	}

	lw := drainWatches(plain).(toolscache.ListerWatcherWithContext)
	calls = nil
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.(drainingWatch); !ok {
		t.Errorf("the watch is a %T, not a drainingWatch", w)
	}
	w.Stop()
	if len(calls) != 2 || calls[0] != "list" || calls[1] != "watch" {
		t.Errorf("calls through the wrapper: %v", calls)
	}
	if drainWatches(nil) != nil {
		t.Error("drainWatches(nil) is not nil")
	}
}
