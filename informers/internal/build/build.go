// Package build holds the one constructor behind every generated typed
// informer, so that the generated code per resource stays a thin,
// type-specific shell.
package build

import (
	"context"
	"errors"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
	"github.com/kinformer/kinformer/informers/internalinterfaces"
)

// ListFunc lists one resource through the clientset.
type ListFunc func(context.Context, metav1.ListOptions) (runtime.Object, error)

// WatchFunc watches one resource through the clientset.
type WatchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)

// Object is what an informer's item type must be: a pointer to a Kubernetes
// API type.
type Object interface {
	cache.Object
	runtime.Object
}

// errNoClient is returned by LIST and WATCH of an informer built without a
// clientset.
var errNoClient = errors.New("informers: informer was built with a nil client")

// Informer returns a new, not yet started informer for the resource gvr whose
// objects look like example, listing and watching through list and watch.
// options.TweakListOptions, when set, edits every request's options;
// options.InformerName, when set, registers gvr under that name for metrics.
// A nil client does not panic: every LIST and WATCH then fails with an error
// the reflector reports and retries.
//
// When wire is not nil and client is a *kubernetes.Clientset whose group REST
// client wire reaches is a *rest.RESTClient, LIST and WATCH go through a REST
// client derived from that one instead of list and watch, asking for
// protobuf (AcceptProtobuf) whatever content type the clientset was
// configured with, and decoding the media type the server answers in:
// protobuf by the generated decoders of internal/pbdecode, which give the
// objects apimachinery's decoder gives, or, when o.APIMachineryDecoding, by
// apimachinery's. Otherwise (fake clientsets, wrappers of a clientset, a
// nil REST client) list and watch are used as given, and decode as the
// clientset does.
//
// A non-nil o.Projection makes the informer keep only its fields: through
// the REST client, with a transport that projects the answers on the wire
// (projection.Transport); through list and watch, by projecting each
// decoded object (projection.Projection.Apply). A projection naming a field
// example's type does not have makes every LIST and WATCH fail with that
// error. The objects share the projection's marker map where they hold only
// the marker (SharingMarker). The informer's snapshots are tied to the
// projection's fingerprint, the objects its transform leaves without the
// projection's marker are refused (projection.Projection.CheckMarked,
// cache.SharedIndexInformerOptions.TransformCheck), and its transform gets
// objects of their own (ProjectedOptions).
//
// A non-nil o.Membership.Member makes it a *sharding.Informer over the
// ranges the member holds, each range informer built with o.Settings (see
// factoryengine.NewInformer); the zero Membership, a plain informer.
func Informer[T Object](client kubernetes.Interface, gvr schema.GroupVersionResource, example T, options internalinterfaces.InformerOptions, o TypeOptions, list ListFunc, watchFn WatchFunc, wire *Wire) cache.TypedSharedIndexInformer[T] {
	var c any
	if client != nil {
		c = client
	}
	proj := o.Projection
	switch rc := wire.restClientFor(c); {
	case rc != nil:
		var wrap func(http.RoundTripper) (http.RoundTripper, error)
		var listKind *schema.GroupVersionKind
		switch {
		case proj != nil:
			wrap = projectedTransport(proj, example)
		case !o.APIMachineryDecoding:
			// kinformer's decoding: LISTs decoded as they arrive.
			if listKind = listKindOf(wire.NewList); listKind != nil {
				wrap = func(next http.RoundTripper) (http.RoundTripper, error) {
					return &streamingListTransport{next: next}, nil
				}
			}
		}
		warnings := warningHandlerOf(rc)
		if wrap != nil || !o.APIMachineryDecoding {
			// Otherwise rc itself decodes with apimachinery's decoder.
			derived, err := derivedRESTClient(rc, wrap, clientSerializer(o.APIMachineryDecoding))
			if err != nil {
				list, watchFn = FailingList(err), FailingWatch(err)
				break
			}
			rc = derived
		}
		wc := &wireClient{rc: rc, warnings: warnings, namespace: wire.Namespace, resource: wire.Resource, newList: wire.NewList, listKind: listKind}
		list, watchFn = wc.list, wc.watch
		if proj != nil {
			list, watchFn = SharingMarker(list, watchFn, proj)
		}
	case proj != nil:
		if err := proj.Check(example); err != nil {
			// The projection names fields the type does not have.
			list, watchFn = FailingList(err), FailingWatch(err)
			break
		}
		list, watchFn = SharingMarker(ProjectingList(list, proj), ProjectingWatch(watchFn, proj), proj)
	}
	settings := factoryengine.Overlay(cache.SharedIndexInformerOptions{
		ResyncPeriod: options.ResyncPeriod,
		Indexers:     options.Indexers,
		Identifier:   options.InformerName.WithResource(gvr),
	}, o.Settings)
	if proj != nil {
		settings = ProjectedOptions(settings, proj)
	}
	informer := factoryengine.NewInformer(ListerWatcher(c, options.TweakListOptions, list, watchFn), example, settings, o.Membership)
	return cache.NewTypedSharedIndexInformer[T](informer)
}

// ListerWatcher returns the ListerWatcher an informer uses: list and watch,
// with and without context, each request's options first edited by tweak
// (when not nil), wrapped by cache.ToListWatcherWithWatchListSemantics for
// client. client must be the clientset list and watch use (typed, dynamic or
// metadata), or nil, in which case every request fails with an error instead
// of reaching list or watch.
func ListerWatcher(client any, tweak func(*metav1.ListOptions), list ListFunc, watchFn WatchFunc) cache.ListerWatcher {
	prepare := func(opts *metav1.ListOptions) error {
		if client == nil {
			return errNoClient
		}
		if tweak != nil {
			tweak(opts)
		}
		return nil
	}
	listCtx := func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		if err := prepare(&opts); err != nil {
			return nil, err
		}
		return list(ctx, opts)
	}
	watchCtx := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		if err := prepare(&opts); err != nil {
			return nil, err
		}
		return watchFn(ctx, opts)
	}
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListFunc: func(opts metav1.ListOptions) (runtime.Object, error) {
			return listCtx(context.Background(), opts)
		},
		WatchFunc: func(opts metav1.ListOptions) (watch.Interface, error) {
			return watchCtx(context.Background(), opts)
		},
		ListWithContextFunc:  listCtx,
		WatchFuncWithContext: watchCtx,
	}, client)
}

// ownSelectionFactory is implemented by kinformer's typed factory: its
// InformerForOwnSelection is InformerFor for a newFunc that selects exactly
// what the factory's namespace and tweak say.
type ownSelectionFactory interface {
	InformerForOwnSelection(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer
}

// InformerFor returns factory's informer for obj's type, built by newFunc, a
// generated informer's own constructor (which selects what the factory's
// namespace and tweak say). With kinformer's factory the informer may then
// get a snapshot file; another implementation of SharedInformerFactory gets
// a plain InformerFor call.
func InformerFor(factory internalinterfaces.SharedInformerFactory, obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	if f, ok := factory.(ownSelectionFactory); ok {
		return f.InformerForOwnSelection(obj, newFunc)
	}
	return factory.InformerFor(obj, newFunc)
}
