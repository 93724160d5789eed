// Package factorytest holds the test steps the factories keyed by
// GroupVersionResource share: the dynamic and metadata factories and the
// engine under them (informers/internal/gvrfactory). Only their tests import
// it.
package factorytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/sharding"
)

// Factory is what the dynamic and metadata factories have in common.
type Factory interface {
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	Shutdown()
}

// RunAndShutdown runs gvr's informer of factory until it has synced (failing
// the test if that takes longer than timeout), shuts the factory down (which
// writes the informer's snapshot, if it has one) and returns the keys the
// informer had cached and the errors its watch error handler received.
func RunAndShutdown(t *testing.T, factory Factory, gvr schema.GroupVersionResource, timeout time.Duration) ([]string, []error) {
	t.Helper()
	informer := factory.ForResource(gvr)
	var mu sync.Mutex
	var errs []error
	require.NoError(t, informer.Informer().SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	factory.Start(ctx.Done())
	require.Equal(t, map[schema.GroupVersionResource]bool{gvr: true}, factory.WaitForCacheSync(ctx.Done()))
	keys := informer.Informer().GetStore().ListKeys()
	cancel()
	factory.Shutdown()
	mu.Lock()
	defer mu.Unlock()
	return keys, errs
}

// MemberConfig returns the configuration of a member identity of group
// "g" in namespace "default" over leases, with 4 ranges and timings short
// enough for tests (a lease of 1 s, renewed every 50 ms).
func MemberConfig(leases coordinationv1client.LeasesGetter, identity string) sharding.Config {
	return sharding.Config{
		Client: leases, Namespace: "default", Group: "g", Identity: identity, Ranges: 4,
		LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 50 * time.Millisecond,
	}
}

// RunMember returns a member built from cfg, running until the test ends.
func RunMember(t *testing.T, cfg sharding.Config) *sharding.Member {
	t.Helper()
	m, err := sharding.NewMember(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return m
}
