package reflector

import (
	"context"
	"errors"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	utiltrace "k8s.io/utils/trace"
)

// driver runs one list-and-watch cycle of a Reflector: it feeds the
// core (State.Step) what happened and performs the actions the core
// answers with, the requests, timers and store writes. It decides nothing
// itself. It lives on the goroutine of Engine.RunCycle.
type driver struct {
	e   *Engine
	ctx context.Context
	// actions is the core's output buffer, reused from step to step.
	actions []Action

	// The open stream or watch, and where its events go: the list a
	// streaming list fills, or the Reflector's store.
	w         watch.Interface
	results   <-chan watch.Event
	streaming bool
	events    EventSink
	finish    func(rv string) (int, error)
	bookmarks BookmarkStore
	updater   VersionUpdater

	// silence is the open stream's bound of silence, or the watch's armed
	// liveness deadline; warn ticks while a streaming list waits for its
	// end bookmark.
	silence *silenceTimer
	warn    clock.Ticker

	// slot is the list admission held by the LIST or streaming list in
	// flight, until it is complete or failed (nil: none).
	slot AdmissionSlot
	// listSlot is the slot of the last LIST or streaming list, kept after
	// its release so that the list's failure is reported with it.
	listSlot AdmissionSlot

	// sink is the LIST being synced, answered is when the server's first
	// answer to it arrived; resumed is the snapshot loaded.
	sink     ListSink
	answered time.Time
	resumed  *Snapshot
	trace    *utiltrace.Trace

	// The resync loop beside the watches, once the cycle watches.
	resyncErr    chan error
	resyncCancel context.CancelFunc
	resyncDone   sync.WaitGroup

	// shardReported: the server was found ignoring the shard selector in
	// this cycle, and that was reported (shard.go).
	shardReported bool

	// err is what the cycle returns once done.
	err  error
	done bool
}

// input makes in an input of kind, now.
func (d *driver) input(in *Input, kind InputKind) {
	*in = Input{Kind: kind, Now: d.e.clock.Now()}
}

// failed makes in an input of kind, now, with err. A 429 answering a LIST or
// a streaming list slows down the lists of every Reflector sharing the list
// admission, not only this one's; one answering a plain watch is this
// Reflector's own backoff's business (watches hold no slot, and an API
// server coming back up answers many of them with 429 while it can serve
// lists).
func (d *driver) failed(in *Input, kind InputKind, err error) {
	d.failedAt(in, kind, err, d.e.clock.Now())
}

// failedAt is failed at now.
func (d *driver) failedAt(in *Input, kind InputKind, err error, now time.Time) {
	*in = Input{Kind: kind, Now: now, Err: err}
	if d.e.admission != nil && (kind == InListFailed || d.slot != nil) {
		d.e.admission.Throttled(err, d.listSlot)
	}
}

// admit waits for a slot of the list admission before a LIST or a streaming
// list (at once without one). It returns false when the caller stopped
// first; in then says so.
func (d *driver) admit(in *Input) bool {
	if d.e.admission == nil {
		return true
	}
	slot, err := d.e.admission.Acquire(d.ctx, d.e.settings.AdmissionPriority)
	if err != nil {
		d.input(in, InStop)
		return false
	}
	d.slot, d.listSlot = slot, slot
	return true
}

// releaseSlot gives back the list admission's slot, if one is held; ok says
// the list is complete.
func (d *driver) releaseSlot(ok bool) {
	if d.slot != nil {
		d.slot.Release(ok)
		d.slot = nil
	}
}

// slotContext returns the context of the requests of the list in flight:
// d.ctx, carrying the slot when one is held.
func (d *driver) slotContext() context.Context {
	if d.slot == nil {
		return d.ctx
	}
	return d.slot.Context(d.ctx)
}

