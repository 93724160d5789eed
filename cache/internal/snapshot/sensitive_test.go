package snapshot

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSensitiveTypes(t *testing.T) {
	secret := &unstructured.Unstructured{}
	secret.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	appSecret := &unstructured.Unstructured{}
	appSecret.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Secret"})
	cases := []struct {
		name    string
		example runtime.Object
		marked  bool
		want    bool
	}{
		{"typed Secret", &v1.Secret{}, false, true},
		{"unstructured core Secret", secret, false, true},
		{"a Secret kind of another group", appSecret, false, false},
		{"ConfigMap", &v1.ConfigMap{}, false, false},
		{"ConfigMap marked sensitive", &v1.ConfigMap{}, true, true},
		{"metadata, unmarked", &metav1.PartialObjectMetadata{}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Sensitive(tc.example, tc.marked))
		})
	}
	assert.True(t, SensitiveResource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}))
	assert.False(t, SensitiveResource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "secrets"}))
	assert.False(t, SensitiveResource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}))
}

// TestMetadataOfSecretsIsSensitive: an informer over the metadata of
// Secrets (a PartialObjectMetadata example of kind Secret, in any version
// of the core group) caches sensitive objects: their
// last-applied-configuration annotation may hold the data.
func TestMetadataOfSecretsIsSensitive(t *testing.T) {
	for _, apiVersion := range []string{"v1", "v2"} {
		example := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: "Secret"}}
		assert.True(t, Sensitive(example, false), apiVersion)
	}
	other := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Secret"}}
	assert.False(t, Sensitive(other, false))
	assert.True(t, SensitiveResource(schema.GroupVersionResource{Version: "v2", Resource: "secrets"}), "by group and resource, whatever the version")
}
