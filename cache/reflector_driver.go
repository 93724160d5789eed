package cache

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

	"github.com/kinformer/kinformer/cache/internal/reflector"
)

// reflectorDriver runs one list-and-watch cycle of a Reflector: it feeds the
// core (internal/reflector) what happened and performs the actions the core
// answers with, the requests, timers and store writes. It decides nothing
// itself. It lives on the goroutine of ListAndWatchWithContext.
type reflectorDriver struct {
	r   *Reflector
	ctx context.Context
	// actions is the core's output buffer, reused from step to step.
	actions []reflector.Action

	// The open stream or watch, and where its events go: the list a
	// streaming list fills, or the Reflector's store.
	w         watch.Interface
	results   <-chan watch.Event
	streaming bool
	events    reflectorEventStore
	finish    func(rv string) (int, error)
	bookmarks ReflectorBookmarkStore
	updater   ResourceVersionUpdater

	// silence is the open stream's bound of silence, or the watch's armed
	// liveness deadline; warn ticks while a streaming list waits for its
	// end bookmark.
	silence *silenceTimer
	warn    clock.Ticker

	// slot is the list admission held by the LIST or streaming list in
	// flight, until it is complete or failed (list_admission.go).
	slot *admissionSlot
	// listSlot is the slot of the last LIST or streaming list, kept after
	// its release so that the list's failure is reported with it.
	listSlot *admissionSlot

	// sink is the LIST being synced, answered is when the server's first
	// answer to it arrived; resumed is the snapshot loaded.
	sink     listSink
	answered time.Time
	resumed  *reflectorResume
	trace    *utiltrace.Trace

	// The resync loop beside the watches, once the cycle watches.
	resyncErr    chan error
	resyncCancel context.CancelFunc
	resyncDone   sync.WaitGroup

	// err is what the cycle returns once done.
	err  error
	done bool
}

// runCycle makes one list-and-watch cycle (see ListAndWatchWithContext).
func (r *Reflector) runCycle(ctx context.Context) error {
	r.state.SetConfig(reflector.Config{
		Name:             r.name,
		TypeDescription:  r.typeDescription,
		Streaming:        r.useWatchList,
		DisableChunking:  r.disableChunking,
		PageSize:         r.WatchListPageSize,
		PageByPage:       r.storeRelistsPageByPage(),
		IdleTimeout:      r.watchIdleTimeout,
		MaxInternalRetry: r.MaxInternalErrorRetryDuration,
	})
	d := &reflectorDriver{r: r, ctx: ctx, actions: make([]reflector.Action, 0, 8)}
	defer d.cleanup()
	return d.run()
}

// input makes in an input of kind, now.
func (d *reflectorDriver) input(in *reflector.Input, kind reflector.InputKind) {
	*in = reflector.Input{Kind: kind, Now: d.r.clock.Now()}
}

// failed makes in an input of kind, now, with err. A 429 answering a LIST or
// a streaming list slows down the lists of every Reflector sharing the list
// admission, not only this one's; one answering a plain watch is this
// Reflector's own backoff's business (watches hold no slot, and an API
// server coming back up answers many of them with 429 while it can serve
// lists).
func (d *reflectorDriver) failed(in *reflector.Input, kind reflector.InputKind, err error) {
	d.failedAt(in, kind, err, d.r.clock.Now())
}

// failedAt is failed at now.
func (d *reflectorDriver) failedAt(in *reflector.Input, kind reflector.InputKind, err error, now time.Time) {
	*in = reflector.Input{Kind: kind, Now: now, Err: err}
	if kind == reflector.InListFailed || d.slot != nil {
		d.r.admission.throttledBy(err, d.listSlot)
	}
}

// admit waits for a slot of the list admission before a LIST or a streaming
// list (at once without one). It returns false when the caller stopped
// first; in then says so.
func (d *reflectorDriver) admit(in *reflector.Input) bool {
	slot, err := d.r.admission.acquire(d.ctx, d.r.admissionPriority)
	if err != nil {
		d.input(in, reflector.InStop)
		return false
	}
	d.slot, d.listSlot = slot, slot
	return true
}

