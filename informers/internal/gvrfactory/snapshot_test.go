package gvrfactory

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
)

// snapshotOptions is what a factory's snapshot options say: a directory, a
// key and the resources marked sensitive.
type snapshotOptions struct {
	Dir       string
	Key       []byte
	Sensitive []schema.GroupVersionResource
}

// TestInformerOptionsSetSnapshotFileScopeAndProtection: the informers of a
// factory keyed by resource get their snapshot file, scope and protection
// from the factory's options.
func TestInformerOptionsSetSnapshotFileScopeAndProtection(t *testing.T) {
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	key := make([]byte, cache.SnapshotKeySize)
	web := func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }
	base := cache.SharedIndexInformerOptions{ResyncPeriod: 7}

	cases := []struct {
		name    string
		s       snapshotOptions
		gvr     schema.GroupVersionResource
		variant string
		want    cache.SharedIndexInformerOptions
	}{
		{"no directory", snapshotOptions{Key: key, Sensitive: []schema.GroupVersionResource{pods}}, pods, "", base},
		{"plain", snapshotOptions{Dir: "d"}, pods, "", cache.SharedIndexInformerOptions{ResyncPeriod: 7,
			SnapshotFile: filepath.Join("d", "pods.v1.snap"), SnapshotScope: cache.SnapshotScopeFor("ns", web)}},
		{"secrets are sensitive", snapshotOptions{Dir: "d"}, secrets, "metadata", cache.SharedIndexInformerOptions{ResyncPeriod: 7,
			SnapshotFile: filepath.Join("d", "secrets.v1.metadata.snap"), SnapshotScope: cache.SnapshotScopeFor("ns", web),
			SnapshotProtection: cache.SnapshotProtection{Sensitive: true}}},
		{"marked sensitive, with a key", snapshotOptions{Dir: "d", Key: key, Sensitive: []schema.GroupVersionResource{widgets}}, widgets, "", cache.SharedIndexInformerOptions{ResyncPeriod: 7,
			SnapshotFile: filepath.Join("d", "widgets.v1.example.com.snap"), SnapshotScope: cache.SnapshotScopeFor("ns", web),
			SnapshotProtection: cache.SnapshotProtection{Sensitive: true, Key: key}}},
		{"a key of the wrong size turns snapshots off", snapshotOptions{Dir: "d", Key: key[:16]}, pods, "", base},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := New(Client{SnapshotVariant: tc.variant}, 0)
			f.Options = Options{Namespace: "ns", TweakListOptions: web, SnapshotDir: tc.s.Dir, SnapshotKey: tc.s.Key, ListAdmissionSet: true}
			f.Options.MarkSensitive(tc.s.Sensitive...)
			f.Init()
			got := f.Options.InformerOptions(base, tc.gvr, &f.snapshots)
			// A snapshot file always comes with a way to read the cluster's
			// identity (without a ClusterIdentity it says the cluster is
			// not known).
			assert.Equal(t, got.SnapshotFile != "", got.SnapshotCluster != nil)
			got.SnapshotCluster = nil
			assert.Equal(t, tc.want, got)
		})
	}
}
