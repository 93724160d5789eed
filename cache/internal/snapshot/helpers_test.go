package snapshot

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testKey returns a key of the right size whose bytes start at b.
func testKey(b byte) []byte {
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = b + byte(i)
	}
	return key
}

// testPod returns the pod ns/name at resourceVersion rv.
func testPod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// podCodec returns the codec of pods.
func podCodec(t testing.TB) Codec {
	t.Helper()
	codec, err := CodecFor(&v1.Pod{})
	require.NoError(t, err)
	return codec
}

// podFile is a plain snapshot file of pods at path, unrestricted and of
// full objects, encrypted with key unless nil.
func podFile(t testing.TB, path string, key []byte) File {
	t.Helper()
	return File{Path: path, Identity: Identity(&v1.Pod{}, ""), Codec: podCodec(t), Key: key}
}
