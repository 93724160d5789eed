package factoryengine

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/sharding"
)

// NewInformer returns the informer of the objects lw lists and watches,
// of example's type, with options: cache.NewSharedIndexInformerWithOptions's
// when m.Member is nil, else a *sharding.Informer over the ranges m.Member
// holds, hashed by m.Key, whose range informers are built with options
// (snapshots off, and options.Identifier kept for its resource but
// unnamed: one metrics name would otherwise count each range's store as
// the whole informer's). It is the one place where a factory builds an
// informer over a ListerWatcher.
//
// A membership sharding.NewInformer refuses (an unsupported key, or a
// static shard in options as well) gives a plain informer whose every
// LIST and WATCH fails with an error wrapping cache.ErrInvalidShard, which
// WaitForCacheSync reports and cache.IsPermanentSyncError recognizes,
// instead of an informer over the whole resource.
func NewInformer(lw cache.ListerWatcher, example runtime.Object, options cache.SharedIndexInformerOptions, m Membership) cache.SharedIndexInformer {
	if m.Member == nil {
		return cache.NewSharedIndexInformerWithOptions(lw, example, options)
	}
	options.SnapshotFile, options.SnapshotScope = "", ""
	options.SnapshotCluster, options.SnapshotProtection = nil, cache.SnapshotProtection{}
	options.Identifier = (*cache.InformerName)(nil).WithResource(options.Identifier.GroupVersionResource())
	informer, err := sharding.NewInformer(lw, example, sharding.InformerOptions{Member: m.Member, Key: m.Key, Range: options})
	if err != nil {
		err = fmt.Errorf("%w: %w", cache.ErrInvalidShard, err)
		options.Shard = cache.Shard{}
		return cache.NewSharedIndexInformerWithOptions(failingListerWatcher(err), example, options)
	}
	return informer
}

// failingListerWatcher returns a ListerWatcher whose every LIST and WATCH
// fails with err.
func failingListerWatcher(err error) cache.ListerWatcher {
	return &cache.ListWatch{
		ListFunc:  func(metav1.ListOptions) (runtime.Object, error) { return nil, err },
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return nil, err },
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, err
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, err
		},
	}
}
