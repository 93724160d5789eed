package cache

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// The list protocol.
//
// However a state reaches a Reflector's store (a LIST, paged or not; a
// streaming list, which is a watch sending the initial state before a
// bookmark; a snapshot loaded at start), it arrives as one sequence:
//
//	beginList(source)   the store returns a listSink for the list
//	put / remove        the listed objects, in list order; a streaming list
//	                    may also put a newer state of an object it put
//	                    before, or remove one
//	pageEnd             a page of the list is complete
//	end(rv)             the list is complete, and current at rv
//
// A list that fails, or starts over (an expired continue token), is simply
// dropped: its sink is never ended. The structure follows kube-rs's watcher
// (its Init, InitApply and InitDone events and the store writer consuming
// them); unlike kube-rs's writer, no sink here holds a second copy of what
// did not change.
//
// The store decides when the listed state becomes visible:
//
//   - the queues informers build (RealFIFO with atomic events) take the
//     whole list and queue it as one ReplacedAll at its end: listers see the
//     old state until the processing loop swaps in the new one in one step,
//     as client-go v0.37 does;
//   - with SharedIndexInformerOptions.RelistPageByPage, those queues apply
//     the pages of a relist as they arrive and queue the deletions of what
//     the list no longer has after its last page (pagewise_relist.go);
//   - a DeltaFIFO, a RealFIFO without atomic events and any other store
//     take the whole list and hand it to their Replace logic at its end.

// listSource says where a list comes from.
type listSource struct {
	// relist: the store held a state before (an earlier list or a
	// snapshot). Only relists may be applied page by page.
	relist bool
	// streamed: a streaming list. A later put may carry a newer state of an
	// object put before, and remove may come.
	streamed bool
	// loaded: the objects come from a snapshot of the informer's cache, so
	// they went through the transform already.
	loaded bool
	// fresh: the list must not keep a cached object in place of a listed
	// one in the same state (see the Reflector core's State, internal/reflector).
	fresh bool
}

// listSink takes one list. Its methods are called from one goroutine (the
// Reflector's), in the order of the protocol above.
type listSink interface {
	// put hands over the next listed object. The sink owns obj from then on.
	// An error ends the list (the store could not take it).
	put(obj interface{}) error
	// remove says that a streaming list deleted obj after listing it.
	remove(obj interface{}) error
	// pageEnd says that a page is complete. It may block until the store
	// is ready for the next page; it returns ctx's error when ctx ends
	// first, and ErrFIFOClosed when the queue is closed.
	pageEnd(ctx context.Context) error
	// end completes the list, current at resourceVersion, and returns the
	// number of objects it holds. It may block as pageEnd does.
	end(ctx context.Context, resourceVersion string) (int, error)
}

// listTaker is implemented by the stores that take lists through the
// protocol themselves (RealFIFO, DeltaFIFO). For any other store, the
// Reflector gathers the list and hands it to Replace at its end.
type listTaker interface {
	// beginList starts a list from source.
	beginList(source listSource) listSink
	// relistsPageByPage reports whether relists are applied page by page;
	// the Reflector then pages relists even where the server could answer
	// them in one piece.
	relistsPageByPage() bool
}

// gatherSink holds a list until its end and then hands it over whole. It
// keeps the objects in list order; for a streamed list it also indexes them
// by key, so that a later state of an object replaces the earlier one in
// place and a removal drops it (as the temporary store client-go fills
// during a streaming list does, but keeping the arrival order).
type gatherSink struct {
	// keyOf computes the keys; nil when the objects need none (then
	// streamed lists are not deduplicated either).
	keyOf func(obj interface{}) (string, error)
	// strictKeys: an object without key fails the list. Otherwise it is
	// kept, without key, for the store to reject and report.
	strictKeys bool
	// finishKeys: finish needs the keys (they are kept until the end).
	finishKeys bool
	// prepare returns what the list keeps for obj (key is "" when the
	// object has none): obj transformed, or an object the store already
	// holds in the same state.
	prepare func(key string, obj interface{}) (interface{}, error)
	// finish hands over the complete list; with finishKeys, keys[i] is
	// the key of objs[i] ("" when it has none), else keys is nil.
	finish func(objs []interface{}, keys []string, resourceVersion string) error

	streamed bool
	objs     []interface{}
	keys     []string
	index    map[string]int // streamed: key -> position in objs
	removed  int            // streamed: nil entries in objs
}

