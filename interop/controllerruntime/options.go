package controllerruntime

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/interop/clientgo"
)

// Option chooses kinformer settings for the informers a function returned by
// NewInformerFunc builds. Each Option holds clientgo.Options and says which
// informers they apply to: all of them (WithInformerOptions), those of one Go
// type (ForType), or the unstructured and metadata-only informers of one
// GroupVersionKind (ForGroupVersionKind).
type Option func(*config)

// config is what the Options of one NewInformerFunc call chose. It is built
// once, by NewInformerFunc, and only read afterwards.
type config struct {
	// all apply to every informer.
	all []clientgo.Option
	// byType apply to the informers whose example object has the key's Go
	// type.
	byType map[reflect.Type][]clientgo.Option
	// byGVK apply to the unstructured and metadata-only informers whose
	// example object carries the key's GroupVersionKind.
	byGVK map[schema.GroupVersionKind][]clientgo.Option
}

// WithInformerOptions applies opts to every informer the hook builds. Options
// given by ForType and ForGroupVersionKind for an informer are applied after
// these, so they win where both set the same field.
func WithInformerOptions(opts ...clientgo.Option) Option {
	return func(c *config) { c.all = append(c.all, opts...) }
}

// ForType applies opts to the informers whose example object has the Go type
// of example: ForType(&corev1.Pod{}, ...) for the typed pod informer that
// controller-runtime builds for `&corev1.Pod{}`. Only the type of example
// counts, not its content, so ForType(&unstructured.Unstructured{}, ...)
// applies to every unstructured informer, whatever its kind, and
// ForType(&metav1.PartialObjectMetadata{}, ...) to every metadata-only
// informer; ForGroupVersionKind narrows those to one kind. A nil example
// matches no informer. The options are applied after WithInformerOptions'
// and before ForGroupVersionKind's.
func ForType(example runtime.Object, opts ...clientgo.Option) Option {
	t := reflect.TypeOf(example)
	return func(c *config) {
		if t == nil {
			return
		}
		if c.byType == nil {
			c.byType = map[reflect.Type][]clientgo.Option{}
		}
		c.byType[t] = append(c.byType[t], opts...)
	}
}

// ForGroupVersionKind applies opts to the unstructured
// (*unstructured.Unstructured, or any runtime.Unstructured) and metadata-only
// (*metav1.PartialObjectMetadata) informers of gvk. controller-runtime
// builds those with an example object that carries the GroupVersionKind the
// caller asked for, and that is what is matched. Typed informers are not
// matched by their kind, because controller-runtime's example object of a
// typed informer may or may not carry one depending on the call that
// created the informer: use ForType for them. The options are applied last,
// after WithInformerOptions' and ForType's.
func ForGroupVersionKind(gvk schema.GroupVersionKind, opts ...clientgo.Option) Option {
	return func(c *config) {
		if c.byGVK == nil {
			c.byGVK = map[schema.GroupVersionKind][]clientgo.Option{}
		}
		c.byGVK[gvk] = append(c.byGVK[gvk], opts...)
	}
}

// optionsFor returns the clientgo.Options of an informer whose example object
// is obj, in the order they apply: all informers', then its type's, then its
// kind's.
func (c *config) optionsFor(obj runtime.Object) []clientgo.Option {
	var out []clientgo.Option
	out = append(out, c.all...)
	if t := reflect.TypeOf(obj); t != nil {
		out = append(out, c.byType[t]...)
	}
	if gvk, ok := dynamicKind(obj); ok {
		out = append(out, c.byGVK[gvk]...)
	}
	return out
}

// dynamicKind returns the GroupVersionKind an unstructured or metadata-only
// example object carries, and whether obj is one of those.
func dynamicKind(obj runtime.Object) (schema.GroupVersionKind, bool) {
	if v := reflect.ValueOf(obj); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return schema.GroupVersionKind{}, false
	}
	switch obj.(type) {
	case runtime.Unstructured, *metav1.PartialObjectMetadata:
		return obj.GetObjectKind().GroupVersionKind(), true
	}
	return schema.GroupVersionKind{}, false
}