// releaseSlot gives back the list admission's slot, if one is held; ok says
// the list is complete.
func (d *reflectorDriver) releaseSlot(ok bool) {
	d.slot.release(ok)
	d.slot = nil
}

// run steps the core until it ends the cycle.
func (d *reflectorDriver) run() error {
	// Two inputs, swapped at every step: the one the core takes, and the
	// next one, which an action's answer or await fills.
	var a, b reflector.Input
	in, next := &a, &b
	d.input(in, reflector.InStart)
	for {
		d.actions = d.r.state.Step(in, d.actions[:0])
		answered := false
		for i := range d.actions {
			if d.perform(&d.actions[i], in.Now, next) {
				answered = true
			}
		}
		if d.done || d.r.state.Phase() == reflector.PhaseStopped || d.r.state.Phase() == reflector.PhaseIdle {
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
			for next.Kind == reflector.InEvent && d.r.state.Phase() == reflector.PhaseWatching {
				moveTo, arm := d.r.state.WatchEvent(next.Now, next.EventType, next.RV, next.InitialEventsEnd)
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
func (d *reflectorDriver) perform(a *reflector.Action, now time.Time, in *reflector.Input) bool {
	r := d.r
	switch a.Kind {
	case reflector.ActNote:
		r.observe(d.ctx, a, now)
	case reflector.ActPublishRV:
		r.setLastSyncResourceVersion(a.RV)
	case reflector.ActEventApplied:
		d.eventApplied(a.RV, now)
	case reflector.ActArmIdle:
		d.armIdle()
	case reflector.ActStopWatch:
		d.closeWatch()
	case reflector.ActEndCycle:
		d.err, d.done = publicReflectorError(a.Err), true
	case reflector.ActResume:
		d.loadSnapshot(in)
		return true
	case reflector.ActList:
		d.list(a, in)
		return true
	case reflector.ActStream:
		d.openStream(a, in)
		return true
	case reflector.ActWatch:
		d.openWatch(a, in)
		return true
	case reflector.ActBackoff:
		if !r.sleep(d.ctx, r.backoffDelay(a.Err)) {
			d.input(in, reflector.InStop)
		} else {
			d.input(in, reflector.InBackoffDone)
		}
		return true
	case reflector.ActSync:
		d.sync(a, in)
		return true
	}
	return false
}

// eventApplied does ActEventApplied: the observer records the event's
// arrival at now; rv, when not empty, is published and told to a
// ResourceVersionUpdater store.
func (d *reflectorDriver) eventApplied(rv string, now time.Time) {
	d.r.observeEvent(now)
	if rv != "" {
		d.r.setLastSyncResourceVersion(rv)
		if d.updater != nil {
			d.updater.UpdateResourceVersion(rv)
		}
	}
}

// armIdle does ActArmIdle: the watch's liveness deadline starts.
func (d *reflectorDriver) armIdle() {
	d.silence = newSilenceTimer(d.r.clock, d.r.watchIdleTimeout)
}

// loadSnapshot loads the state the first cycle starts from.
func (d *reflectorDriver) loadSnapshot(in *reflector.Input) {
	load := d.r.resume
	d.r.resume = nil
	if load == nil {
		d.input(in, reflector.InSnapshotMissing)
		return
	}
	resume, err := load(d.ctx)
	switch {
	case d.ctx.Err() != nil:
		d.input(in, reflector.InStop)
		return
	case err != nil:
		d.failed(in, reflector.InSnapshotMissing, err)
		return
	case resume == nil:
		d.input(in, reflector.InSnapshotMissing)
		return
	}
	d.resumed = resume
	d.input(in, reflector.InSnapshotLoaded)
	in.RV, in.Count = resume.resourceVersion, len(resume.objects)
}

// list makes a LIST into a new list of the store.
func (d *reflectorDriver) list(a *reflector.Action, in *reflector.Input) {
	r := d.r
	if !a.Retry {
		d.endTrace()
		d.trace = utiltrace.New("Reflector ListAndWatch", utiltrace.Field{Key: "name", Value: r.name})
	}
	if !d.admit(in) {
		return
	}
	sink, count, listRV, paged, answered, err := r.listPages(withAdmissionSlot(d.ctx, d.slot), listSource{relist: a.Relist, fresh: a.Fresh}, reflectorListOptions(a.RV, a.PageSize), a.PageSize)
	d.releaseSlot(err == nil)
	if err != nil && d.ctx.Err() != nil {
		d.input(in, reflector.InStop)
		return
	}
	d.traceStep("Objects listed", utiltrace.Field{Key: "error", Value: err}, utiltrace.Field{Key: "count", Value: count})
	if err != nil {
		d.failed(in, reflector.InListFailed, err)
		return
	}
	d.sink, d.answered = sink, answered
	d.input(in, reflector.InListed)
	in.RV, in.Paged = listRV, paged
}

// openStream opens a streaming list into a new list of the store.
func (d *reflectorDriver) openStream(a *reflector.Action, in *reflector.Input) {
	r := d.r
	if d.trace == nil {
		d.trace = utiltrace.New("Reflector WatchList", utiltrace.Field{Key: "name", Value: r.name})
	}
	if !d.admit(in) {
		return
	}
	store, finish := r.newStreamListStore(d.ctx, listSource{relist: a.Relist, fresh: a.Fresh, streamed: true})
	w, ok := d.open(in, metav1.ListOptions{
		ResourceVersion:      a.RV,
		AllowWatchBookmarks:  true,
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		TimeoutSeconds:       r.watchTimeoutSeconds(),
	})
	if !ok {
		d.releaseSlot(false)
		return
	}
	d.w, d.results, d.streaming = w, w.ResultChan(), true
	d.events, d.finish, d.bookmarks, d.updater = store, finish, nil, nil
	d.bookmarks, _ = store.(ReflectorBookmarkStore)
	if r.initialEventsTimeout > 0 {
		d.silence = newSilenceTimer(r.clock, r.initialEventsTimeout)
	}
	if tc, ok := r.clock.(clock.WithTicker); ok && (r.initialEventsTimeout <= 0 || r.initialEventsTimeout > reflector.InitialEventsWarnInterval) {
		d.warn = tc.NewTicker(reflector.InitialEventsWarnInterval)
	}
	d.input(in, reflector.InOpened)
}

// openWatch opens a watch into the store, and starts the resync loop with
// the cycle's first one.
func (d *reflectorDriver) openWatch(a *reflector.Action, in *reflector.Input) {
	r := d.r
	d.startResync()
	w, ok := d.open(in, metav1.ListOptions{
		ResourceVersion:     a.RV,
		TimeoutSeconds:      r.watchTimeoutSeconds(),
		AllowWatchBookmarks: true,
	})
	if !ok {
		return
	}
	d.w, d.results = w, w.ResultChan()
	d.watchStore()
	d.input(in, reflector.InOpened)
}

// open makes a watch request (a streaming list's too). When it fails, in
// becomes the input that says so (stop, when the caller stopped meanwhile).
func (d *reflectorDriver) open(in *reflector.Input, options metav1.ListOptions) (watch.Interface, bool) {
	w, err := d.r.openWatch(withAdmissionSlot(d.ctx, d.slot), options)
	switch {
	case err == nil:
		return w, true
	case d.ctx.Err() != nil:
		d.input(in, reflector.InStop)
	default:
		d.failed(in, reflector.InOpenFailed, err)
	}
	return nil, false
}

// watchStore makes the open watch's events go to the Reflector's store.
func (d *reflectorDriver) watchStore() {
	d.streaming = false
	d.events, d.finish = d.r.store, nil
	d.bookmarks, _ = d.r.store.(ReflectorBookmarkStore)
	d.updater, _ = d.r.store.(ResourceVersionUpdater)
}

// openWatch makes a watch request. A Watcher that returns both a watch and
// an error has its watch stopped; one that returns neither gets an error.
func (r *Reflector) openWatch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	w, err := r.listerWatcher.WatchWithContext(ctx, options)
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
func (d *reflectorDriver) sync(a *reflector.Action, in *reflector.Input) {
	var count int
	var err error
	switch a.Origin {
	case reflector.OriginSnapshot:
		count, err = d.syncSnapshot(a.RV)
	case reflector.OriginStream:
		d.traceStep("Objects streamed", utiltrace.Field{Key: "events", Value: d.r.state.Events()})
		count, err = d.finish(a.RV)
	default:
		// A complete list is the server's state at its resourceVersion
		// when its first page was answered; it counts once the store
		// reaches that version, so it is told before the store can. (A
		// streaming list was confirmed by its end bookmark; a snapshot is
		// no confirmation.)
		d.r.stats.freshness.confirm(a.RV, d.answered)
		count, err = d.sink.end(d.ctx, a.RV)
		d.sink = nil
	}
	if err != nil {
		d.failed(in, reflector.InSyncFailed, err)
		return
	}

	d.traceStep("SyncWith done")
	d.endTrace()
	if a.Origin == reflector.OriginStream {
		// The stream goes on as the cycle's watch.
		d.stopTimers()
		d.watchStore()
		d.startResync()
	}
	d.input(in, reflector.InSynced)
	in.Count = count
}

// syncSnapshot hands the loaded snapshot to the store as a list. Its objects
// are the cache's as they were saved, so they went through the informer's
// transform already: the list is not transformed again (see
// SharedIndexInformerOptions.SnapshotFile).
func (d *reflectorDriver) syncSnapshot(rv string) (int, error) {
	resume := d.resumed
	d.resumed = nil
	sink := d.r.beginList(listSource{loaded: true})
	for _, obj := range resume.objects {
		if err := sink.put(obj); err != nil {
			return 0, err
		}
	}
	return sink.end(d.ctx, rv)
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
func (d *reflectorDriver) await(in *reflector.Input) {
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
			d.input(in, reflector.InStop)
			return
		case err := <-resyncErr:
			d.failed(in, reflector.InResyncFailed, err)
			return
		case <-warn:
			d.input(in, reflector.InStreamWarnTick)
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
func (d *reflectorDriver) pollControl(in *reflector.Input, resyncErr <-chan error, warn <-chan time.Time) bool {
	select {
	case <-d.ctx.Done():
		d.input(in, reflector.InStop)
		return true
	default:
	}
	if resyncErr != nil {
		select {
		case err := <-resyncErr:
			d.failed(in, reflector.InResyncFailed, err)
			return true
		default:
		}
	}
	if warn != nil {
		select {
		case <-warn:
			d.input(in, reflector.InStreamWarnTick)
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
func (d *reflectorDriver) silenceFired(in *reflector.Input) bool {
	if _, expired := d.silence.expired(); !expired {
		return false
	}
	if d.streaming {
		d.input(in, reflector.InStreamSilent)
	} else {
		d.input(in, reflector.InIdleTimeout)
	}
	return true
}

// received makes in the input of what came off the open stream or watch
// (ok false: it was closed), and writes an accepted event to where the
// stream or watch's events go. The clock is read once per event.
func (d *reflectorDriver) received(in *reflector.Input, event watch.Event, ok bool) {
	if !ok {
		d.input(in, reflector.InClosed)
		return
	}
	now := d.r.clock.Now()
	// Anything that arrives, even what is then rejected, shows that the
	// stream is alive.
	d.silence.observed(now)
	if event.Type == watch.Error {
		d.failedAt(in, reflector.InErrorEvent, watchErrorEventToError(event.Object), now)
		return
	}
	objMeta, bad := d.r.acceptEvent(event)
	if bad != nil {
		*in = reflector.Input{Kind: reflector.InBadData, Now: now, Bad: bad}
		return
	}
	*in = reflector.Input{Kind: reflector.InEvent, Now: now, EventType: event.Type, RV: objMeta.GetResourceVersion()}
	d.apply(event, in, objMeta)
}

// apply writes an accepted event to where the open stream or watch's
// events go.
func (d *reflectorDriver) apply(event watch.Event, in *reflector.Input, objMeta metav1.Object) {
	ctx, r := d.ctx, d.r
	switch event.Type {
	case watch.Added:
		if err := d.events.Add(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to add watch event object to store", "reflector", r.name, "object", event.Object)
		}
	case watch.Modified:
		if err := d.events.Update(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to update watch event object to store", "reflector", r.name, "object", event.Object)
		}
	case watch.Deleted:
		if err := d.events.Delete(event.Object); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to delete watch event object from store", "reflector", r.name, "object", event.Object)
		}
	case watch.Bookmark:
		in.InitialEventsEnd = objMeta.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
		// The server says it has sent everything up to the bookmark's
		// resourceVersion: current when it arrived.
		r.stats.freshness.confirm(in.RV, in.Now)
		if in.InitialEventsEnd && d.streaming {
			// The streaming list is complete: what follows is a watch.
			d.releaseSlot(true)
		}
		if d.bookmarks != nil {
			if err := d.bookmarks.Bookmark(in.RV); err != nil {
				utilruntime.HandleErrorWithContext(ctx, err, "Unable to send bookmark event to store", "reflector", r.name, "object", event.Object)
			}
		}
	}
}

// startResync starts the resync loop beside the cycle's watches, once.
func (d *reflectorDriver) startResync() {
	r := d.r
	if r.resyncPeriod <= 0 || d.resyncCancel != nil {
		return
	}
	d.resyncErr = make(chan error, 1)
	ctx, cancel := context.WithCancel(d.ctx)
	d.resyncCancel = cancel
	d.resyncDone.Go(func() { r.resyncLoop(ctx, d.resyncErr) })
}

// closeWatch stops the open stream or watch and its timers.
func (d *reflectorDriver) closeWatch() {
	if d.w != nil {
		d.w.Stop()
	}
	d.w, d.results = nil, nil
	d.stopTimers()
	// A streaming list stopped before its end bookmark failed.
	d.releaseSlot(false)
}

func (d *reflectorDriver) stopTimers() {
	d.silence.stop()
	d.silence = nil
	if d.warn != nil {
		d.warn.Stop()
		d.warn = nil
	}
}

func (d *reflectorDriver) traceStep(msg string, fields ...utiltrace.Field) {
	if d.trace != nil {
		d.trace.Step(msg, fields...)
	}
}

func (d *reflectorDriver) endTrace() {
	if d.trace != nil {
		d.trace.LogIfLong(10 * time.Second)
		d.trace = nil
	}
}

// cleanup stops whatever the cycle left running and waits for it.
func (d *reflectorDriver) cleanup() {
	d.closeWatch()
	d.endTrace()
	if d.resyncCancel != nil {
		d.resyncCancel()
		d.resyncDone.Wait()
	}
}

// reflectorEventStore is where the driver puts the objects of watch events:
// the Reflector's store, or the list a streaming list fills.
type reflectorEventStore interface {
	Add(obj interface{}) error
	Update(obj interface{}) error
	Delete(obj interface{}) error
}

// resyncLoop calls the store's Resync every resync period (when ShouldResync
// allows) until ctx ends or Resync fails; the failure goes to errc, which
// ends the watch.
func (r *Reflector) resyncLoop(ctx context.Context, errc chan<- error) {
	t := r.clock.NewTimer(r.resyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if r.ShouldResync == nil || r.ShouldResync() {
			r.loggerFor(ctx).V(4).Info("Forcing resync", "reflector", r.name)
			if err := r.store.Resync(); err != nil {
				errc <- err
				return
			}
		}
		t.Reset(r.resyncPeriod)
	}
}
