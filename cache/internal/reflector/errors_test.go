package reflector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestWatchErrorEventOfAnotherObjectCarriesItsTypeNotItsContent: an ERROR
// watch event whose object is not a Status (a misbehaving server or proxy)
// becomes an error that names the object's type without its content, which
// could be a Secret's data and goes to logs and the watch error handler.
// (client-go's error prints the whole object.) A Status still becomes a
// *StatusError.
func TestWatchErrorEventOfAnotherObjectCarriesItsTypeNotItsContent(t *testing.T) {
	secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}, Data: map[string][]byte{"password": []byte("hunter2")}}
	err := watchErrorEventToError(secret)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
	assert.Contains(t, err.Error(), "*v1.Secret")
	u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]interface{}{"token": "hunter2"}}}
	err = watchErrorEventToError(u)
	assert.NotContains(t, err.Error(), "hunter2")

	err = watchErrorEventToError(&apierrors.NewResourceExpired("too old").ErrStatus)
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)
}
