package factoryengine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
		RelistPageByPage: true, WatchIdleTimeout: time.Second, StalenessProbeInterval: 2 * time.Second, MaxRetryAfter: 3 * time.Second,
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
