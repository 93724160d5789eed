package dynamicinformer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/cache"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/informers/internal/factorytest"
	"github.com/kinformer/kinformer/sharding"
)

// TestWithMembershipBuildsShardedDynamicInformers: WithMembership makes the
// dynamic factory's informers sharded informers over the member's ranges;
// a member alone in its group holds every range, so the informer keeps
// every object, listed by one range informer per range, each with its own
// shard selector (which the fake client ignores, and each reports).
func TestWithMembershipBuildsShardedDynamicInformers(t *testing.T) {
	var objs []runtime.Object
	var want []string
	for i := range 40 {
		obj := newObject(widgetsGVR, "Widget", "a", fmt.Sprintf("w%d", i), nil)
		obj.SetUID(uuid.NewUUID())
		objs = append(objs, obj)
		want = append(want, "a/"+obj.GetName())
	}
	client, _ := newFakeClient(objs...)
	cfg := factorytest.MemberConfig(kubefake.NewClientset().CoordinationV1(), "a")
	m := factorytest.RunMember(t, cfg)
	factory := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0, dynamicinformer.WithMembership(m, cache.ShardByNamespace))
	_, sharded := sharding.InformerOf(factory.ForResource(widgetsGVR).Informer())
	require.True(t, sharded)
	keys, errs := factorytest.RunAndShutdown(t, factory, widgetsGVR, waitTimeout)
	assert.ElementsMatch(t, want, keys)
	require.Len(t, errs, cfg.Ranges, "one report per range informer: %v", errs)
	for _, err := range errs {
		var ignored *cache.ShardSelectorIgnoredError
		assert.ErrorAs(t, err, &ignored)
	}
}
