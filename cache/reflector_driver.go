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
)

// reflectorDriver runs one list-and-watch cycle of a Reflector: it feeds the
// core (reflector_core.go) what happened and performs the actions the core
// answers with, the requests, timers and store writes. It decides nothing
// itself. It lives on the goroutine of ListAndWatchWithContext.
type reflectorDriver struct {
	r   *Reflector
	ctx context.Context
	// actions is the core's output buffer, reused from step to step.
	actions []reflectorAction

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
	r.state.cfg = reflectorCoreConfig{
		name:             r.name,
		typeDescription:  r.typeDescription,
		streaming:        r.useWatchList,
		disableChunking:  r.disableChunking,
		pageSize:         r.WatchListPageSize,
		pageByPage:       r.storeRelistsPageByPage(),
		idleTimeout:      r.watchIdleTimeout,
		maxInternalRetry: r.MaxInternalErrorRetryDuration,
	}
	d := &reflectorDriver{r: r, ctx: ctx, actions: make([]reflectorAction, 0, 8)}
	defer d.cleanup()
	return d.run()
}

// input makes in an input of kind, now.
func (d *reflectorDriver) input(in *reflectorInput, kind reflectorInputKind) {
	*in = reflectorInput{kind: kind, now: d.r.clock.Now()}
}

// failed makes in an input of kind, now, with err. A 429 answering a LIST or
// a streaming list slows down the lists of every Reflector sharing the list
// admission, not only this one's; one answering a plain watch is this
// Reflector's own backoff's business (watches hold no slot, and an API
// server coming back up answers many of them with 429 while it can serve
// lists).
func (d *reflectorDriver) failed(in *reflectorInput, kind reflectorInputKind, err error) {
	*in = reflectorInput{kind: kind, now: d.r.clock.Now(), err: err}
	if kind == inListFailed || d.slot != nil {
		d.r.admission.ThrottledBy(err, d.listSlot)
	}
}

// admit waits for a slot of the list admission before a LIST or a streaming
// list (at once without one). It returns false when the caller stopped
// first; in then says so.
func (d *reflectorDriver) admit(in *reflectorInput) bool {
	slot, err := d.r.admission.Acquire(d.ctx, d.r.admissionPriority)
	if err != nil {
		d.input(in, inStop)
		return false
	}
	d.slot, d.listSlot = slot, slot
	return true
}

// releaseSlot gives back the list admission's slot, if one is held; ok says
// the list is complete.
func (d *reflectorDriver) releaseSlot(ok bool) {
	d.slot.Release(ok)
	d.slot = nil
}

// run steps the core until it ends the cycle.
func (d *reflectorDriver) run() error {
	// Two inputs, swapped at every step: the one the core takes, and the
	// next one, which an action's answer or await fills.
	var a, b reflectorInput
	in, next := &a, &b
	d.input(in, inStart)
	for {
		d.actions = d.r.state.step(in, d.actions[:0])
		answered := false
		for i := range d.actions {
			if d.perform(&d.actions[i], in.now, next) {
				answered = true
			}
		}
		if d.done || d.r.state.phase == phaseStopped || d.r.state.phase == phaseIdle {
			if d.ctx.Err() != nil {
				// Whatever failed as the caller stopped is no failure.
				return nil
			}
			return d.err
		}
		if !answered {
			d.await(next)
		}
		in, next = next, in
	}
}

