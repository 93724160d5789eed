package projection

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The marker's annotations map, shared.
//
// Most projections keep no annotation, so a projected object's annotations
// are the marker alone: one map per object, about 350 bytes of heap for a
// single entry. ShareMarker replaces such a map with one the Projection
// holds, the same for every object read with it. The marker stays where
// Guard and CheckMarked look for it, and every write built from a cached
// object still carries it:
//
//   - objects in an informer's cache must not be modified (client-go's
//     contract, which the cache mutation detector checks): a controller
//     copies one (DeepCopy, DeepCopyObject, runtime.DeepCopyJSON) before
//     it changes it, and every copy copies the map, marker included, so
//     Guard refuses the write as before;
//   - an object sent as it is from the cache is encoded with the shared
//     map, marker included;
//   - a transform may modify the object it is given, so the projected
//     informers give every object its own map again (UnshareMarker)
//     before a transform sees it, and share only objects that no
//     transform will see (the objects as decoded, see the informers'
//     SharedIndexInformerOptions.TransformPrepare).
//
// Modifying the shared map (against the contract above) would change the
// annotations of every object read with the projection at once; the cache
// mutation detector reports it as it reports any modified cached object.

// ShareMarker gives obj, an object read with p, the annotations map p
// shares among its objects when obj's annotations are exactly the marker
// (MarkerAnnotation with p's Fingerprint): typed objects and
// metav1.PartialObjectMetadata (anything with GetAnnotations and
// SetAnnotations), and *unstructured.Unstructured (whose map is set in
// place, a map[string]any). It reports whether it did; any other object,
// and one with other annotations or another fingerprint, is left as it is.
// Call it only on objects nothing modifies afterwards (see above): the
// projected informers call it on the objects they decode. It is safe for
// concurrent use on distinct objects.
func (p *Projection) ShareMarker(obj any) bool {
	if p == nil || obj == nil || isNilPointer(obj) {
		return false
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		md, ok := u.Object["metadata"].(map[string]any)
		if !ok {
			return false
		}
		a, ok := md["annotations"].(map[string]any)
		if !ok || len(a) != 1 || a[MarkerAnnotation] != p.fingerprint || sameMap(a, p.markerJSON) {
			return false
		}
		md["annotations"] = p.markerJSON
		return true
	}
	o, ok := obj.(annotated)
	if !ok {
		return false
	}
	a := o.GetAnnotations()
	if len(a) != 1 || sameMap(a, p.marker) {
		return false
	}
	if v, ok := a[MarkerAnnotation]; !ok || v != p.fingerprint {
		return false
	}
	o.SetAnnotations(p.marker)
	return true
}

// UnshareMarker gives obj a map of its own when its annotations are the
// map p shares (ShareMarker), holding the same marker, so that obj may be
// modified; it returns obj. Anything else is returned unchanged. The
// projected informers call it on every object before their transform
// (SetTransform) runs. It is safe for concurrent use on distinct objects.
func (p *Projection) UnshareMarker(obj any) any {
	if p == nil || obj == nil || isNilPointer(obj) {
		return obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if md, ok := u.Object["metadata"].(map[string]any); ok {
			if a, ok := md["annotations"].(map[string]any); ok && sameMap(a, p.markerJSON) {
				md["annotations"] = map[string]any{MarkerAnnotation: p.fingerprint}
			}
		}
		return obj
	}
	if o, ok := obj.(annotated); ok && sameMap(o.GetAnnotations(), p.marker) {
		o.SetAnnotations(map[string]string{MarkerAnnotation: p.fingerprint})
	}
	return obj
}

// SharesMarker reports whether obj's annotations are the map p shares
// (ShareMarker).
func (p *Projection) SharesMarker(obj any) bool {
	if p == nil || obj == nil || isNilPointer(obj) {
		return false
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		md, _ := u.Object["metadata"].(map[string]any)
		a, _ := md["annotations"].(map[string]any)
		return sameMap(a, p.markerJSON)
	}
	o, ok := obj.(annotated)
	return ok && sameMap(o.GetAnnotations(), p.marker)
}

// annotated is what ShareMarker needs of a typed object.
type annotated interface {
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
}

// sameMap reports whether a and b are the same map (not equal ones); nil
// maps are never the same.
func sameMap[M ~map[string]V, V any](a, b M) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
