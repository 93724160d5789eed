package metadatainformer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/cache"
	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
)

// TestWithShardKeepsTheShardOfObjectMetadata: the metadata factory's
// informers keep exactly the namespaces of the shard (by namespace), and the
// fake client, which ignores the selector as a server without the
// ShardedListAndWatch gate does, is reported as ignoring it.
func TestWithShardKeepsTheShardOfObjectMetadata(t *testing.T) {
	shard := cache.Shard{Key: cache.ShardByNamespace, Ranges: []cache.ShardRange{{Start: "0x8000000000000000", End: cache.ShardTop}}}
	var objs []k8sruntime.Object
	var want []string
	for i := range 40 {
		obj := podMetadata(fmt.Sprintf("team-%d-prod", i%8), fmt.Sprintf("p%d", i), nil)
		objs = append(objs, obj)
		if in, err := shard.Contains(obj); err == nil && in {
			want = append(want, obj.Namespace+"/"+obj.Name)
		}
	}
	require.NotEmpty(t, want)
	require.Less(t, len(want), len(objs))
	client, _ := newFakeClient(t, objs...)
	keys, errs := runAndShutdown(t, metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, nil, metadatainformer.WithShard(shard)))
	assert.ElementsMatch(t, want, keys)
	require.Len(t, errs, 1, "%v", errs)
	var ignored *cache.ShardSelectorIgnoredError
	assert.ErrorAs(t, errs[0], &ignored)
}
