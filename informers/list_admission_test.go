package informers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/listadmission"
)

// TestWithListAdmission: the informers of a factory given a list admission
// list through it, one at a time with a limit of one.
func TestWithListAdmission(t *testing.T) {
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	client := newFakeClientset(newPod("ns", "p", nil), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}})
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithListAdmission(a))
	factory.Core().V1().Pods().Informer()
	factory.Core().V1().ConfigMaps().Informer()
	factory.Core().V1().Secrets().Informer()
	startAndSync(t, factory)
	s := a.Stats()
	assert.Equal(t, uint64(3), s.Admitted)
	assert.Equal(t, 1, s.PeakInFlight)
	assert.Equal(t, 0, s.InFlight)
}

// TestWithListAdmissionOff: WithListAdmission(nil) lists without admission,
// and the informers sync as client-go's do.
func TestWithListAdmissionOff(t *testing.T) {
	client := newFakeClientset(newPod("ns", "p", nil))
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithListAdmission(nil))
	pods := factory.Core().V1().Pods()
	pods.Informer()
	startAndSync(t, factory)
	got, err := pods.Lister().List(labels.Everything())
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

// TestWithListAdmissionPriority: of two informers waiting for the only slot,
// the one of the type given priority lists first.
func TestWithListAdmissionPriority(t *testing.T) {
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	client := newFakeClientset()
	release := make(chan struct{})
	listed := make(chan string, 8)
	client.PrependReactor("list", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		listed <- action.GetResource().Resource
		if action.GetResource().Resource == "pods" {
			<-release
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithListAdmission(a), informers.WithListAdmissionPriority(5, &corev1.Secret{}))
	factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	require.Equal(t, "pods", receive(t, listed))
	factory.Core().V1().ConfigMaps().Informer()
	factory.Core().V1().Secrets().Informer()
	factory.StartWithContext(ctx)
	require.Eventually(t, func() bool { return a.Stats().Waiting == 2 }, waitTimeout, time.Millisecond)
	close(release)
	assert.Equal(t, []string{"secrets", "configmaps"}, []string{receive(t, listed), receive(t, listed)})
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
}

func receive(t *testing.T, ch chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(waitTimeout):
		t.Fatal("nothing received")
		return ""
	}
}
