package cache

import (
	"context"
	"time"

	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/reflector"
	"github.com/kinformer/kinformer/listadmission"
)

// The boundary between the Reflector and its engine (internal/reflector):
// the values the engine's interfaces ask for, built from this package's
// store, list sinks, list admission, diagnostics and snapshots.

// engineStore returns what the Reflector's engine writes watch events and
// resyncs to: for a RealFIFO or DeltaFIFO of this package, the queue's own
// engine (internal/queue), to which their Add, Update, Delete, Resync and
// Bookmark only forward, so that an event goes from one engine to the other
// in one call; any other store as it is.
func engineStore(store ReflectorStore) reflector.Store {
	switch s := store.(type) {
	case *RealFIFO:
		if s != nil {
			return &s.q
		}
	case *DeltaFIFO:
		if s != nil {
			return &s.q
		}
	}
	return store
}

// reflectorLists starts the lists of a Reflector's store: through the
// store's own list protocol when it has one (listTaker, fifo.go),
// otherwise gathered and handed to its Replace.
type reflectorLists struct {
	store ReflectorStore
}

// BeginList implements reflector.Lists.
func (l reflectorLists) BeginList(source reflector.ListSource) reflector.ListSink {
	return engineListSink{l.beginList(source)}
}

// BeginStreamList implements reflector.Lists: the streamed objects reach the
// list's sink as they arrive, a page ending every reflector.DefaultPageSize
// objects.
func (l reflectorLists) BeginStreamList(ctx context.Context, source reflector.ListSource) (reflector.EventSink, func(string) (int, error)) {
	s := &streamedList{
		ctx:      ctx,
		sink:     l.beginList(source),
		pageSize: reflector.DefaultPageSize,
	}
	return s, s.finish
}

// RelistsPageByPage implements reflector.Lists (see listTaker).
func (l reflectorLists) RelistsPageByPage() bool {
	t, ok := l.store.(listTaker)
	return ok && t.relistsPageByPage()
}

func (l reflectorLists) beginList(source reflector.ListSource) listSink {
	src := listSource{relist: source.Relist, streamed: source.Streamed, loaded: source.Loaded, fresh: source.Fresh}
	if t, ok := l.store.(listTaker); ok {
		return t.beginList(src)
	}
	return newStoreReplaceSink(l.store, src)
}

// engineListSink is a listSink as the engine's reflector.ListSink.
type engineListSink struct {
	sink listSink
}

// Put implements reflector.ListSink.
func (s engineListSink) Put(obj interface{}) error { return s.sink.put(obj) }

// PageEnd implements reflector.ListSink.
func (s engineListSink) PageEnd(ctx context.Context) error { return s.sink.pageEnd(ctx) }

// End implements reflector.ListSink.
func (s engineListSink) End(ctx context.Context, resourceVersion string) (int, error) {
	return s.sink.end(ctx, resourceVersion)
}

// reflectorAdmission is a list admission (listAdmitter, below)
// as the engine's reflector.Admission.
type reflectorAdmission struct {
	admission listAdmitter
}

// Acquire implements reflector.Admission.
func (a reflectorAdmission) Acquire(ctx context.Context, priority int) (reflector.AdmissionSlot, error) {
	slot, err := a.admission.Acquire(ctx, priority)
	if err != nil || slot == nil {
		return nil, err
	}
	return reflectorAdmissionSlot{slot}, nil
}

// Throttled implements reflector.Admission.
func (a reflectorAdmission) Throttled(err error, slot reflector.AdmissionSlot) {
	var s *admissionSlot
	if held, ok := slot.(reflectorAdmissionSlot); ok {
		s = held.slot
	}
	a.admission.ThrottledBy(err, s)
}

// reflectorAdmissionSlot is an admissionSlot as the engine's
// reflector.AdmissionSlot.
type reflectorAdmissionSlot struct {
	slot *admissionSlot
}