func (g *gatherSink) put(obj interface{}) error {
	key := ""
	if g.keyOf != nil {
		var err error
		if key, err = g.keyOf(obj); err != nil {
			if g.strictKeys {
				return err
			}
			key = ""
		}
	}
	obj, err := g.prepare(key, obj)
	if isRefusedObject(err) {
		// Dropped alone; a state of it listed before goes too.
		if i, ok := g.index[key]; ok && key != "" {
			g.objs[i] = nil
			delete(g.index, key)
			g.removed++
		}
		return nil
	}
	if err != nil {
		return err
	}
	if g.streamed && key != "" {
		if g.index == nil {
			g.index = make(map[string]int)
		}
		if i, ok := g.index[key]; ok {
			g.objs[i] = obj
			return nil
		}
		g.index[key] = len(g.objs)
	}
	g.objs = append(g.objs, obj)
	if g.finishKeys {
		g.keys = append(g.keys, key)
	}
	return nil
}

func (g *gatherSink) remove(obj interface{}) error {
	if g.keyOf == nil {
		return nil
	}
	key, err := g.keyOf(obj)
	if err != nil {
		return err
	}
	if i, ok := g.index[key]; ok {
		g.objs[i] = nil
		delete(g.index, key)
		g.removed++
	}
	return nil
}

func (g *gatherSink) pageEnd(context.Context) error { return nil }

func (g *gatherSink) end(_ context.Context, resourceVersion string) (int, error) {
	objs, keys := g.objs, g.keys
	g.objs, g.keys, g.index = nil, nil, nil
	if g.removed > 0 {
		kept := 0
		for i, obj := range objs {
			if obj == nil {
				continue
			}
			objs[kept] = obj
			if keys != nil {
				keys[kept] = keys[i]
			}
			kept++
		}
		clear(objs[kept:])
		objs = objs[:kept]
		if keys != nil {
			keys = keys[:kept]
		}
	}
	return len(objs), g.finish(objs, keys, resourceVersion)
}

// putAll puts every object of list. When list is the whole of an unstreamed
// list, the sink adopts it: it keeps list itself, its objects replaced in
// place by what prepare returns (as Replace's callers hand the list over).
func (g *gatherSink) putAll(list []interface{}) error {
	if g.streamed || len(g.objs) > 0 {
		for _, obj := range list {
			if err := g.put(obj); err != nil {
				return err
			}
		}
		return nil
	}
	var keys []string
	if g.finishKeys {
		keys = make([]string, len(list))
	}
	for i, obj := range list {
		key := ""
		if g.keyOf != nil {
			var err error
			if key, err = g.keyOf(obj); err != nil {
				if g.strictKeys {
					return err
				}
				key = ""
			}
		}
		if keys != nil {
			keys[i] = key
		}
		out, err := g.prepare(key, obj)
		if isRefusedObject(err) {
			// Dropped alone, when the list ends.
			list[i] = nil
			g.removed++
			continue
		}
		if err != nil {
			return err
		}
		list[i] = out
	}
	g.objs, g.keys = list, keys
	return nil
}

// replaceList hands list to sink as a whole list current at
// resourceVersion: the Replace of the queues.
func replaceList(sink listSink, list []interface{}, resourceVersion string) error {
	if g, ok := sink.(*gatherSink); ok {
		if err := g.putAll(list); err != nil {
			return err
		}
	} else {
		for _, obj := range list {
			if err := sink.put(obj); err != nil {
				return err
			}
		}
	}
	_, err := sink.end(context.Background(), resourceVersion)
	return err
}

// newStoreReplaceSink returns the sink of a store that does not take lists
// through the protocol: the list is gathered and handed to store.Replace
// at its end. A streamed list into a TransformingStore is held transformed
// by the store's transformer, whose Replace then transforms it again, as in
// client-go.
func newStoreReplaceSink(store ReflectorStore, source listSource) listSink {
	g := &gatherSink{
		streamed: source.streamed,
		prepare:  func(_ string, obj interface{}) (interface{}, error) { return obj, nil },
		finish: func(objs []interface{}, _ []string, rv string) error {
			return store.Replace(objs, rv)
		},
	}
	if source.streamed {
		g.keyOf = streamKey
		g.strictKeys = true
		if ts, ok := store.(TransformingStore); ok && ts.Transformer() != nil && !source.loaded {
			transform := ts.Transformer()
			g.prepare = func(_ string, obj interface{}) (interface{}, error) { return transform(obj) }
		}
	}
	return g
}

