package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiltrace "k8s.io/utils/trace"
)

// pagewiseReplacer is implemented by the queues the informers build for
// themselves (see newInformerQueue): instead of one Replace with the whole
// list, the Reflector hands a list over page by page as the pages arrive, so
// that a page's objects replace the old ones (which become garbage) while
// the next page is fetched, and the old state and the whole new list are
// never alive together.
//
// A list is replaceStart, any number of replacePage calls, then replaceEnd.
// A replaceStart while a list is unfinished (the previous attempt failed in
// the middle) abandons that list: what its pages applied stays, and nothing
// is deleted for it; the new list decides what is deleted at its end.
//
// The methods are called from the Reflector's goroutine only.
type pagewiseReplacer interface {
	// pagewiseReplace reports whether the queue takes lists page by page.
	pagewiseReplace() bool
	// replaceStart begins a list.
	replaceStart() error
	// replacePage queues the objects of one page of the list, in list
	// order. Keys in forget (streaming lists only) were deleted from the
	// list after earlier pages were handed over; they no longer count as
	// listed. It blocks while the pages queued before are not yet being
	// processed, until ctx ends or the queue is closed (then it returns
	// ctx's error or ErrFIFOClosed without queueing anything more). An
	// object whose key cannot be computed is logged and skipped; a
	// transformer error is returned and ends the list.
	replacePage(ctx context.Context, objs []interface{}, forget []string) error
	// replaceEnd completes the list, current at resourceVersion: keys not
	// listed since replaceStart are deleted (DeletedFinalStateUnknown),
	// and the first list's end makes everything then queued the initial
	// batch for HasSynced.
	replaceEnd(resourceVersion string) error
}

// pagewiseStore returns the Reflector's store as a pagewiseReplacer when it
// takes lists page by page and the list to come is a relist. The first list
// (nothing synced yet: no list and no snapshot resumed) goes to the store
// whole, with Replace: there is no old state for it to replace, so taking
// it page by page would save no memory, and the store applies a whole list
// in one bulk operation, faster than page by page.
func (r *Reflector) pagewiseStore() pagewiseReplacer {
	pw, ok := r.store.(pagewiseReplacer)
	if !ok || !pw.pagewiseReplace() || r.LastSyncResourceVersion() == "" {
		return nil
	}
	return pw
}

// pagewiseListPageSize is listPageSize for a store that takes lists page by
// page: relists (at a resourceVersion other than "0") are paged with the
// default page size even when the watch cache could serve them unpaged, so
// that the old state can be replaced as pages arrive. An explicit
// WatchListPageSize or DisableChunking still decides.
func (r *Reflector) pagewiseListPageSize(rv string) int64 {
	if r.disableChunking || r.WatchListPageSize != 0 {
		return r.listPageSize(rv)
	}
	return reflectorDefaultPageSize
}

// listPagewise is list for a store that takes lists page by page.
func (r *Reflector) listPagewise(ctx context.Context, pw pagewiseReplacer) error {
	rv := r.relistResourceVersion()
	pageSize := r.pagewiseListPageSize(rv)
	trace := utiltrace.New("Reflector ListAndWatch", utiltrace.Field{Key: "name", Value: r.name})
	defer trace.LogIfLong(10 * time.Second)

	start := r.clock.Now()
	r.metrics.listStarted()
	r.stats.listStarting()
	count, listRV, paged, err := r.listPagesInto(ctx, pw, reflectorListOptions(rv, pageSize), pageSize)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// As in list: the version asked for is gone or not there yet.
		r.setLastSyncResourceVersionUnavailable(true)
		count, listRV, paged, err = r.listPagesInto(ctx, pw, reflectorListOptions(r.relistResourceVersion(), pageSize), pageSize)
	}
	trace.Step("Objects listed", utiltrace.Field{Key: "error", Value: err}, utiltrace.Field{Key: "count", Value: count})
	if err != nil {
		var sync *reflectorPageSyncError
		if errors.As(err, &sync) {
			return err
		}
		return fmt.Errorf("failed to list %v: %w", r.typeDescription, err)
	}
	r.mu.Lock()
	if rv == "0" && paged {
		r.paginatedResult = true
	}
	r.lastSyncResourceVersionUnavailable = false
	r.mu.Unlock()

	if err := r.syncAt(listRV, func() error { return pw.replaceEnd(listRV) }); err != nil {
		return fmt.Errorf("unable to sync list result: %w", err)
	}
	trace.Step("SyncWith done")
	r.stats.listSucceeded(r.clock.Now())
	r.metrics.listDone(r.clock.Since(start).Seconds(), count)
	return nil
}

