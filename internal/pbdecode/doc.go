// Package pbdecode decodes the protobuf form of the Kubernetes API types
// faster and with fewer allocations than their generated Unmarshal methods,
// giving identical values.
//
// # Contract
//
//   - Identical objects: for every type Supports accepts, Unmarshal(b, into)
//     leaves into deeply equal (reflect.DeepEqual: nil and empty slices and
//     maps told apart, unexported fields such as a Quantity's cached string
//     included) to what into's own Unmarshal leaves after a Reset, for every
//     input; it fails exactly when that fails, with io.ErrUnexpectedEOF
//     exactly when that returns it. The decoders follow the generated code's
//     quirks on malformed input too (field numbers truncated to int32, map
//     entry fields read up to the end of the enclosing message, packed
//     elements read past the packed field). decode_test.go and the
//     FuzzUnmarshal corpus check this for every supported type.
//   - Nothing shared: a decoded object's strings and byte slices are cut
//     from storage of its own, allocated once per object (per item, for the
//     items of a list) and sized by a first pass over its message; no buffer
//     outlives or is reused across decodings, and no object aliases the
//     input. Byte slices have a capacity equal to their length.
//   - Fewer allocations: one per object for all its strings and bytes,
//     slices and maps sized once from a count of their elements, no copy of
//     the input.
//
// NewNegotiatedSerializer (serializer.go) puts the decoders behind a REST
// client: it wraps client-go's negotiated serializer so that protobuf
// answers are decoded by Unmarshal where the type is supported, with the
// objects, group-version-kinds and errors apimachinery's serializer gives,
// reading the runtime.Unknown envelope and each watch frame's
// metav1.WatchEvent without copying the object's bytes. StartVerification
// (verify.go) makes it, for tests, decode every such object with
// apimachinery too and record any difference; the integration tests
// against a real API server run with it on.
//
// The decoders (zz_generated.*.go) are written by
// `go run ./internal/gen/pbdecode` from the generated.proto files of
// k8s.io/api and k8s.io/apimachinery and the Go types of the client-go
// clientset's scheme; `make gen-verify` checks they are up to date. The
// types whose protobuf methods apimachinery writes by hand (metav1.Time,
// metav1.MicroTime, resource.Quantity) are decoded in special.go as their
// own methods decode them.
package pbdecode

//go:generate go run ../gen/pbdecode