// Release implements reflector.AdmissionSlot.
func (s reflectorAdmissionSlot) Release(ok bool) { s.slot.Release(ok) }

// Context implements reflector.AdmissionSlot.
func (s reflectorAdmissionSlot) Context(ctx context.Context) context.Context {
	return withAdmissionSlot(ctx, s.slot)
}

// reflectorStats are the informer's diagnostics (diag.Stats) as the
// engine's reflector.Stats.
type reflectorStats struct {
	stats *diag.Stats
}

// ListStarting implements reflector.Stats.
func (s reflectorStats) ListStarting() { s.stats.ListStarting() }

// ListSucceeded implements reflector.Stats.
func (s reflectorStats) ListSucceeded(now time.Time) { s.stats.ListSucceeded(now) }

// WatchRestarted implements reflector.Stats.
func (s reflectorStats) WatchRestarted() { s.stats.CountWatchRestart() }

// NextList implements reflector.Stats.
func (s reflectorStats) NextList(reason reflector.ListReason) {
	s.stats.SetNextList(relistReason(reason))
}

// RelistAfter implements reflector.Stats.
func (s reflectorStats) RelistAfter(err error) {
	s.stats.SetNextList(relistReasonAfterWatch(publicReflectorError(err)))
}

// Confirmed implements reflector.Stats.
func (s reflectorStats) Confirmed(resourceVersion string, at time.Time) {
	s.stats.Freshness().Confirm(resourceVersion, at)
}

// RetryAfterCapped implements reflector.Stats.
func (s reflectorStats) RetryAfterCapped() { s.stats.CountRetryAfterCapped() }

// RetryAfterUntil implements reflector.Stats.
func (s reflectorStats) RetryAfterUntil(until time.Time) { s.stats.RetryAfterWait(until) }

// ShardIgnored implements reflector.Stats.
func (s reflectorStats) ShardIgnored(now time.Time) { s.stats.CountShardIgnored(now) }

// engineResume is a snapshot loader as the engine's Options.Resume (nil
// when load is nil).
func engineResume(load func(context.Context) (*reflectorResume, error)) func(context.Context) (*reflector.Snapshot, error) {
	if load == nil {
		return nil
	}
	return func(ctx context.Context) (*reflector.Snapshot, error) {
		resume, err := load(ctx)
		if err != nil || resume == nil {
			return nil, err
		}
		return &reflector.Snapshot{ResourceVersion: resume.resourceVersion, Objects: resume.objects}, nil
	}
}

// badDataCount returns how many times the Reflector received bad data of kind k. It is
// safe for concurrent use; tests and the metrics wiring read it.
func (r *Reflector) badDataCount(k reflector.BadData) uint64 {
	return r.engine.BadDataCount(k)
}

// badDataTotal returns how many times the Reflector received bad data of any kind. It is
// safe for concurrent use.
func (r *Reflector) badDataTotal() uint64 {
	return r.engine.BadDataTotal()
}

// listAdmitter is the list admission a Reflector asks before each LIST or
// streaming list (package listadmission): Acquire waits for a slot of the
// given priority, ThrottledBy reports a list's failure (only a 429 counts)
// with the slot of that list. A *listadmission.Admission is one, a nil one
// included, which admits every list at once.
type listAdmitter interface {
	Acquire(ctx context.Context, priority int) (*admissionSlot, error)
	ThrottledBy(err error, slot *admissionSlot)
}

// admissionSlot is a list's slot of its admission; a nil one holds nothing,
// and its Release does nothing.
type admissionSlot = listadmission.Slot

// withAdmissionSlot returns ctx carrying slot (ctx itself when slot is nil),
// so that a transport wrapped by the slot's admission knows the requests of
// the list it admits.
func withAdmissionSlot(ctx context.Context, slot *admissionSlot) context.Context {
	return listadmission.ContextWithSlot(ctx, slot)
}