// run steps the core until it ends the cycle.
func (d *driver) run() error {
	// Two inputs, swapped at every step: the one the core takes, and the
	// next one, which an action's answer or await fills.
	var a, b Input
	in, next := &a, &b
	d.input(in, InStart)
	for {
		d.actions = d.e.state.Step(in, d.actions[:0])
		answered := false
		for i := range d.actions {
			if d.perform(&d.actions[i], in.Now, next) {
				answered = true
			}
		}
		if d.done || d.e.state.Phase() == PhaseStopped || d.e.state.Phase() == PhaseIdle {
			if d.ctx.Err() != nil {
				// Whatever failed as the caller stopped is no failure.
				return nil
			}
			return d.err
		}
		if !answered {
			d.await(next)
			// The events of an open watch take the core's WatchEvent, which
			// is Step for them without the actions buffer.
			for next.Kind == InEvent && d.e.state.Phase() == PhaseWatching {
				moveTo, arm := d.e.state.WatchEvent(next.Now, next.EventType, next.RV, next.InitialEventsEnd)
				d.eventApplied(moveTo, next.Now)
				if arm {
					d.armIdle()
				}
				d.await(next)
			}
		}
		in, next = next, in
	}
}

// perform does one action; it returns the input that answers it, if any.
func (d *driver) perform(a *Action, now time.Time, in *Input) bool {
	e := d.e
	switch a.Kind {
	case ActNote:
		e.observe(d.ctx, a, now)
	case ActPublishRV:
		e.setLastSyncResourceVersion(a.RV)
	case ActEventApplied:
		d.eventApplied(a.RV, now)
	case ActArmIdle:
		d.armIdle()
	case ActStopWatch:
		d.closeWatch()
	case ActEndCycle:
		d.err, d.done = a.Err, true
	case ActResume:
		d.loadSnapshot(in)
		return true
	case ActList:
		d.list(a, in)
		return true
	case ActStream:
		d.openStream(a, in)
		return true
	case ActWatch:
		d.openWatch(a, in)
		return true
	case ActBackoff:
		if !e.Sleep(d.ctx, e.BackoffDelay(a.Err)) {
			d.input(in, InStop)
		} else {
			d.input(in, InBackoffDone)
		}
		return true
	case ActSync:
		d.sync(a, in)
		return true
	}
	return false
}

// eventApplied does ActEventApplied: the event's arrival at now is
// recorded; rv, when not empty, is published and told to a VersionUpdater
// store.
func (d *driver) eventApplied(rv string, now time.Time) {
	d.e.arrivals.EventReceived(now)
	if rv != "" {
		d.e.setLastSyncResourceVersion(rv)
		if d.updater != nil {
			d.updater.UpdateResourceVersion(rv)
		}
	}
}

// armIdle does ActArmIdle: the watch's liveness deadline starts.
func (d *driver) armIdle() {
	d.silence = newSilenceTimer(d.e.clock, d.e.settings.WatchIdleTimeout)
}

// loadSnapshot loads the state the first cycle starts from.
func (d *driver) loadSnapshot(in *Input) {
	load := d.e.resume
	d.e.resume = nil
	if load == nil {
		d.input(in, InSnapshotMissing)
		return
	}
	resume, err := load(d.ctx)
	switch {
	case d.ctx.Err() != nil:
		d.input(in, InStop)
		return
	case err != nil:
		d.failed(in, InSnapshotMissing, err)
		return
	case resume == nil:
		d.input(in, InSnapshotMissing)
		return
	}
	d.resumed = resume
	d.input(in, InSnapshotLoaded)
	in.RV, in.Count = resume.ResourceVersion, len(resume.Objects)
}

// list makes a LIST into a new list of the store.
func (d *driver) list(a *Action, in *Input) {
	e := d.e
	if !a.Retry {
		d.endTrace()
		d.trace = utiltrace.New("Reflector ListAndWatch", utiltrace.Field{Key: "name", Value: e.name})
	}
	if !d.admit(in) {
		return
	}
	sink, count, listRV, paged, answered, err := e.listPages(d.slotContext(), ListSource{Relist: a.Relist, Fresh: a.Fresh}, reflectorListOptions(a.RV, a.PageSize), a.PageSize, d.shardListReport())
	d.releaseSlot(err == nil)
	if err != nil && d.ctx.Err() != nil {
		d.input(in, InStop)
		return
	}
	d.traceStep("Objects listed", utiltrace.Field{Key: "error", Value: err}, utiltrace.Field{Key: "count", Value: count})
	if err != nil {
		d.failed(in, InListFailed, err)
		return
	}
	d.sink, d.answered = sink, answered
	d.input(in, InListed)
	in.RV, in.Paged = listRV, paged
}

