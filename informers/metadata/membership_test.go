package metadatainformer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factorytest"
	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
	"github.com/kinformer/kinformer/sharding"
)

// TestWithMembershipBuildsShardedMetadataInformers: WithMembership makes the
// metadata factory's informers sharded informers over the member's ranges;
// a member alone in its group holds every range, so the informer keeps
// every object, listed by one range informer per range, each with its own
// shard selector (which the fake client ignores, and each reports).
func TestWithMembershipBuildsShardedMetadataInformers(t *testing.T) {
	var objs []k8sruntime.Object
	var want []string
	for i := range 40 {
		obj := podMetadata("ns", fmt.Sprintf("p%d", i), nil)
		obj.UID = types.UID(fmt.Sprintf("uid-%d", i))
		objs = append(objs, obj)
		want = append(want, "ns/"+obj.Name)
	}
	client, _ := newFakeClient(t, objs...)
	cfg := factorytest.MemberConfig(kubefake.NewClientset().CoordinationV1(), "a")
	m := factorytest.RunMember(t, cfg)
	factory := metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, metadatainformer.WithMembership(m, cache.ShardByUID))
	_, sharded := sharding.InformerOf(factory.ForResource(podsGVR).Informer())
	require.True(t, sharded)
	keys, errs := runAndShutdown(t, factory)
	assert.ElementsMatch(t, want, keys)
	require.Len(t, errs, cfg.Ranges, "one report per range informer: %v", errs)
	for _, err := range errs {
		var ignored *cache.ShardSelectorIgnoredError
		assert.ErrorAs(t, err, &ignored)
	}
}
