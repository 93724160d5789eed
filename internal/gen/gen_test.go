package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestLowerCamelLowersALeadingInitialism(t *testing.T) {
	for in, want := range map[string]string{
		"Pod":                   "pod",
		"CSIDriver":             "csiDriver",
		"IPAddress":             "ipAddress",
		"CSI":                   "csi",
		"ReplicaSet":            "replicaSet",
		"already":               "already",
		"":                      "",
		"HorizontalPodAuto":     "horizontalPodAuto",
		"VolumeAttributesClass": "volumeAttributesClass",
	} {
		assert.Equal(t, want, lowerCamel(in), in)
	}
}

func TestVersionSuffixSplitsGroupAndVersion(t *testing.T) {
	for in, want := range map[string][2]string{
		"CoreV1":                  {"Core", "V1"},
		"AppsV1beta2":             {"Apps", "V1beta2"},
		"InternalV1alpha1":        {"Internal", "V1alpha1"},
		"AutoscalingV2":           {"Autoscaling", "V2"},
		"StoragemigrationV1beta1": {"Storagemigration", "V1beta1"},
		"AdmissionregistrationV1": {"Admissionregistration", "V1"},
	} {
		m := versionSuffix.FindStringSubmatch(in)
		require.NotNil(t, m, in)
		assert.Equal(t, want, [2]string{m[1], m[2]}, in)
	}
	for _, in := range []string{"Discovery", "RESTClient", "V1"} {
		assert.Nil(t, versionSuffix.FindStringSubmatch(in), in)
	}
}

// TestAPIComparisonIgnoresAliasesAndParameterNames checks that the API
// comparison sees through import aliases and parameter names but not through
// real signature changes.
func TestAPIComparisonIgnoresAliasesAndParameterNames(t *testing.T) {
	render := func(src string) map[string]string {
		t.Helper()
		api := map[string]string{}
		require.NoError(t, packageAPI("p", "example.com/p", map[string][]byte{"p/f.go": []byte(src)}, mapPath, api))
		return api
	}
	a := render(`package p
import cache "k8s.io/client-go/tools/cache"
import v1 "k8s.io/api/core/v1"
type L interface { List(sel string) (ret []*v1.Pod, err error); Get(name string) (*v1.Pod, error) }
func New(i cache.Indexer) L { return nil }
type x struct{}
func (x) Hidden() {}
`)
	b := render(`package p
import c "github.com/kinformer/kinformer/cache"
import api "k8s.io/api/core/v1"
type L interface { Get(n string) (*api.Pod, error); List(s string) ([]*api.Pod, error) }
func New(indexer c.Indexer) L { return nil }
`)
	assert.Empty(t, diffAPI(a, b))
	c := render(`package p
import api "k8s.io/api/core/v1"
type L interface { Get(n string) (api.Pod, error); List(s string) ([]*api.Pod, error) }
func New() L { return nil }
func Extra() {}
`)
	assert.Len(t, diffAPI(a, c), 3)
}
