// Package unstructuredjson decodes JSON into unstructured objects
// (unstructured.Unstructured and UnstructuredList: map[string]any trees) as
// apimachinery's unstructured.UnstructuredJSONScheme does, in about a
// quarter of its CPU time and allocations.
//
// # Contract
//
//   - Identical objects: Scheme.Decode gives, for every input and target
//     (nil, *Unstructured, *UnstructuredList), a value deeply equal to
//     UnstructuredJSONScheme.Decode's and the same group version kind, and
//     fails exactly when it fails (a missing kind with a runtime missing-kind
//     error, whose text does not quote the object). Numbers follow
//     apimachinery's rule by literal: no '.' and strconv.ParseInt succeeds
//     gives an int64, anything else a float64 (so 1e3 is a float64), a
//     literal out of float64's range fails; strings are unescaped as
//     encoding/json does, invalid UTF-8 and unpaired surrogates becoming
//     U+FFFD; the grammar, the nesting bound (10,000) and duplicate keys
//     (the last wins) are encoding/json's. A list's items without kind and
//     apiVersion get the list's, as apimachinery sets them. decode_test.go
//     and FuzzDecode check this.
//   - Shared keys: object keys are shared across objects and decodings
//     through a process-wide table bounded to 16,384 keys of at most 128
//     bytes; it only ever holds keys, each allocated on its own. Other
//     strings are cut from storage of their own object (each item of a list
//     has its own), allocated in a few growing chunks; nothing aliases the
//     input or is reused across decodings.
//   - Sized once: arrays and objects are built at their final size.
//
// Other targets, and encoding, go to UnstructuredJSONScheme.
package unstructuredjson