// reflectorPageSyncError is the error of a page the store refused.
type reflectorPageSyncError struct{ err error }

func (e *reflectorPageSyncError) Error() string {
	return fmt.Sprintf("unable to sync list result: %v", e.err)
}

func (e *reflectorPageSyncError) Unwrap() error { return e.err }

// listPagesInto is listPages for a pagewise store: it starts a list on pw and
// hands every page to it as it arrives. When a continue token has expired,
// the list starts over (replaceStart) with an unpaged request at the
// original resourceVersion, as listPages does, and follows the pages should
// the answer still come in pages (a ListWatch that sets a limit itself); the
// pages already handed over stay applied, and the deletions at the end are
// decided by the restarted list alone. It returns the number of objects
// handed over since the last start, the list's resourceVersion and whether
// the answer came in more than one page.
func (r *Reflector) listPagesInto(ctx context.Context, pw pagewiseReplacer, options metav1.ListOptions, pageSize int64) (int, string, bool, error) {
	if options.Limit == 0 {
		options.Limit = pageSize
	}
	wantRV, wantMatch := options.ResourceVersion, options.ResourceVersionMatch
	if err := pw.replaceStart(); err != nil {
		return 0, "", false, &reflectorPageSyncError{err: err}
	}
	count := 0
	var listRV string
	paged, restarted := false, false
	var page []interface{}
	for {
		if err := ctx.Err(); err != nil {
			return count, "", paged, err
		}
		obj, err := r.listerWatcher.ListWithContext(ctx, options)
		if err != nil {
			if options.Continue == "" || !apierrors.IsResourceExpired(err) || restarted {
				return count, "", paged, err
			}
			restarted = true
			count, listRV = 0, ""
			options.Limit, options.Continue = 0, ""
			options.ResourceVersion, options.ResourceVersionMatch = wantRV, wantMatch
			if err := pw.replaceStart(); err != nil {
				return count, "", paged, &reflectorPageSyncError{err: err}
			}
			continue
		}
		var next, pageRV string
		page, pageRV, next, err = r.appendListPage(ctx, page[:0], obj)
		obj = nil // the page's array is garbage once its items are copied out
		if err != nil {
			return count, "", paged, err
		}
		if options.Continue == "" {
			listRV = pageRV
		}
		count += len(page)
		if err := pw.replacePage(ctx, page, nil); err != nil {
			return count, "", paged, &reflectorPageSyncError{err: err}
		}
		clear(page)
		if next == "" {
			return count, listRV, paged, nil
		}
		options.Continue = next
		options.ResourceVersion, options.ResourceVersionMatch = "", ""
		paged = true
	}
}

// reflectorStreamPages is the reflectorEventStore of a streaming list into a
// pagewise store: it gathers the streamed objects into pages (in arrival
// order; a later event for a key in the gathered page replaces or removes
// it) and hands each full page to the store, so the stream is applied as it
// arrives instead of being collected whole. A deletion streamed for a key
// of a page already handed over is passed on with the next page as a key to
// forget.
type reflectorStreamPages struct {
	ctx       context.Context
	pw        pagewiseReplacer
	pageSize  int
	index     map[string]int // key -> position in items
	items     []interface{}  // nil entries are deleted objects
	forget    []string
	handed    int // objects handed over
	failed    error
	startDone bool
}

