package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestCodecsRoundTrip(t *testing.T) {
	pod := testPod("p", "7")
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.Containers = []v1.Container{{Name: "c", Image: "img"}}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetNamespace("ns")
	u.SetName("w")
	u.SetResourceVersion("7")
	pom := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", ResourceVersion: "7"}}
	for _, tc := range []struct {
		example runtime.Object
		obj     interface{}
		codec   string
	}{
		{&v1.Pod{}, pod, "protobuf"},
		{&unstructured.Unstructured{}, u, "json"},
		{&metav1.PartialObjectMetadata{}, pom, "protobuf"},
	} {
		t.Run(tc.codec+" "+Identity(tc.example, ""), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.snap")
			codec, err := CodecFor(tc.example)
			require.NoError(t, err)
			assert.Equal(t, tc.codec, codec.Name())
			file := File{Path: path, Identity: Identity(tc.example, "desc"), Codec: codec}
			require.NoError(t, file.Write([]interface{}{tc.obj}, "7"))
			objects, rv, err := file.Read()
			require.NoError(t, err)
			assert.Equal(t, "7", rv)
			require.Len(t, objects, 1)
			assert.Equal(t, tc.obj, objects[0])
			entries, err := os.ReadDir(filepath.Dir(path))
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file left behind")
		})
	}
}

func TestNotWrittenIntoADirectoryOthersMayWriteTo(t *testing.T) {
	if !ModesApply {
		t.Skip("permission bits do not apply on this platform")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	path := filepath.Join(dir, "pods.snap")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	err := podFile(t, path, nil).Write([]interface{}{pod}, "1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "others may write to it")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestReadRefusals: Read says why it returns no objects: no file (wrapping
// os.ErrNotExist), a plain file read with a key (ErrNotEncrypted), an
// encrypted file read without one, and a file of another identity, tie or
// codec.
func TestReadRefusals(t *testing.T) {
	dir := t.TempDir()
	plain := podFile(t, filepath.Join(dir, "plain.snap"), nil)
	require.NoError(t, plain.Write([]interface{}{testPod("a", "1")}, "1"))
	encrypted := podFile(t, filepath.Join(dir, "encrypted.snap"), testKey(1))
	require.NoError(t, encrypted.Write([]interface{}{testPod("a", "1")}, "1"))

	_, _, err := podFile(t, filepath.Join(dir, "missing.snap"), nil).Read()
	assert.ErrorIs(t, err, os.ErrNotExist)

	withKey := plain
	withKey.Key = testKey(1)
	_, _, err = withKey.Read()
	assert.ErrorIs(t, err, ErrNotEncrypted)

	withoutKey := encrypted
	withoutKey.Key = nil
	_, _, err = withoutKey.Read()
	assert.ErrorContains(t, err, "encrypted and this informer has no key")

	for _, tc := range []struct {
		name   string
		change func(f *File)
		want   string
	}{
		{"identity", func(f *File) { f.Identity = Identity(&v1.ConfigMap{}, "") }, `this informer caches "k8s.io/api/core/v1.ConfigMap"`},
		{"scope", func(f *File) { f.Tie.Scope = ScopeFor("ns", "", "") }, `this informer selects namespace="ns"`},
		{"projection", func(f *File) { f.Tie.Projection = "aaaa" }, "this informer keeps objects of projection aaaa"},
		{"codec", func(f *File) {
			codec, err := CodecFor(&unstructured.Unstructured{})
			require.NoError(t, err)
			f.Codec = codec
		}, `objects encoded as "protobuf", this informer uses "json"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := plain
			tc.change(&other)
			objects, _, err := other.Read()
			assert.ErrorContains(t, err, tc.want)
			assert.Nil(t, objects)
		})
	}
}

// TestWriteNamesAnObjectItCannotEncode: an object of another type than the
// codec's fails the write, named by Describe (by its Go type without one),
// and leaves neither the file nor a temporary file behind.
func TestWriteNamesAnObjectItCannotEncode(t *testing.T) {
	dir := t.TempDir()
	file := podFile(t, filepath.Join(dir, "pods.snap"), nil)
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	err := file.Write([]interface{}{testPod("a", "1"), cm}, "1")
	assert.ErrorContains(t, err, "encoding *v1.ConfigMap: cached object of type *v1.ConfigMap is not *v1.Pod")
	file.Describe = func(obj interface{}) string { return "the config map" }
	err = file.Write([]interface{}{cm}, "1")
	assert.ErrorContains(t, err, "encoding the config map: ")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
