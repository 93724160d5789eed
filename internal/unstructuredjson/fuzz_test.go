package unstructuredjson

import (
	"testing"
)

// FuzzDecode decodes arbitrary bytes with UnstructuredJSONScheme and with
// Scheme, which must agree (see requireSameDecoding). The committed corpus
// (testdata/fuzz/FuzzDecode) holds the edge cases of decode_test.go and
// random objects of every eighth built-in type (TestFuzzCorpusIsCommitted).
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameDecoding(t, data)
	})
}
