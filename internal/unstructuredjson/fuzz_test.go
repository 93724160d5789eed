package unstructuredjson

import (
	"testing"
)

// FuzzDecode decodes arbitrary bytes with UnstructuredJSONScheme and with
// Scheme, and with the dynamic client's JSON serializer and Client's, which
// must agree (see requireSameDecoding, requireSameSerializerDecoding). The committed corpus
// (testdata/fuzz/FuzzDecode) holds the edge cases of decode_test.go and
// random objects of every eighth built-in type (TestFuzzCorpusIsCommitted).
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameDecoding(t, data)
		requireSameSerializerDecoding(t, dynamicJSON(t), data)
	})
}
