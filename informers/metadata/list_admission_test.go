package metadatainformer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
	"github.com/kinformer/kinformer/listadmission"
)

// TestMetadataFactoryWithListAdmission: the factory's informers list through
// the list admission given, with their priority.
func TestMetadataFactoryWithListAdmission(t *testing.T) {
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	client, _ := newFakeClient(t, podMetadata("a", "p1", nil))
	factory := metadatainformer.NewSharedInformerFactoryWithOptions(client, 0,
		metadatainformer.WithListAdmission(a), metadatainformer.WithListAdmissionPriority(2, podsGVR))
	factory.ForResource(podsGVR)
	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[podsGVR])
	s := a.Stats()
	assert.Equal(t, uint64(1), s.Admitted)
	assert.Equal(t, 0, s.InFlight)
}
