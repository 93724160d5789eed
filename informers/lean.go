package informers

// WithMemoryLean makes every informer of the factory keep lean objects: before
// an object is stored, its managedFields are dropped, and the strings objects
// repeat most (label and annotation keys and values, the namespace, owner
// references' API version, kind, name and UID) are replaced by one shared copy
// held in an intern table of the factory. Objects handed to handlers and
// returned by listers are otherwise unchanged; they must be treated as
// read-only, as always.
//
// The intern table is bounded, not reference-counted: it holds at most two
// generations of 32,768 strings (and 2 MiB of string data each), strings
// longer than 256 bytes are not interned, and when the current generation is
// full the oldest is dropped. Churn through many distinct values therefore
// cannot grow it without limit; a dropped string stays valid in the objects
// that use it and is simply no longer shared with objects decoded later.
//
// When WithTransform is also given, the user's transform runs first and the
// memory-lean step runs on the object it returns (whatever the order of the
// options), so the user's transform still sees managedFields and its result
// is made lean too. Objects without standard object metadata (e.g. a
// transform's own types) pass through unchanged.
//
// Not in client-go.
func WithMemoryLean() SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.MemoryLean = true
		return f
	}
}
