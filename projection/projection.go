// Package projection keeps only the fields a controller reads of the objects
// an informer caches, dropping the rest while the server's response is read,
// before any object is built from it.
//
// A Projection is a set of field paths in the objects' JSON names
// ("metadata.labels", "spec.nodeName", "status.conditions"). An informer
// given one (informers.WithProjection, or InformerOptions.Projection for an
// informer built on its own) asks the server for its objects as usual, then
// filters every LIST body and every WATCH event on the wire: on protobuf the
// unneeded fields are skipped by field number, on JSON the unneeded members
// are skipped while the document is tokenized. The full object is never
// decoded, so neither the heap held by the cache nor the peak during an
// initial list pays for the fields left out.
//
// # Projected objects must never be written back
//
// Handlers and listers receive objects holding only the projected fields
// (and the identity fields every projection keeps, see New). Such an object
// is incomplete: sending it to the server with Update, or as the body of a
// Patch, would erase every field the projection left out. Each projected
// object therefore carries the annotation MarkerAnnotation, whose value is
// the projection's Fingerprint, and Guard wraps a client's transport so that
// any write whose body sets the marker (decoded by its content type, see
// Guard) is refused before it leaves the process. Controllers that write
// objects they read from a projected informer must re-read them from the
// server (or build a patch of only the fields they change) and should run
// their clients through Guard. A marker an unguarded write saved on the
// server is removed by a merge patch setting it to null, or a JSON Patch
// removing /metadata/annotations/kinformer.io~1projection; Guard lets both
// through.
//
// A transform (informers.WithTransform, SharedIndexInformer.SetTransform) sees
// the projected objects and must keep the marker: a projected informer
// refuses every object its transform returns without it (CheckMarked): the
// object is not cached, the refusal is counted in the informer's status
// (cache.InformerStatus.TransformRefused) and reported as the transform's
// error (a watch event is logged and skipped; a list fails and is retried).
//
// # Server-side apply
//
// Never build an apply configuration from a projected object. client-go's
// Extract… functions return the fields the manager owns that are present in
// the object given: from a projected object, only the owned fields the
// projection kept. Applying that (even after removing the marker, which
// Guard then cannot see) removes every field the manager owned and did not
// re-apply. Extract from an object read from the server, or build the apply
// configuration from the controller's own desired state.
//
// Not in client-go: this package is a kinformer extension.
package projection

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// MarkerAnnotation is the annotation every projected object carries; its
// value is the Fingerprint of the projection the object was read with.
// Guard refuses writes whose body carries it.
const MarkerAnnotation = "kinformer.io/projection"

// InitialEventsEndAnnotation is the annotation the API server sets on the
// bookmark that ends a streaming list's initial events. Every projection
// keeps it, so that a streaming list still sees its end.
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// identityPaths are the fields every projection keeps: what names an object
// and the resourceVersion an informer needs to resume its watch.
var identityPaths = []string{
	"apiVersion",
	"kind",
	"metadata.name",
	"metadata.namespace",
	"metadata.resourceVersion",
	"metadata.uid",
}

// Projection is an immutable set of field paths to keep. The zero value and
// nil are not valid projections; build one with New. A Projection is safe
// for concurrent use.
type Projection struct {
	paths       []string // normalized: sorted, no duplicates, none under another
	fingerprint string
	root        *node
	// marker and markerJSON are the annotations of every object that
	// keeps no annotation but the marker, for typed objects and for
	// unstructured ones: built by New, never modified (see ShareMarker).
	marker     map[string]string
	markerJSON map[string]any
}

// node is one level of a projection's tree: the members of an object (or
// the keys of a map) to keep. A node with all set keeps its whole value; a
// node without it keeps only the members named in children, and drops every
// other member. Where the value at a node is a map (labels, annotations),
// children name map keys.
type node struct {
	all      bool
	children map[string]*node
}

