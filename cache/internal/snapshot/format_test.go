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