// openStream opens a streaming list into a new list of the store.
func (d *driver) openStream(a *Action, in *Input) {
	e := d.e
	if d.trace == nil {
		d.trace = utiltrace.New("Reflector WatchList", utiltrace.Field{Key: "name", Value: e.name})
	}
	if !d.admit(in) {
		return
	}
	store, finish := e.lists.BeginStreamList(d.ctx, ListSource{Relist: a.Relist, Fresh: a.Fresh, Streamed: true})
	w, ok := d.open(in, metav1.ListOptions{
		ResourceVersion:      a.RV,
		AllowWatchBookmarks:  true,
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		TimeoutSeconds:       e.WatchTimeoutSeconds(),
	})
	if !ok {
		d.releaseSlot(false)
		return
	}
	d.w, d.results, d.streaming = w, w.ResultChan(), true
	d.events, d.finish, d.bookmarks, d.updater = store, finish, nil, nil
	d.bookmarks, _ = store.(BookmarkStore)
	if bound := e.settings.InitialEventsTimeout; bound > 0 {
		d.silence = newSilenceTimer(e.clock, bound)
	}
	if tc, ok := e.clock.(clock.WithTicker); ok && (e.settings.InitialEventsTimeout <= 0 || e.settings.InitialEventsTimeout > InitialEventsWarnInterval) {
		d.warn = tc.NewTicker(InitialEventsWarnInterval)
	}
	d.input(in, InOpened)
}

// openWatch opens a watch into the store, and starts the resync loop with
// the cycle's first one.
func (d *driver) openWatch(a *Action, in *Input) {
	e := d.e
	d.startResync()
	w, ok := d.open(in, metav1.ListOptions{
		ResourceVersion:     a.RV,
		TimeoutSeconds:      e.WatchTimeoutSeconds(),
		AllowWatchBookmarks: true,
	})
	if !ok {
		return
	}
	d.w, d.results = w, w.ResultChan()
	d.watchStore()
	d.input(in, InOpened)
}

// open makes a watch request (a streaming list's too). When it fails, in
// becomes the input that says so (stop, when the caller stopped meanwhile).
func (d *driver) open(in *Input, options metav1.ListOptions) (watch.Interface, bool) {
	w, err := d.e.openWatch(d.slotContext(), options)
	switch {
	case err == nil:
		return w, true
	case d.ctx.Err() != nil:
		d.input(in, InStop)
	default:
		d.failed(in, InOpenFailed, err)
	}
	return nil, false
}

// watchStore makes the open watch's events go to the Reflector's store.
func (d *driver) watchStore() {
	d.streaming = false
	d.events, d.finish = d.e.store, nil
	d.bookmarks, _ = d.e.store.(BookmarkStore)
	d.updater, _ = d.e.store.(VersionUpdater)
}

// openWatch makes a watch request, with the shard selector if any. A Watcher that returns both a watch and
// an error has its watch stopped; one that returns neither gets an error.
func (e *Engine) openWatch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	e.shardRequest(&options)
	w, err := e.lw.WatchWithContext(ctx, options)
	if err == nil && w == nil {
		err = errors.New("the watch call returned neither a watch nor an error")
	}
	if err != nil {
		if w != nil {
			w.Stop()
		}
		return nil, err
	}
	return w, nil
}

// sync ends the list the core names at rv.
func (d *driver) sync(a *Action, in *Input) {
	var count int
	var err error
	switch a.Origin {
	case OriginSnapshot:
		count, err = d.syncSnapshot(a.RV)
	case OriginStream:
		d.traceStep("Objects streamed", utiltrace.Field{Key: "events", Value: d.e.state.Events()})
		count, err = d.finish(a.RV)
	default:
		// A complete list is the server's state at its resourceVersion
		// when its first page was answered; it counts once the store
		// reaches that version, so it is told before the store can. (A
		// streaming list was confirmed by its end bookmark; a snapshot is
		// no confirmation.)
		d.e.stats.Confirmed(a.RV, d.answered)
		count, err = d.sink.End(d.ctx, a.RV)
		d.sink = nil
	}
	if err != nil {
		d.failed(in, InSyncFailed, err)
		return
	}

	d.traceStep("SyncWith done")
	d.endTrace()
	if a.Origin == OriginStream {
		// The stream goes on as the cycle's watch.
		d.stopTimers()
		d.watchStore()
		d.startResync()
	}
	d.input(in, InSynced)
	in.Count = count
}

