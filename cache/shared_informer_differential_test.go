package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// informerDiffSubject is one implementation under differential test.
type informerDiffSubject struct {
	addHandler func(h *eventRecorder) (hasSynced func() bool, err error)
	run        func(ctx context.Context)
	hasSynced  func() bool
	list       func() []interface{}
}

func ourInformerSubject(srv *fakeapi.Server, useDeltaFIFO bool) informerDiffSubject {
	informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{UseDeltaFIFO: useDeltaFIFO})
	return informerDiffSubject{
		addHandler: func(h *eventRecorder) (func() bool, error) {
			reg, err := informer.AddEventHandler(h)
			if err != nil {
				return nil, err
			}
			return reg.HasSynced, nil
		},
		run:       informer.RunWithContext,
		hasSynced: informer.HasSynced,
		list:      informer.GetStore().List,
	}
}

func clientGoInformerSubject(srv *fakeapi.Server) informerDiffSubject {
	lw := clientGoLW{&clientcache.ListWatch{ListFunc: srv.List, WatchFunc: srv.Watch}}
	informer := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{})
	return informerDiffSubject{
		addHandler: func(h *eventRecorder) (func() bool, error) {
			reg, err := informer.AddEventHandler(h)
			if err != nil {
				return nil, err
			}
			return reg.HasSynced, nil
		},
		run:       informer.RunWithContext,
		hasSynced: informer.HasSynced,
		list:      informer.GetStore().List,
	}
}

// informerDiffResult is what the scenario observed.
type informerDiffResult struct {
	early, late []string
	store       []string
}

// runInformerDiffScenario runs the scripted scenario: initial list, watch
// events, a 410-forced relist that finds vanished and changed objects, a
// handler added after sync, and one more event.
func runInformerDiffScenario(t *testing.T, build func(srv *fakeapi.Server) informerDiffSubject) informerDiffResult {
	srv := fakeapi.NewServer(false)
	defer srv.StopWatches()
	srv.Create("a")
	srv.Create("b")
	srv.Create("c")
	subject := build(srv)
	early := &eventRecorder{}
	earlySynced, err := subject.addHandler(early)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(klogContext(t))
	var wg sync.WaitGroup
	wg.Go(func() { subject.run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	require.Eventually(t, func() bool { return subject.hasSynced() && earlySynced() }, waitTimeout, time.Millisecond)
	early.waitN(t, 3)

	srv.Create("d")
	srv.Update("a")
	srv.Delete("c")
	early.waitN(t, 6)

	srv.DeleteMissed("b")
	srv.UpdateMissed("d")
	srv.CreateMissed("e")
	srv.Expire()
	// Relist: b vanished; a unchanged; d changed; e new.
	early.waitN(t, 10)

	late := &eventRecorder{}
	lateSynced, err := subject.addHandler(late)
	require.NoError(t, err)
	require.Eventually(t, lateSynced, waitTimeout, time.Millisecond)
	srv.Create("f")
	early.waitN(t, 11)
	late.waitN(t, 4)

	lateEvents := late.get()
	// The replay of the cache to a late handler has no defined order.
	sort.Strings(lateEvents[:3])
	return informerDiffResult{early: early.get(), late: lateEvents, store: describedStore(listFunc(subject.list))}
}

// listFunc adapts a List function to describedStore.
type listFunc func() []interface{}

func (f listFunc) List() []interface{} { return f() }

func TestSharedInformerMatchesClientGo(t *testing.T) {
	want := runInformerDiffScenario(t, clientGoInformerSubject)
	// Sanity: the scenario does what it claims on client-go.
	require.Equal(t, []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		"add ns/c@3 initial=true",
		"add ns/d@4 initial=false",
		"update ns/a@1 -> ns/a@5",
		"delete ns/c@6",
		"delete tombstone(ns/b@2)",
		"update ns/a@5 -> ns/a@5",
		"update ns/d@4 -> ns/d@8",
		"add ns/e@9 initial=false",
		"add ns/f@10 initial=false",
	}, want.early)
	require.Equal(t, []string{"ns/a@5", "ns/d@8", "ns/e@9", "ns/f@10"}, want.store)

	got := runInformerDiffScenario(t, func(srv *fakeapi.Server) informerDiffSubject { return ourInformerSubject(srv, false) })
	assert.Equal(t, want, got, "kinformer (RealFIFO) differs from client-go")

	// The DeltaFIFO orders a relist differently (deletions last), as
	// client-go's own DeltaFIFO informer does; everything else matches.
	gotDelta := runInformerDiffScenario(t, func(srv *fakeapi.Server) informerDiffSubject { return ourInformerSubject(srv, true) })
	assert.Equal(t, want.late, gotDelta.late)
	assert.Equal(t, want.store, gotDelta.store)
	assert.Equal(t, perObject(want.early), perObject(gotDelta.early))
}

// panicOnAdd panics with value on every add.
type panicOnAdd struct{ value any }

func (h panicOnAdd) OnAdd(interface{}, bool)   { panic(h.value) }
func (h panicOnAdd) OnUpdate(_, _ interface{}) {}
func (h panicOnAdd) OnDelete(interface{})      {}

// panicLine returns the first line of the "Observed a panic" entry in
// a text log, without its time stamp and thread id: the severity letter, the
// caller's file:line, the message and the keys up to the stack trace.
func panicLine(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `"Observed a panic"`) {
			continue
		}
		// E0102 15:04:05.000000   12345 file.go:12] "msg" k=v ...
		fields := strings.Fields(line)
		if len(fields) < 4 {
			return line
		}
		return fields[0][:1] + " " + strings.Join(fields[3:], " ")
	}
	return ""
}

