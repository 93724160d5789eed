package build

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/projection"
)

// projectedTransport returns the wrapper of a REST client's transport that
// projects the answers with p (projection.Transport for example's type).
func projectedTransport(p *projection.Projection, example runtime.Object) func(http.RoundTripper) (http.RoundTripper, error) {
	return func(next http.RoundTripper) (http.RoundTripper, error) {
		return p.Transport(next, example)
	}
}

// FailingList and FailingWatch are the list and watch of an informer whose
// projection cannot be used for its type: every request fails with err,
// which the reflector reports and retries.
func FailingList(err error) ListFunc {
	return func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, err }
}

func FailingWatch(err error) WatchFunc {
	return func(context.Context, metav1.ListOptions) (watch.Interface, error) { return nil, err }
}

// ProjectingList returns list with every item of its lists projected by p
// (projection.Projection.Apply): the list and watch of clients that do not
// go through HTTP, such as client-go's fake clientsets.
func ProjectingList(list ListFunc, p *projection.Projection) ListFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		obj, err := list(ctx, opts)
		if err != nil || obj == nil {
			return obj, err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		projected := make([]runtime.Object, len(items))
		for i, item := range items {
			if projected[i], err = p.Apply(item); err != nil {
				return nil, err
			}
		}
		// The list is the informer's alone (the reflector only reads it):
		// its items are replaced in place rather than copied first.
		if err := meta.SetList(obj, projected); err != nil {
			return nil, err
		}
		return obj, nil
	}
}

// ProjectingWatch returns watchFn with the object of every ADDED, MODIFIED,
// DELETED and BOOKMARK event projected by p.
func ProjectingWatch(watchFn WatchFunc, p *projection.Projection) WatchFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		w, err := watchFn(ctx, opts)
		if err != nil || w == nil {
			return w, err
		}
		return mapWatch(w, func(e watch.Event) watch.Event {
			if e.Type == watch.Error || e.Object == nil {
				return e
			}
			obj, err := p.Apply(e.Object)
			if err != nil {
				return watch.Event{Type: watch.Error, Object: &metav1.Status{
					Status:  metav1.StatusFailure,
					Message: fmt.Sprintf("projecting a %s event's object: %v", e.Type, err),
					Reason:  metav1.StatusReasonInternalError,
					Code:    http.StatusInternalServerError,
				}}
			}
			e.Object = obj
			return e
		}), nil
	}
}

// SharingMarker returns list and watchFn with every object they return
// given the annotations map p shares among its objects when they hold the
// marker alone (projection.Projection.ShareMarker): the items of every
// list, and the object of every ADDED, MODIFIED and DELETED event. The
// informer must give its transform, if any, objects of their own again
// (projection.Projection.UnshareMarker as its
// cache.SharedIndexInformerOptions.TransformPrepare): a transform may
// modify the object it is given.
func SharingMarker(list ListFunc, watchFn WatchFunc, p *projection.Projection) (ListFunc, WatchFunc) {
	sharingList := func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		obj, err := list(ctx, opts)
		if err != nil || obj == nil {
			return obj, err
		}
		// Items that are not objects of the list's type cannot be
		// projected objects: EachListItem fails only on a list it cannot
		// walk, which the reflector then reports as its own.
		_ = meta.EachListItem(obj, func(item runtime.Object) error {
			p.ShareMarker(item)
			return nil
		})
		return obj, nil
	}
	sharingWatch := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		w, err := watchFn(ctx, opts)
		if err != nil || w == nil {
			return w, err
		}
		return mapWatch(w, func(e watch.Event) watch.Event {
			switch e.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				p.ShareMarker(e.Object)
			}
			return e
		}), nil
	}
	return sharingList, sharingWatch
}

// ProjectedOptions returns options with what an informer whose objects are
// read with p needs beyond its list and watch: its snapshots are tied to
// p's fingerprint, the objects its transform leaves without p's marker are
// refused (projection.Projection.CheckMarked), and its transform gets
// objects with annotations of their own (projection.Projection.UnshareMarker,
// see SharingMarker). The informer is built with them, so that a sharded
// informer's range informers get them too.
func ProjectedOptions(options cache.SharedIndexInformerOptions, p *projection.Projection) cache.SharedIndexInformerOptions {
	options.SnapshotProjection = p.Fingerprint()
	options.TransformCheck = p.CheckMarked
	options.TransformPrepare = func(obj interface{}) interface{} { return p.UnshareMarker(obj) }
	return options
}

// mapWatch returns a watch delivering fn of every event of w, in order.
// Unlike watch.Filter, whose goroutine stays blocked on an event nobody
// reads after Stop, its goroutine ends when Stop is called or w's result
// channel closes, and Stop stops w.
func mapWatch(w watch.Interface, fn func(watch.Event) watch.Event) watch.Interface {
	m := &mappedWatch{in: w, out: make(chan watch.Event), stopped: make(chan struct{})}
	go m.loop(fn)
	return m
}

// mappedWatch is mapWatch's watch.
type mappedWatch struct {
	in       watch.Interface
	out      chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
}

func (m *mappedWatch) loop(fn func(watch.Event) watch.Event) {
	defer close(m.out)
	for {
		select {
		case e, ok := <-m.in.ResultChan():
			if !ok {
				return
			}
			select {
			case m.out <- fn(e):
			case <-m.stopped:
				return
			}
		case <-m.stopped:
			return
		}
	}
}

// Stop stops the underlying watch and ends the delivery; safe to call more
// than once, and concurrently.
func (m *mappedWatch) Stop() {
	m.stopOnce.Do(func() {
		close(m.stopped)
		m.in.Stop()
	})
}

// ResultChan is the channel of the mapped events, closed once the
// delivery ends.
func (m *mappedWatch) ResultChan() <-chan watch.Event { return m.out }
