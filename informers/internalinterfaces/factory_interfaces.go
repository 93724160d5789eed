// Package internalinterfaces holds the small interfaces through which the
// per-group informer packages reach the SharedInformerFactory without
// importing it (which would be an import cycle). It mirrors
// k8s.io/client-go/informers/internalinterfaces v0.37.2 and is public so that
// informers generated for custom resources can plug into kinformer's factory.
package internalinterfaces

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
)

// NewInformerFunc builds a new, not yet started informer from a clientset and
// a default resync period. The factory calls it at most once per object type.
type NewInformerFunc func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer

// SharedInformerFactory is the part of the informer factory the generated
// informer packages need. Implementations must be safe for concurrent use.
type SharedInformerFactory interface {
	// Start runs every informer requested so far that is not yet running,
	// until stopCh is closed. It does not block.
	Start(stopCh <-chan struct{})
	// InformerFor returns the factory's informer for the type of obj,
	// calling newFunc to build it when the factory has none yet. The same
	// type always yields the same informer.
	InformerFor(obj runtime.Object, newFunc NewInformerFunc) cache.SharedIndexInformer
	// InformerName returns the metrics identity the factory's informers
	// register under, or nil when metrics are off.
	InformerName() *cache.InformerName
}

// TweakListOptionsFunc edits the options of every LIST and WATCH request an
// informer sends, typically to set a label or field selector. It is called
// with a fresh copy of the options for each request.
type TweakListOptionsFunc func(*metav1.ListOptions)

// InformerOptions configures an informer built by one of the
// New<Type>InformerWithOptions constructors. The zero value is valid: no
// resync, no indexers, no metrics, unfiltered requests.
type InformerOptions struct {
	// ResyncPeriod is how often handlers get a resync of the whole cache;
	// zero disables resync.
	ResyncPeriod time.Duration

	// Indexers are the informer's initial indices.
	Indexers cache.Indexers

	// InformerName names the informer for metrics; nil publishes none.
	// Create it once at startup with cache.NewInformerName.
	InformerName *cache.InformerName

	// TweakListOptions, if not nil, edits every LIST and WATCH request.
	TweakListOptions TweakListOptionsFunc
}