// syncSnapshot hands the loaded snapshot to the store as a list. Its objects
// are the cache's as they were saved, so they went through the informer's
// transform already: the list is not transformed again (see
// SharedIndexInformerOptions.SnapshotFile).
func (d *driver) syncSnapshot(rv string) (int, error) {
	resume := d.resumed
	d.resumed = nil
	sink := d.e.lists.BeginList(ListSource{Loaded: true})
	for _, obj := range resume.Objects {
		if err := sink.Put(obj); err != nil {
			return 0, err
		}
	}
	return sink.End(d.ctx, rv)
}

// await waits for what happens next to the open stream or watch.
//
// What else may be ready (a stop, a failed resync, a warn tick, an expired
// silence) is looked at first, one channel at a time without blocking; an
// event already waiting is then taken with a single receive. Only when
// nothing is ready does await block in a select over every channel. A
// select over several ready channels picks one of them at random; looking
// at the others before the events is one of its choices, and it spares
// every event the locks of a select over all of them.
func (d *driver) await(in *Input) {
	var warn <-chan time.Time
	if d.warn != nil {
		warn = d.warn.C()
	}
	var resyncErr <-chan error
	if !d.streaming {
		resyncErr = d.resyncErr
	}
	for {
		if d.pollControl(in, resyncErr, warn) {
			return
		}
		select {
		case event, ok := <-d.results:
			d.received(in, event, ok)
			return
		default:
		}
		select {
		case <-d.ctx.Done():
			d.input(in, InStop)
			return
		case err := <-resyncErr:
			d.failed(in, InResyncFailed, err)
			return
		case <-warn:
			d.input(in, InStreamWarnTick)
			return
		case <-d.silence.C():
			if d.silenceFired(in) {
				return
			}
		case event, ok := <-d.results:
			d.received(in, event, ok)
			return
		}
	}
}

// pollControl takes, without blocking, whichever of a stop, a failed
// resync, a warn tick and an expired silence is ready, in that order. It
// reports whether in now says what happened.
func (d *driver) pollControl(in *Input, resyncErr <-chan error, warn <-chan time.Time) bool {
	select {
	case <-d.ctx.Done():
		d.input(in, InStop)
		return true
	default:
	}
	if resyncErr != nil {
		select {
		case err := <-resyncErr:
			d.failed(in, InResyncFailed, err)
			return true
		default:
		}
	}
	if warn != nil {
		select {
		case <-warn:
			d.input(in, InStreamWarnTick)
			return true
		default:
		}
	}
	if c := d.silence.C(); c != nil {
		select {
		case <-c:
			return d.silenceFired(in)
		default:
		}
	}
	return false
}

// silenceFired handles the silence timer's firing: when nothing arrived for
// its whole limit, in says the stream went silent or the watch's liveness
// deadline passed; otherwise the timer is set again and it reports false.
func (d *driver) silenceFired(in *Input) bool {
	if _, expired := d.silence.expired(); !expired {
		return false
	}
	if d.streaming {
		d.input(in, InStreamSilent)
	} else {
		d.input(in, InIdleTimeout)
	}
	return true
}

