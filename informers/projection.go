package informers

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/build"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
	"github.com/kinformer/kinformer/projection"
)

// WithProjection makes the factory's informer for the type of example (such
// as &corev1.Pod{}) keep only the fields p names of its objects (see package
// projection): its LIST and WATCH answers are filtered on the wire, in
// protobuf by field number and in JSON while the document is scanned, so
// the full objects are never decoded and neither the cache nor the peak of
// an initial list pays for the fields left out. Handlers and listers
// receive objects holding only those fields and the identity fields; each
// carries projection.MarkerAnnotation.
//
// Such objects must never be written back: an Update (or an apply) of one
// would erase every field the projection left out. Build the clients that
// write with projection.GuardConfig, which refuses any write of a marked
// object.
//
// A path that the type does not have makes the informer's every LIST fail
// with an error naming it (logged and retried like any list error). With a
// client that is not a *kubernetes.Clientset (client-go's fake clientsets)
// the objects are projected after they are decoded, so tests see what
// production sees. The informer's snapshot files (WithSnapshotDir) record
// the projection, and a file written under another projection is not
// loaded. It composes with WithTransform and WithMemoryLean, which see the
// projected objects; an object a transform returns without the marker is
// refused (not cached, counted in cache.InformerStatus.TransformRefused and
// reported as a transform error; see projection.Projection.CheckMarked).
// Never build a server-side apply configuration from a projected object
// (see package projection). A nil example or p is ignored; a later call for the
// same type replaces an earlier one. kinformer extension, not in client-go.
func WithProjection(example runtime.Object, p *projection.Projection) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		if example != nil {
			f.options.Project(reflect.TypeOf(example), factoryengine.Projection{Projection: p})
		}
		return f
	}
}

// TypeOptionsFor returns what the factory's options say of the informer of
// obj's type: its projection (WithProjection), its decoder
// (WithAPIMachineryDecoding) and, with WithMembership, the membership and
// the factory's settings for its range informers. The generated informers
// call it, through build.TypeOptionsOf, when they build the factory's
// informer for their type.
func (f *sharedInformerFactory) TypeOptionsFor(obj runtime.Object) build.TypeOptions {
	if obj == nil {
		return build.TypeOptions{}
	}
	t := reflect.TypeOf(obj)
	o := build.TypeOptions{
		Projection:           f.options.Projections[t].Projection,
		APIMachineryDecoding: f.options.APIMachineryDecoding[t],
		Membership:           f.options.Membership,
	}
	if o.Membership.Member != nil {
		// A sharded informer gets the factory's settings when it is built.
		o.Settings = f.options.InformerOptions(cache.SharedIndexInformerOptions{}, t, nil)
	}
	return o
}
