package informers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers/internal/factoryengine"
)

// TestSnapshotScopeLeavesOutTheServersUserinfo: a server address with
// credentials in it (https://user:password@host) is tied to the snapshot
// without them: the scope, which is written in clear into the snapshot
// header and repeated in snapshot errors, logs and status bodies, names the
// scheme, host and path alone.
func TestSnapshotScopeLeavesOutTheServersUserinfo(t *testing.T) {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://admin:s3cret@cluster.example:6443/prefix"})
	require.NoError(t, err)
	scope := factoryengine.SnapshotScope("ns", nil, clientServer(cs))
	assert.Equal(t, `namespace="ns" labelSelector="" fieldSelector="" server="https://cluster.example:6443/prefix"`, scope)
	assert.NotContains(t, scope, "s3cret")
	assert.NotContains(t, scope, "admin")
}