// TestHandlerPanicLogLineMatchesClientGo makes a handler panic, with a string and
// with an error, under client-go's informer (utilruntime.ReallyCrash off, so
// that it logs and goes on) and under ours, and compares the log line: the
// message "Observed a panic", the keys, and the caller, which both name the
// line in the handler that panicked.
func TestHandlerPanicLogLineMatchesClientGo(t *testing.T) {
	reallyCrash := utilruntime.ReallyCrash
	utilruntime.ReallyCrash = false
	defer func() { utilruntime.ReallyCrash = reallyCrash }()

	run := func(t *testing.T, value any, clientGo bool) string {
		srv := fakeapi.NewServer(false)
		defer srv.StopWatches()
		srv.Create("a")
		var buf syncBuffer
		logger := bufferLogger(&buf)
		h := panicOnAdd{value: value}
		var informerRun func(context.Context)
		if clientGo {
			informer := clientcache.NewSharedIndexInformer(clientGoLW{&clientcache.ListWatch{ListFunc: srv.List, WatchFunc: srv.Watch}}, &v1.Pod{}, 0, clientcache.Indexers{})
			_, err := informer.AddEventHandlerWithOptions(h, clientcache.HandlerOptions{Logger: &logger})
			require.NoError(t, err)
			informerRun = informer.RunWithContext
		} else {
			informer := NewSharedIndexInformer(srv, &v1.Pod{}, 0, Indexers{})
			_, err := informer.AddEventHandlerWithOptions(h, HandlerOptions{Logger: &logger})
			require.NoError(t, err)
			informerRun = informer.RunWithContext
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { informerRun(ctx) })
		defer func() { cancel(); wg.Wait() }()
		if !assert.Eventually(t, func() bool { return panicLine(buf.String()) != "" }, waitTimeout, time.Millisecond, "no \"Observed a panic\" line (client-go: %v)", clientGo) {
			t.Logf("log: %s", buf.String())
		}
		return panicLine(buf.String())
	}
	for _, value := range []any{"first add fails", errors.New("boom")} {
		t.Run(fmt.Sprintf("%T", value), func(t *testing.T) {
			theirs := run(t, value, true)
			require.Contains(t, theirs, "shared_informer_differential_test.go:", "client-go names the handler's line")
			ours := run(t, value, false)
			assert.Equal(t, theirs, ours)
		})
	}
}
