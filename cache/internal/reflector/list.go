package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// listPages makes one list with options (pageSize is the limit when options
// has none; 0 means unpaged) into a new list of the store (see
// Lists), following continue tokens when the server pages the answer
// and handing each page's objects over as it arrives. When a continue token
// has expired, the list starts over, as a new list of the store, with one
// unpaged request at the original resourceVersion. It returns the list,
// still to be ended at its resourceVersion, the number of objects handed
// over, that resourceVersion and whether the answer came in more than one
// page. With a shard (Settings.Shard), every request carries its selector, the
// objects outside it are not handed over, and a page whose answer does not
// echo the selector, or holds such an object, is told to shardIgnored (nil:
// not told). Errors of the store are *SinkError. Should the answer to the restarted
// request still come in pages (a ListWatch that sets a limit itself), they are
// followed too. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (e *Engine) listPages(ctx context.Context, source ListSource, options metav1.ListOptions, pageSize int64, shardIgnored func(*ShardIgnoredError)) (ListSink, int, string, bool, time.Time, error) {
	if options.Limit == 0 {
		options.Limit = pageSize
	}
	e.shardRequest(&options)
	wantRV, wantMatch := options.ResourceVersion, options.ResourceVersionMatch
	sink := e.lists.BeginList(source)
	count := 0
	var listRV string
	var answered time.Time
	paged, restarted := false, false
	var page []interface{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, count, "", paged, answered, err
		}
		obj, err := e.lw.ListWithContext(ctx, options)
		at := e.clock.Now()
		if err != nil {
			if options.Continue == "" || !apierrors.IsResourceExpired(err) || restarted {
				return nil, count, "", paged, answered, err
			}
			// The continue token expired: list again from the start in
			// one request; what was handed over is dropped.
			restarted = true
			count, listRV = 0, ""
			options.Limit, options.Continue = 0, ""
			options.ResourceVersion, options.ResourceVersionMatch = wantRV, wantMatch
			sink = e.lists.BeginList(source)
			continue
		}
		var next, pageRV string
		ignored := e.listShardIgnored(obj)
		page, pageRV, next, err = e.appendListPage(ctx, page[:0], obj)
		obj = nil // the page's array is garbage once its items are copied out
		if err != nil {
			return nil, count, "", paged, answered, err
		}
		if options.Continue == "" {
			listRV, answered = pageRV, at
		}
		for i, item := range page {
			// The store keeps what it needs of item; a duplicate of what
			// it holds already is garbage from here on.
			page[i] = nil
			if !e.inShard(item) {
				if ignored == nil {
					ignored = &ShardIgnoredError{Selector: e.settings.Shard.Selector(), Request: ShardSeenByList}
				}
				continue
			}
			if err := sink.Put(item); err != nil {
				clear(page)
				return nil, count, "", paged, answered, &SinkError{Err: err}
			}
			count++
		}
		if ignored != nil && shardIgnored != nil {
			shardIgnored(ignored)
		}
		if err := sink.PageEnd(ctx); err != nil {
			return nil, count, "", paged, answered, &SinkError{Err: err}
		}
		if next == "" {
			return sink, count, listRV, paged, answered, nil
		}
		options.Continue = next
		options.ResourceVersion, options.ResourceVersionMatch = "", ""
		paged = true
	}
}

// appendListPage appends the items of the list object obj to items and
// returns them with obj's resourceVersion and continue token.
func (e *Engine) appendListPage(ctx context.Context, items []interface{}, obj kruntime.Object) ([]interface{}, string, string, error) {
	if isNilObject(obj) {
		return items, "", "", errors.New("the list call returned no object")
	}
	listMeta, err := meta.ListAccessor(obj)
	if err != nil {
		return items, "", "", fmt.Errorf("unable to understand list result of type %T: %w", obj, err)
	}
	if unsupported, gvk := isUnsupportedTableListObject(obj); unsupported {
		return items, "", "", fmt.Errorf("unsupported list gvk: %v, type: %v", gvk, e.typeDescription)
	}
	objs, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return items, "", "", fmt.Errorf("unable to understand list result of type %T: %w", obj, err)
	}
	if items == nil {
		items = make([]interface{}, 0, len(objs))
	}
	for i, o := range objs {
		if isNilObject(o) {
			utilruntime.HandleErrorWithContext(ctx, nil, "List result holds an empty item; skipping it", "reflector", e.name, "index", i)
			continue
		}
		items = append(items, o)
	}
	return items, listMeta.GetResourceVersion(), listMeta.GetContinue(), nil
}

// reflectorListOptions are the options of a list at rv in pages of pageSize (0:
// unpaged). A paged list at a resourceVersion other than "" and "0" asks for data not
// older than rv: without a match, the server serves a paged list at exactly rv, an old
// snapshot, so that after a watch from rv ended with 410 (the server's watch cache no
// longer reaches back to rv while etcd still serves a list at rv) the Reflector would
// store that old snapshot, watch from rv again, get 410 again, and stay stale until etcd
// compacts rv (minutes). Differs from client-go v0.37.2; see COMPATIBILITY.md.
func reflectorListOptions(rv string, pageSize int64) metav1.ListOptions {
	opts := metav1.ListOptions{ResourceVersion: rv}
	if pageSize > 0 && rv != "" && rv != "0" {
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	}
	return opts
}