func newReflectorStreamPages(ctx context.Context, pw pagewiseReplacer) *reflectorStreamPages {
	return &reflectorStreamPages{ctx: ctx, pw: pw, pageSize: reflectorDefaultPageSize, index: map[string]int{}}
}

// streamKey computes the namespace/name key the list accumulator uses.
func streamKey(obj interface{}) (string, error) {
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("object of type %T has no object metadata: %w", obj, err)
	}
	if ns := objMeta.GetNamespace(); ns != "" {
		return ns + "/" + objMeta.GetName(), nil
	}
	return objMeta.GetName(), nil
}

func (p *reflectorStreamPages) start() error {
	if p.startDone {
		return nil
	}
	p.startDone = true
	if err := p.pw.replaceStart(); err != nil {
		p.failed = &reflectorPageSyncError{err: err}
		return p.failed
	}
	return nil
}

func (p *reflectorStreamPages) put(obj interface{}) error {
	if p.failed != nil {
		return p.failed
	}
	if err := p.start(); err != nil {
		return err
	}
	key, err := streamKey(obj)
	if err != nil {
		return err
	}
	if i, ok := p.index[key]; ok {
		p.items[i] = obj
		return nil
	}
	p.index[key] = len(p.items)
	p.items = append(p.items, obj)
	if len(p.index) >= p.pageSize {
		return p.flush()
	}
	return nil
}

// Add implements reflectorEventStore.
func (p *reflectorStreamPages) Add(obj interface{}) error { return p.put(obj) }

// Update implements reflectorEventStore.
func (p *reflectorStreamPages) Update(obj interface{}) error { return p.put(obj) }

// Delete implements reflectorEventStore.
func (p *reflectorStreamPages) Delete(obj interface{}) error {
	if p.failed != nil {
		return p.failed
	}
	if err := p.start(); err != nil {
		return err
	}
	key, err := streamKey(obj)
	if err != nil {
		return err
	}
	if i, ok := p.index[key]; ok {
		p.items[i] = nil
		delete(p.index, key)
	}
	// The key may also have been handed over with an earlier page.
	p.forget = append(p.forget, key)
	return nil
}

// flush hands the gathered page to the store.
func (p *reflectorStreamPages) flush() error {
	if p.failed != nil {
		return p.failed
	}
	if err := p.start(); err != nil {
		return err
	}
	page := p.items[:0]
	for _, obj := range p.items {
		if obj != nil {
			page = append(page, obj)
		}
	}
	if len(page) == 0 && len(p.forget) == 0 {
		return nil
	}
	err := p.pw.replacePage(p.ctx, page, p.forget)
	clear(p.items)
	p.items = p.items[:0]
	clear(p.index)
	p.forget = nil
	if err != nil {
		p.failed = &reflectorPageSyncError{err: err}
		return p.failed
	}
	p.handed += len(page)
	return nil
}

// newStreamListStore returns the store a streaming list's session fills and
// the function that completes the list at the resource version of its end
// bookmark (returning the number of objects): the accumulator and a Replace
// of its list, or, for a pagewise store, pages handed over as they fill.
func (r *Reflector) newStreamListStore(ctx context.Context, transform TransformFunc) (reflectorEventStore, func(rv string) (int, error)) {
	if pw := r.pagewiseStore(); pw != nil {
		pages := newReflectorStreamPages(ctx, pw)
		return pages, pages.finish
	}
	acc := newReflectorListAccumulator(transform)
	return acc, func(rv string) (int, error) {
		items := acc.list()
		return len(items), r.store.Replace(items, rv)
	}
}

// finish hands the last page over and completes the list at rv.
func (p *reflectorStreamPages) finish(rv string) (int, error) {
	if err := p.flush(); err != nil {
		return p.handed, err
	}
	if err := p.pw.replaceEnd(rv); err != nil {
		return p.handed, err
	}
	return p.handed, nil
}