// received makes in the input of what came off the open stream or watch
// (ok false: it was closed), and writes an accepted event to where the
// stream or watch's events go. The clock is read once per event.
func (d *driver) received(in *Input, event watch.Event, ok bool) {
	if !ok {
		d.input(in, InClosed)
		return
	}
	now := d.e.clock.Now()
	// Anything that arrives, even what is then rejected, shows that the
	// stream is alive.
	d.silence.observed(now)
	if event.Type == watch.Error {
		d.failedAt(in, InErrorEvent, watchErrorEventToError(event.Object), now)
		return
	}
	objMeta, bad := d.e.acceptEvent(event)
	if bad != nil {
		*in = Input{Kind: InBadData, Now: now, Bad: bad}
		return
	}
	*in = Input{Kind: InEvent, Now: now, EventType: event.Type, RV: objMeta.GetResourceVersion()}
	// An event outside the shard still moves the resourceVersion: the
	// change it stands for is one the shard's cache has nothing to do with.
	if d.eventInShard(objMeta, event.Type == watch.Bookmark, now) {
		d.apply(event, in, objMeta)
	}
}

// apply writes an accepted event to where the open stream or watch's
// events go.
func (d *driver) apply(event watch.Event, in *Input, objMeta metav1.Object) {
	ctx, e := d.ctx, d.e
	switch event.Type {
	case watch.Added:
		if err := d.events.Add(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to add watch event object to store", "reflector", e.name, "object", event.Object)
		}
	case watch.Modified:
		if err := d.events.Update(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to update watch event object to store", "reflector", e.name, "object", event.Object)
		}
	case watch.Deleted:
		if err := d.events.Delete(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to delete watch event object from store", "reflector", e.name, "object", event.Object)
		}
	case watch.Bookmark:
		in.InitialEventsEnd = objMeta.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
		// The server says it has sent everything up to the bookmark's
		// resourceVersion: current when it arrived.
		e.stats.Confirmed(in.RV, in.Now)
		if in.InitialEventsEnd && d.streaming {
			// The streaming list is complete: what follows is a watch.
			d.releaseSlot(true)
		}
		if d.bookmarks != nil {
			if err := d.bookmarks.Bookmark(in.RV); err != nil {
				utilruntime.HandleErrorWithContext(ctx, err, "Unable to send bookmark event to store", "reflector", e.name, "object", event.Object)
			}
		}
	}
}

// startResync starts the resync loop beside the cycle's watches, once.
func (d *driver) startResync() {
	e := d.e
	if e.settings.ResyncPeriod <= 0 || d.resyncCancel != nil {
		return
	}
	d.resyncErr = make(chan error, 1)
	ctx, cancel := context.WithCancel(d.ctx)
	d.resyncCancel = cancel
	shouldResync := e.cycle.ShouldResync
	d.resyncDone.Go(func() { e.resyncLoop(ctx, shouldResync, d.resyncErr) })
}

// closeWatch stops the open stream or watch and its timers.
func (d *driver) closeWatch() {
	if d.w != nil {
		d.w.Stop()
	}
	d.w, d.results = nil, nil
	d.stopTimers()
	// A streaming list stopped before its end bookmark failed.
	d.releaseSlot(false)
}

func (d *driver) stopTimers() {
	d.silence.stop()
	d.silence = nil
	if d.warn != nil {
		d.warn.Stop()
		d.warn = nil
	}
}

func (d *driver) traceStep(msg string, fields ...utiltrace.Field) {
	if d.trace != nil {
		d.trace.Step(msg, fields...)
	}
}

func (d *driver) endTrace() {
	if d.trace != nil {
		d.trace.LogIfLong(10 * time.Second)
		d.trace = nil
	}
}

// cleanup stops whatever the cycle left running and waits for it.
func (d *driver) cleanup() {
	d.closeWatch()
	d.endTrace()
	if d.resyncCancel != nil {
		d.resyncCancel()
		d.resyncDone.Wait()
	}
}

// resyncLoop calls the store's Resync every resync period (when ShouldResync
// allows) until ctx ends or Resync fails; the failure goes to errc, which
// ends the watch.
func (e *Engine) resyncLoop(ctx context.Context, shouldResync func() bool, errc chan<- error) {
	t := e.clock.NewTimer(e.settings.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if shouldResync == nil || shouldResync() {
			e.loggerFor(ctx).V(4).Info("Forcing resync", "reflector", e.name)
			if err := e.store.Resync(); err != nil {
				errc <- err
				return
			}
		}
		t.Reset(e.settings.ResyncPeriod)
	}
}
