package cache

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultStalenessProbeInterval is the staleness probe interval of an
// informer whose SharedIndexInformerOptions.StalenessProbeInterval is zero:
// longer than the interval at which kube-apiserver's watch cache sends
// bookmarks (about a minute), so that an informer that gets them never
// probes.
const DefaultStalenessProbeInterval = 2 * time.Minute

// errProbeNoResourceVersion is a probe answer without a resourceVersion.
var errProbeNoResourceVersion = errors.New("the list has no resourceVersion")

// runStalenessProbe confirms the cache's resourceVersion with a LIST of one
// object (limit=1, resourceVersion "": a consistent read) whenever no
// confirmation arrived for interval while the informer has synced. It runs
// until ctx ends; its timer runs on timers.
func (s *sharedIndexInformer) runStalenessProbe(ctx context.Context, interval time.Duration, timers clock.Clock) {
	lw := ToListerWatcherWithContext(s.listerWatcher)
	t := timers.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		wait := interval
		if s.HasSynced() {
			last := s.stats.Freshness().LastReceived()
			if since := s.clock.Since(last); last.IsZero() || since >= interval {
				s.probeStaleness(ctx, lw)
			} else {
				wait = interval - since
			}
		}
		t.Reset(wait)
	}
}

// probeStaleness makes one staleness probe.
func (s *sharedIndexInformer) probeStaleness(ctx context.Context, lw ListerWatcherWithContext) {
	f := s.stats.Freshness()
	options := metav1.ListOptions{ResourceVersion: "", Limit: 1}
	if f, err := s.config.Shard.filter(); err == nil && f != nil {
		// The probe asks for the shard too, as every request of a sharded
		// informer does; only the list's resourceVersion is read.
		options.ShardSelector = f.Selector()
	}
	obj, err := lw.ListWithContext(ctx, options)
	at := s.clock.Now()
	if ctx.Err() != nil {
		return
	}
	f.CountProbe()
	var rv string
	if err == nil {
		var list metav1.ListInterface
		if list, err = meta.ListAccessor(obj); err == nil {
			if rv = list.GetResourceVersion(); rv == "" {
				err = errProbeNoResourceVersion
			}
		}
	}
	if err != nil {
		f.CountProbeFailure()
		klog.FromContext(ctx).V(2).Info("Staleness probe failed", "type", s.config.ObjectDescription, "objectType", s.objectType, "err", err)
		return
	}
	f.Confirm(rv, at)
}
