package build

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

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
		return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			if e.Type == watch.Error || e.Object == nil {
				return e, true
			}
			obj, err := p.Apply(e.Object)
			if err != nil {
				return watch.Event{Type: watch.Error, Object: &metav1.Status{
					Status:  metav1.StatusFailure,
					Message: fmt.Sprintf("projecting a %s event's object: %v", e.Type, err),
					Reason:  metav1.StatusReasonInternalError,
					Code:    http.StatusInternalServerError,
				}}, true
			}
			e.Object = obj
			return e, true
		}), nil
	}
}