// streamKey computes the namespace/name key of a streamed object for a
// store that does not key objects itself.
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

// streamedList is the reflectorEventStore of a streaming list: it hands the
// streamed objects to the list's sink as they arrive, and ends a page every
// pageSize objects, so that a store applying relists page
// by page applies a stream as it arrives. Once the sink failed, every later
// call returns that error, and so does finish.
type streamedList struct {
	ctx  context.Context
	sink listSink
	// pageSize is the number of objects after which a page ends.
	pageSize int
	inPage   int
	failed   error
}

func (s *streamedList) put(obj interface{}) error {
	if s.failed != nil {
		return s.failed
	}
	if err := s.sink.put(obj); err != nil {
		s.failed = err
		return err
	}
	s.inPage++
	if s.inPage < s.pageSize {
		return nil
	}
	s.inPage = 0
	s.failed = s.sink.pageEnd(s.ctx)
	return s.failed
}

// Add implements reflectorEventStore.
func (s *streamedList) Add(obj interface{}) error { return s.put(obj) }

// Update implements reflectorEventStore.
func (s *streamedList) Update(obj interface{}) error { return s.put(obj) }

// Delete implements reflectorEventStore.
func (s *streamedList) Delete(obj interface{}) error {
	if s.failed != nil {
		return s.failed
	}
	return s.sink.remove(obj)
}

// finish completes the list at rv.
func (s *streamedList) finish(rv string) (int, error) {
	if s.failed != nil {
		return 0, s.failed
	}
	return s.sink.end(s.ctx, rv)
}

// pageSink applies a relist page by page (see pagewise_relist.go): the
// objects of a page are handed to the queue at the page's end, and what the
// list no longer has is deleted at its end. It remembers the keys listed.
type pageSink struct {
	logger klog.Logger
	keyOf  func(obj interface{}) (string, error)
	// prepare returns what the queue gets for obj (transformed).
	prepare func(key string, obj interface{}) (interface{}, error)
	// hand queues a page (entries whose object is nil were removed) and
	// waits until the queue is ready for the next one.
	hand func(ctx context.Context, page []listedObject) error
	// finish queues the deletions of the keys not in listed, and ends the
	// list at resourceVersion.
	finish func(ctx context.Context, listed map[string]struct{}, resourceVersion string) error

	streamed bool
	page     []listedObject
	index    map[string]int // streamed: key -> position in page
	listed   map[string]struct{}
}

// listedObject is an object of a list with its key.
type listedObject struct {
	key string
	obj interface{}
}

func (p *pageSink) put(obj interface{}) error {
	key, err := p.keyOf(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(p.logger, err, "Listed object has no key; skipping it", "objectType", fmt.Sprintf("%T", obj))
		return nil
	}
	if obj, err = p.prepare(key, obj); err != nil {
		if isRefusedObject(err) {
			// Dropped alone: not listed, so a cached state of it goes.
			return nil
		}
		return err
	}
	if p.listed == nil {
		p.listed = make(map[string]struct{})
	}
	p.listed[key] = struct{}{}
	if p.streamed {
		if p.index == nil {
			p.index = make(map[string]int)
		}
		if i, ok := p.index[key]; ok {
			p.page[i].obj = obj
			return nil
		}
		p.index[key] = len(p.page)
	}
	p.page = append(p.page, listedObject{key: key, obj: obj})
	return nil
}

func (p *pageSink) remove(obj interface{}) error {
	key, err := p.keyOf(obj)
	if err != nil {
		return err
	}
	delete(p.listed, key)
	if i, ok := p.index[key]; ok {
		p.page[i].obj = nil
		delete(p.index, key)
	}
	return nil
}

func (p *pageSink) pageEnd(ctx context.Context) error {
	if len(p.page) == 0 {
		return nil
	}
	err := p.hand(ctx, p.page)
	clear(p.page)
	p.page = p.page[:0]
	clear(p.index)
	return err
}

func (p *pageSink) end(ctx context.Context, resourceVersion string) (int, error) {
	if err := p.pageEnd(ctx); err != nil {
		return len(p.listed), err
	}
	listed := p.listed
	p.listed = nil
	if listed == nil {
		listed = map[string]struct{}{}
	}
	return len(listed), p.finish(ctx, listed, resourceVersion)
}
