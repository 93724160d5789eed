package dynamicinformer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/listadmission"
)

// TestDynamicFactoryWithListAdmission: a list admission shared by two
// factories admits the lists of both.
func TestDynamicFactoryWithListAdmission(t *testing.T) {
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	client, _ := newFakeClient(newObject(widgetsGVR, "Widget", "a", "w1", nil), newObject(podsGVR, "Pod", "a", "p1", nil))
	first := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0,
		dynamicinformer.WithListAdmission(a), dynamicinformer.WithListAdmissionPriority(3, podsGVR))
	second := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0, dynamicinformer.WithListAdmission(a))
	first.ForResource(widgetsGVR).Informer()
	first.ForResource(podsGVR).Informer()
	second.ForResource(widgetsGVR).Informer()
	stop := make(chan struct{})
	defer second.Shutdown()
	defer first.Shutdown()
	defer close(stop)
	first.Start(stop)
	second.Start(stop)
	require.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true, podsGVR: true}, first.WaitForCacheSync(stop))
	require.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true}, second.WaitForCacheSync(stop))
	s := a.Stats()
	assert.Equal(t, uint64(3), s.Admitted)
	assert.Equal(t, 1, s.PeakInFlight)
}
