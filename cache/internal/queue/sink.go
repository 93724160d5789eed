package queue

import (
	"context"
	"fmt"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Source says where a list comes from.
type Source struct {
	// Relist: the store held a state before (an earlier list or a
	// snapshot). Only relists may be applied page by page.
	Relist bool
	// Streamed: a streaming list. A later Put may carry a newer state of an
	// object put before, and Remove may come.
	Streamed bool
	// Loaded: the objects come from a snapshot of the informer's cache, so
	// they went through the transform already.
	Loaded bool
	// Fresh: the list must not keep a cached object in place of a listed
	// one in the same state.
	Fresh bool
}

// Sink takes one list. Its methods are called from one goroutine, in the
// order of the list protocol (see the package documentation).
type Sink interface {
	// Put hands over the next listed object. The sink owns obj from then on.
	// An error ends the list (the store could not take it).
	Put(obj any) error
	// Remove says that a streaming list deleted obj after listing it.
	Remove(obj any) error
	// PageEnd says that a page is complete. It may block until the store
	// is ready for the next page; it returns ctx's error when ctx ends
	// first, and Ops.Closed when the queue is closed.
	PageEnd(ctx context.Context) error
	// End completes the list, current at resourceVersion, and returns the
	// number of objects it holds. It may block as PageEnd does.
	End(ctx context.Context, resourceVersion string) (int, error)
}

// Gather holds a list until its end and then hands it over whole. It keeps
// the objects in list order; for a streamed list it also indexes them by
// key, so that a later state of an object replaces the earlier one in place
// and a removal drops it (as the temporary store client-go fills during a
// streaming list does, but keeping the arrival order).
type Gather struct {
	// KeyOf computes the keys; nil when the objects need none (then
	// streamed lists are not deduplicated either).
	KeyOf func(obj any) (string, error)
	// StrictKeys: an object without key fails the list. Otherwise it is
	// kept, without key, for the store to reject and report.
	StrictKeys bool
	// FinishKeys: Finish needs the keys (they are kept until the end).
	FinishKeys bool
	// Prepare returns what the list keeps for obj (key is "" when the
	// object has none): obj transformed, or an object the store already
	// holds in the same state.
	Prepare func(key string, obj any) (any, error)
	// Refused reports whether an error of Prepare drops the object alone;
	// nil when none does.
	Refused func(err error) bool
	// Finish hands over the complete list; with FinishKeys, keys[i] is
	// the key of objs[i] ("" when it has none), else keys is nil.
	Finish func(objs []any, keys []string, resourceVersion string) error
	// Streamed: the list is a streaming list.
	Streamed bool

	objs    []any
	keys    []string
	index   map[string]int // streamed: key -> position in objs
	removed int            // streamed: nil entries in objs
}

func (g *Gather) refused(err error) bool {
	return err != nil && g.Refused != nil && g.Refused(err)
}

// key computes obj's key, "" when the sink needs none or, without
// StrictKeys, when obj has none.
func (g *Gather) key(obj any) (string, error) {
	if g.KeyOf == nil {
		return "", nil
	}
	key, err := g.KeyOf(obj)
	if err != nil {
		if g.StrictKeys {
			return "", err
		}
		return "", nil
	}
	return key, nil
}

// Put implements Sink.
func (g *Gather) Put(obj any) error {
	key, err := g.key(obj)
	if err != nil {
		return err
	}
	obj, err = g.Prepare(key, obj)
	if g.refused(err) {
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
	if g.Streamed && key != "" {
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
	if g.FinishKeys {
		g.keys = append(g.keys, key)
	}
	return nil
}

// Remove implements Sink.
func (g *Gather) Remove(obj any) error {
	if g.KeyOf == nil {
		return nil
	}
	key, err := g.KeyOf(obj)
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

// PageEnd implements Sink; it does nothing.
func (g *Gather) PageEnd(context.Context) error { return nil }

// End implements Sink: it hands the list to Finish.
func (g *Gather) End(_ context.Context, resourceVersion string) (int, error) {
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
	return len(objs), g.Finish(objs, keys, resourceVersion)
}

// putAll puts every object of list. When list is the whole of an unstreamed
// list, the sink adopts it: it keeps list itself, its objects replaced in
// place by what Prepare returns (as Replace's callers hand the list over).
func (g *Gather) putAll(list []any) error {
	if g.Streamed || len(g.objs) > 0 {
		for _, obj := range list {
			if err := g.Put(obj); err != nil {
				return err
			}
		}
		return nil
	}
	var keys []string
	if g.FinishKeys {
		keys = make([]string, len(list))
	}
	for i, obj := range list {
		key, err := g.key(obj)
		if err != nil {
			return err
		}
		if keys != nil {
			keys[i] = key
		}
		out, err := g.Prepare(key, obj)
		if g.refused(err) {
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

// ReplaceList hands list to sink as a whole list current at
// resourceVersion: the Replace of the queues.
func ReplaceList(sink Sink, list []any, resourceVersion string) error {
	if g, ok := sink.(*Gather); ok {
		if err := g.putAll(list); err != nil {
			return err
		}
	} else {
		for _, obj := range list {
			if err := sink.Put(obj); err != nil {
				return err
			}
		}
	}
	_, err := sink.End(context.Background(), resourceVersion)
	return err
}

// listedObject is an object of a list with its key.
type listedObject struct {
	key string
	obj any
}

// Pages applies a relist page by page: the objects of a page are handed to
// the queue at the page's end, and what the list no longer has is deleted at
// its end. It remembers the keys listed. BeginList returns one for a relist
// of a queue configured with Lists.PageByPage.
type Pages struct {
	logger klog.Logger
	keyOf  func(obj any) (string, error)
	// prepare returns what the queue gets for obj (transformed).
	prepare func(key string, obj any) (any, error)
	refused func(err error) bool
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

// Put implements Sink.
func (p *Pages) Put(obj any) error {
	key, err := p.keyOf(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(p.logger, err, "Listed object has no key; skipping it", "objectType", fmt.Sprintf("%T", obj))
		return nil
	}
	if obj, err = p.prepare(key, obj); err != nil {
		if p.refused(err) {
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

// Remove implements Sink.
func (p *Pages) Remove(obj any) error {
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

// PageEnd implements Sink.
func (p *Pages) PageEnd(ctx context.Context) error {
	if len(p.page) == 0 {
		return nil
	}
	err := p.hand(ctx, p.page)
	clear(p.page)
	p.page = p.page[:0]
	clear(p.index)
	return err
}

// End implements Sink.
func (p *Pages) End(ctx context.Context, resourceVersion string) (int, error) {
	if err := p.PageEnd(ctx); err != nil {
		return len(p.listed), err
	}
	listed := p.listed
	p.listed = nil
	if listed == nil {
		listed = map[string]struct{}{}
	}
	return len(listed), p.finish(ctx, listed, resourceVersion)
}
