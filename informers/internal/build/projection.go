package build

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers/internalinterfaces"
	"github.com/kinformer/kinformer/projection"
)

// ProjectionOf returns the projection factory keeps for objects of obj's
// type (informers.WithProjection), or nil when it keeps none or is a
// factory that does not say. The generated informers call it when they
// build the factory's informer of their type.
func ProjectionOf(factory internalinterfaces.SharedInformerFactory, obj runtime.Object) *projection.Projection {
	if f, ok := factory.(interface {
		ProjectionFor(obj runtime.Object) *projection.Projection
	}); ok {
		return f.ProjectionFor(obj)
	}
	return nil
}

// projectedRESTClient returns a REST client reaching what rc reaches, with
// rc's rate limiter, whose HTTP client sends requests through rc's and
// projects the answers with p (projection.Transport for example's type).
func projectedRESTClient(rc *rest.RESTClient, p *projection.Projection, example runtime.Object) (*rest.RESTClient, error) {
	next := http.DefaultTransport
	var httpClient http.Client
	if rc.Client != nil {
		httpClient = *rc.Client
		if rc.Client.Transport != nil {
			next = rc.Client.Transport
		}
	}
	rt, err := p.Transport(next, example)
	if err != nil {
		return nil, err
	}
	httpClient.Transport = rt
	// A request without resource or namespace has rc's base URL, its
	// path ending with rc's versioned API path: that path is the new
	// client's versioned API path, under the server's root.
	u := rc.Get().URL()
	versionedAPIPath := u.Path
	u.Path, u.RawQuery = "/", ""
	gv := rc.APIVersion()
	return rest.NewRESTClient(u, versionedAPIPath, rest.ClientContentConfig{
		AcceptContentTypes: AcceptProtobuf,
		ContentType:        runtime.ContentTypeJSON,
		GroupVersion:       gv,
		Negotiator:         runtime.NewClientNegotiator(rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion(), gv),
	}, rc.GetRateLimiter(), &httpClient)
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