// New returns the projection keeping paths, plus the identity fields every
// projection keeps: apiVersion, kind, metadata.name, metadata.namespace,
// metadata.uid and metadata.resourceVersion (and, on a watch's bookmarks, the
// annotation InitialEventsEndAnnotation).
//
// A path is a dot-separated list of JSON member names, e.g. "spec.nodeName";
// it keeps the whole value found there, whatever its type (an object, a
// list, a map, a scalar). Where a path's step reaches a list, the rest of the
// path applies to each element: "spec.containers.name" keeps only each
// container's name. Where it reaches a map, the next step names a map key:
// "metadata.labels.app" keeps only the label "app" (keys containing a dot
// cannot be named). A path under another path adds nothing. Paths must be
// non-empty and have no empty step; New returns an error naming the first
// path that does not.
//
// Whether the paths exist in a type is checked when an informer (or
// Transport) uses the projection for that type.
func New(paths ...string) (*Projection, error) {
	all := make([]string, 0, len(paths)+len(identityPaths))
	for _, p := range paths {
		if p == "" {
			return nil, fmt.Errorf("projection: empty field path")
		}
		for step := range strings.SplitSeq(p, ".") {
			if step == "" {
				return nil, fmt.Errorf("projection: field path %q has an empty step", p)
			}
			if strings.TrimSpace(step) != step {
				return nil, fmt.Errorf("projection: field path %q has a step with leading or trailing space", p)
			}
		}
		all = append(all, p)
	}
	all = append(all, identityPaths...)
	slices.Sort(all)
	all = slices.Compact(all)
	// Drop paths under another path: in sorted order a path's descendants
	// follow it, though not necessarily directly ("a.b", "a.b-c", "a.b.c").
	kept := all[:0:0]
	for _, p := range all {
		covered := false
		for _, k := range kept {
			if strings.HasPrefix(p, k+".") {
				covered = true
				break
			}
		}
		if !covered {
			kept = append(kept, p)
		}
	}

	root := &node{}
	for _, p := range kept {
		n := root
		for step := range strings.SplitSeq(p, ".") {
			if n.children == nil {
				n.children = map[string]*node{}
			}
			c := n.children[step]
			if c == nil {
				c = &node{}
				n.children[step] = c
			}
			n = c
		}
		n.all = true
	}
	// The streaming list's end marker survives any projection of the
	// annotations; when the annotations are kept whole it is kept anyway.
	if meta := root.children["metadata"]; meta.all {
		// The whole metadata is kept.
	} else if ann := meta.children["annotations"]; ann == nil {
		meta.children["annotations"] = &node{children: map[string]*node{InitialEventsEndAnnotation: {all: true}}}
	} else if !ann.all {
		if ann.children[InitialEventsEndAnnotation] == nil {
			ann.children[InitialEventsEndAnnotation] = &node{all: true}
		}
	}

	sum := sha256.Sum256([]byte(strings.Join(kept, "\n")))
	fingerprint := hex.EncodeToString(sum[:8])
	return &Projection{
		paths:       kept,
		fingerprint: fingerprint,
		root:        root,
		marker:      map[string]string{MarkerAnnotation: fingerprint},
		markerJSON:  map[string]any{MarkerAnnotation: fingerprint},
	}, nil
}

// MustNew is New that panics on an invalid path; for package-level
// variables built from constant paths.
func MustNew(paths ...string) *Projection {
	p, err := New(paths...)
	if err != nil {
		panic(err)
	}
	return p
}

// Paths returns the paths the projection keeps, identity fields included,
// sorted, without duplicates and without paths under another one.
func (p *Projection) Paths() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.paths)
}

// Fingerprint identifies the projection: two projections keeping the same
// paths have the same fingerprint, any other two differ (it is a truncated
// SHA-256 of the normalized paths, 16 hexadecimal digits). It is the value of
// MarkerAnnotation on the objects read with p, and what snapshots record.
func (p *Projection) Fingerprint() string {
	if p == nil {
		return ""
	}
	return p.fingerprint
}

// String returns the projection's paths separated by commas.
func (p *Projection) String() string {
	if p == nil {
		return "<nil>"
	}
	return strings.Join(p.paths, ",")
}

// Marked reports whether obj carries MarkerAnnotation, and the fingerprint of
// the projection it was read with. obj is anything with GetAnnotations (typed
// objects, *unstructured.Unstructured, *metav1.PartialObjectMetadata); for
// anything else, and for nil, it returns false.
func Marked(obj any) (fingerprint string, ok bool) {
	a, is := obj.(interface{ GetAnnotations() map[string]string })
	if !is || isNilPointer(obj) {
		return "", false
	}
	fingerprint, ok = a.GetAnnotations()[MarkerAnnotation]
	return fingerprint, ok
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// ErrUnmarkedObject is the error (wrapped, with the object's type and key)
// of an object that should come from a projected informer but does not
// carry its projection's MarkerAnnotation, such as one a transform
// stripped of its annotations: Guard could not recognise it, and writing it
// back would erase the fields the projection dropped.
var ErrUnmarkedObject = errors.New("projection: object without the projection's marker annotation")

// CheckMarked returns nil when obj carries MarkerAnnotation with p's
// fingerprint, and otherwise an error wrapping ErrUnmarkedObject that names
// obj's type and namespace/name (never its content). The informers given p
// (informers.WithProjection, dynamicinformer.WithProjection) run it on what
// their transform returns (cache.SharedIndexInformerOptions.TransformCheck), and refuse, count and
// report the objects it fails. It is safe for concurrent use.
func (p *Projection) CheckMarked(obj any) error {
	if p == nil {
		return errors.New("projection: CheckMarked of a nil Projection")
	}
	fp, ok := Marked(obj)
	if ok && fp == p.fingerprint {
		return nil
	}
	what := fmt.Sprintf("%T", obj)
	if m, is := obj.(interface {
		GetNamespace() string
		GetName() string
	}); is && !isNilPointer(obj) {
		what += " " + m.GetNamespace() + "/" + m.GetName()
		if m.GetNamespace() == "" {
			what = fmt.Sprintf("%T %s", obj, m.GetName())
		}
	}
	if ok {
		return fmt.Errorf("%w: %s carries the marker of projection %s, not %s", ErrUnmarkedObject, what, fp, p.fingerprint)
	}
	return fmt.Errorf("%w: %s (a transform removed it?)", ErrUnmarkedObject, what)
}
