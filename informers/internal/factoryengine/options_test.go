package factoryengine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listadmission"
)

// TestDefaultGivesEachFactoryItsOwnListAdmission: without a list admission
// chosen, Default makes one per options value with the default limit; one
// chosen (nil included) is kept.
func TestDefaultGivesEachFactoryItsOwnListAdmission(t *testing.T) {
	var first, second Options[string]
	first.Default()
	second.Default()
	assert.NotNil(t, first.ListAdmission)
	assert.False(t, first.ListAdmission == second.ListAdmission, "two factories share a default admission")
	assert.Equal(t, listadmission.DefaultLimit, first.ListAdmission.Stats().Limit)

	off := Options[string]{ListAdmissionSet: true}
	off.Default()
	assert.Nil(t, off.ListAdmission)
	shared := listadmission.New(listadmission.Options{})
	chosen := Options[string]{ListAdmission: shared, ListAdmissionSet: true}
	chosen.Default()
	assert.True(t, chosen.ListAdmission == shared)
}

// TestZeroOptionsLeaveTheInformersDefaults: the options value of a factory
// built without options changes nothing of an informer's settings but its
// list admission, and installs no transform.
func TestZeroOptionsLeaveTheInformersDefaults(t *testing.T) {
	var o Options[string]
	o.Default()
	base := cache.SharedIndexInformerOptions{ResyncPeriod: time.Minute}
	want := base
	want.ListAdmission = o.ListAdmission
	assert.Equal(t, want, o.InformerOptions(base, "pods", &Snapshots[string]{Name: func(k string) string { return k }}))
	assert.Nil(t, o.InformerTransform())
	assert.Equal(t, time.Minute, o.ResyncPeriod("pods", time.Minute))
}

// TestInformerOptionsCarryTheFactorysSettings: every per-informer option
// reaches the informer's settings, per key where it is per key.
func TestInformerOptionsCarryTheFactorysSettings(t *testing.T) {
	a := listadmission.New(listadmission.Options{})
	o := Options[string]{
		ListAdmission: a, ListAdmissionSet: true,
		Informer:    cache.SharedIndexInformerOptions{RelistPageByPage: true, WatchIdleTimeout: time.Second, StalenessProbeInterval: 2 * time.Second, MaxRetryAfter: 3 * time.Second},
		SnapshotDir: "d", CustomResync: map[string]time.Duration{"pods": time.Hour},
	}
	o.Prioritize(5, "pods")
	o.MarkSensitive("configmaps")
	o.Default()
	snapshots := &Snapshots[string]{
		Name:            func(k string) string { return k },
		FileName:        func(k string) string { return k + ".snap" },
		AlwaysSensitive: func(k string) bool { return k == "secrets" },
		Server:          "https://example",
	}
	for _, tc := range []struct {
		key                 string
		priority            int
		sensitive           bool
		resync              time.Duration
		withoutSnapshotFile bool
	}{
		{key: "pods", priority: 5, resync: time.Hour},
		{key: "configmaps", sensitive: true, resync: time.Minute},
		{key: "secrets", sensitive: true, resync: time.Minute},
		{key: "nodes", resync: time.Minute, withoutSnapshotFile: true},
	} {
		t.Run(tc.key, func(t *testing.T) {
			s := snapshots
			if tc.withoutSnapshotFile {
				s = nil
			}
			got := o.InformerOptions(cache.SharedIndexInformerOptions{}, tc.key, s)
			want := cache.SharedIndexInformerOptions{
				ListAdmission: a, ListAdmissionPriority: tc.priority,
				RelistPageByPage: true, WatchIdleTimeout: time.Second, StalenessProbeInterval: 2 * time.Second, MaxRetryAfter: 3 * time.Second,
			}
			if !tc.withoutSnapshotFile {
				want.SnapshotFile = "d/" + tc.key + ".snap"
				want.SnapshotScope = SnapshotScope("", nil, "https://example")
				want.SnapshotProtection = cache.SnapshotProtection{Sensitive: tc.sensitive}
			}
			assert.Equal(t, want, got)
			assert.Equal(t, tc.resync, o.ResyncPeriod(tc.key, time.Minute))
		})
	}
}

// TestConfigureOverlaysOnlyTheSettingsGiven: Configure gives a built
// informer every setting that is not zero, and leaves the informer's own
// (here a projection's snapshot tie, set at construction) where the
// factory says nothing; a field added to cache.SharedIndexInformerOptions
// is carried without a change to Configure.
func TestConfigureOverlaysOnlyTheSettingsGiven(t *testing.T) {
	informer := cache.NewSharedIndexInformerWithOptions(&cache.ListWatch{}, &v1.Pod{}, cache.SharedIndexInformerOptions{SnapshotProjection: "p1"})
	admission := listadmission.New(listadmission.Options{})
	Configure(informer, nil, cache.SharedIndexInformerOptions{
		UseDeltaFIFO: true, WatchIdleTimeout: -1, MaxRetryAfter: time.Second,
		ListAdmission: admission, ListAdmissionPriority: 3,
	})
	var got cache.SharedIndexInformerOptions
	require.NoError(t, cache.ConfigureInformer(informer, func(o *cache.SharedIndexInformerOptions) { got = *o }))
	assert.Equal(t, cache.SharedIndexInformerOptions{
		UseDeltaFIFO: true, WatchIdleTimeout: -1, MaxRetryAfter: time.Second,
		ListAdmission: admission, ListAdmissionPriority: 3, SnapshotProjection: "p1",
	}, got)
}