// perform does one action; it returns the input that answers it, if any.
func (d *reflectorDriver) perform(a *reflectorAction, now time.Time, in *reflectorInput) bool {
	r := d.r
	switch a.kind {
	case actNote:
		r.observe(d.ctx, a, now)
	case actPublishRV:
		r.setLastSyncResourceVersion(a.rv)
	case actEventApplied:
		r.observeEvent(now)
		if a.rv != "" {
			r.setLastSyncResourceVersion(a.rv)
			if d.updater != nil {
				d.updater.UpdateResourceVersion(a.rv)
			}
		}
	case actArmIdle:
		d.silence = newSilenceTimer(r.clock, r.watchIdleTimeout)
	case actStopWatch:
		d.closeWatch()
	case actEndCycle:
		d.err, d.done = a.err, true
	case actResume:
		d.loadSnapshot(in)
		return true
	case actList:
		d.list(a, in)
		return true
	case actStream:
		d.openStream(a, in)
		return true
	case actWatch:
		d.openWatch(a, in)
		return true
	case actBackoff:
		if !r.sleep(d.ctx, r.backoffDelay(a.err)) {
			d.input(in, inStop)
		} else {
			d.input(in, inBackoffDone)
		}
		return true
	case actSync:
		d.sync(a, in)
		return true
	}
	return false
}

// loadSnapshot loads the state the first cycle starts from.
func (d *reflectorDriver) loadSnapshot(in *reflectorInput) {
	load := d.r.resume
	d.r.resume = nil
	if load == nil {
		d.input(in, inSnapshotMissing)
		return
	}
	resume, err := load(d.ctx)
	switch {
	case d.ctx.Err() != nil:
		d.input(in, inStop)
		return
	case err != nil:
		d.failed(in, inSnapshotMissing, err)
		return
	case resume == nil:
		d.input(in, inSnapshotMissing)
		return
	}
	d.resumed = resume
	d.input(in, inSnapshotLoaded)
	in.rv, in.count = resume.resourceVersion, len(resume.objects)
}

// list makes a LIST into a new list of the store.
func (d *reflectorDriver) list(a *reflectorAction, in *reflectorInput) {
	r := d.r
	if !a.retry {
		d.endTrace()
		d.trace = utiltrace.New("Reflector ListAndWatch", utiltrace.Field{Key: "name", Value: r.name})
	}
	if !d.admit(in) {
		return
	}
	sink, count, listRV, paged, answered, err := r.listPages(withAdmissionSlot(d.ctx, d.slot), listSource{relist: a.relist, fresh: a.fresh}, reflectorListOptions(a.rv, a.pageSize), a.pageSize)
	d.releaseSlot(err == nil)
	if err != nil && d.ctx.Err() != nil {
		d.input(in, inStop)
		return
	}
	d.traceStep("Objects listed", utiltrace.Field{Key: "error", Value: err}, utiltrace.Field{Key: "count", Value: count})
	if err != nil {
		d.failed(in, inListFailed, err)
		return
	}
	d.sink, d.answered = sink, answered
	d.input(in, inListed)
	in.rv, in.paged = listRV, paged
}

