package build

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
	"github.com/kinformer/kinformer/informers/internalinterfaces"
	"github.com/kinformer/kinformer/projection"
)

// TypeOptions is what a factory's options say of the informer of one type.
// The zero value is what an informer built outside a factory gets: whole
// objects, decoded by kinformer's generated protobuf decoders.
type TypeOptions struct {
	// Projection, when not nil, makes the informer keep only its fields
	// (informers.WithProjection).
	Projection *projection.Projection
	// APIMachineryDecoding makes the informer decode protobuf answers with
	// apimachinery's decoder instead of the generated decoders
	// (informers.WithAPIMachineryDecoding).
	APIMachineryDecoding bool
	// Membership, when its Member is not nil, makes the informer a
	// sharded informer over the ranges the member holds
	// (informers.WithMembership; see factoryengine.NewInformer).
	Membership factoryengine.Membership
	// Settings are the factory's kinformer settings for the informer
	// (factoryengine.Options.InformerOptions), given at construction to
	// a sharded informer, which cannot be configured once built; a plain
	// informer gets them from the factory after it is built, and leaves
	// this zero.
	Settings cache.SharedIndexInformerOptions
}

// typeOptionsFactory is implemented by kinformer's typed factory.
type typeOptionsFactory interface {
	TypeOptionsFor(obj runtime.Object) TypeOptions
}

// TypeOptionsOf returns what factory's options say of the informer of obj's
// type, or the zero TypeOptions for a factory that does not say (another
// implementation of SharedInformerFactory). The generated informers call it
// when they build the factory's informer of their type.
func TypeOptionsOf(factory internalinterfaces.SharedInformerFactory, obj runtime.Object) TypeOptions {
	if f, ok := factory.(typeOptionsFactory); ok {
		return f.TypeOptionsFor(obj)
	}
	return TypeOptions{}
}