// openStream opens a streaming list into a new list of the store.
func (d *reflectorDriver) openStream(a *reflectorAction, in *reflectorInput) {
	r := d.r
	if d.trace == nil {
		d.trace = utiltrace.New("Reflector WatchList", utiltrace.Field{Key: "name", Value: r.name})
	}
	if !d.admit(in) {
		return
	}
	store, finish := r.newStreamListStore(d.ctx, listSource{relist: a.relist, fresh: a.fresh, streamed: true})
	w, ok := d.open(in, metav1.ListOptions{
		ResourceVersion:      a.rv,
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
	if tc, ok := r.clock.(clock.WithTicker); ok && (r.initialEventsTimeout <= 0 || r.initialEventsTimeout > reflectorInitialEventsWarnInterval) {
		d.warn = tc.NewTicker(reflectorInitialEventsWarnInterval)
	}
	d.input(in, inOpened)
}

// openWatch opens a watch into the store, and starts the resync loop with
// the cycle's first one.
func (d *reflectorDriver) openWatch(a *reflectorAction, in *reflectorInput) {
	r := d.r
	d.startResync()
	w, ok := d.open(in, metav1.ListOptions{
		ResourceVersion:     a.rv,
		TimeoutSeconds:      r.watchTimeoutSeconds(),
		AllowWatchBookmarks: true,
	})
	if !ok {
		return
	}
	d.w, d.results = w, w.ResultChan()
	d.watchStore()
	d.input(in, inOpened)
}

// open makes a watch request (a streaming list's too). When it fails, in
// becomes the input that says so (stop, when the caller stopped meanwhile).
func (d *reflectorDriver) open(in *reflectorInput, options metav1.ListOptions) (watch.Interface, bool) {
	w, err := d.r.openWatch(withAdmissionSlot(d.ctx, d.slot), options)
	switch {
	case err == nil:
		return w, true
	case d.ctx.Err() != nil:
		d.input(in, inStop)
	default:
		d.failed(in, inOpenFailed, err)
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
func (d *reflectorDriver) sync(a *reflectorAction, in *reflectorInput) {
	var count int
	var err error
	switch a.origin {
	case originSnapshot:
		count, err = d.syncSnapshot(a.rv)
	case originStream:
		d.traceStep("Objects streamed", utiltrace.Field{Key: "events", Value: d.r.state.events})
		count, err = d.finish(a.rv)
	default:
		// A complete list is the server's state at its resourceVersion
		// when its first page was answered; it counts once the store
		// reaches that version, so it is told before the store can. (A
		// streaming list was confirmed by its end bookmark; a snapshot is
		// no confirmation.)
		d.r.stats.Freshness().Confirm(a.rv, d.answered)
		count, err = d.sink.end(d.ctx, a.rv)
		d.sink = nil
	}
	if err != nil {
		d.failed(in, inSyncFailed, err)
		return
	}

	d.traceStep("SyncWith done")
	d.endTrace()
	if a.origin == originStream {
		// The stream goes on as the cycle's watch.
		d.stopTimers()
		d.watchStore()
		d.startResync()
	}
	d.input(in, inSynced)
	in.count = count
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
func (d *reflectorDriver) await(in *reflectorInput) {
	r := d.r
	var warn <-chan time.Time
	if d.warn != nil {
		warn = d.warn.C()
	}
	var resyncErr <-chan error
	if !d.streaming {
		resyncErr = d.resyncErr
	}
	for {
		select {
		case <-d.ctx.Done():
			d.input(in, inStop)
			return
		case err := <-resyncErr:
			d.failed(in, inResyncFailed, err)
			return
		case <-warn:
			d.input(in, inStreamWarnTick)
			return
		case <-d.silence.C():
			if _, expired := d.silence.expired(); !expired {
				continue
			}
			if d.streaming {
				d.input(in, inStreamSilent)
				return
			}
			d.input(in, inIdleTimeout)
			return
		case event, ok := <-d.results:
			if !ok {
				d.input(in, inClosed)
				return
			}
			// Anything that arrives, even what is then rejected, shows
			// that the stream is alive.
			d.silence.observed()
			if event.Type == watch.Error {
				d.failed(in, inErrorEvent, watchErrorEventToError(event.Object))
				return
			}
			objMeta, bad := r.acceptEvent(event)
			if bad != nil {
				d.input(in, inBadData)
				in.bad = bad
				return
			}
			d.input(in, inEvent)
			in.eventType, in.rv = event.Type, objMeta.GetResourceVersion()
			d.apply(event, in, objMeta)
			return
		}
	}
}

// apply writes an accepted event to where the open stream or watch's
// events go.
func (d *reflectorDriver) apply(event watch.Event, in *reflectorInput, objMeta metav1.Object) {
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
		in.initialEventsEnd = objMeta.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
		// The server says it has sent everything up to the bookmark's
		// resourceVersion: current when it arrived.
		r.stats.Freshness().Confirm(in.rv, in.now)
		if in.initialEventsEnd && d.streaming {
			// The streaming list is complete: what follows is a watch.
			d.releaseSlot(true)
		}
		if d.bookmarks != nil {
			if err := d.bookmarks.Bookmark(in.rv); err != nil {
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
