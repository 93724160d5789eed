package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	clientcache "k8s.io/client-go/tools/cache"
)

func TestSplitMetaNamespaceKeyAndParseObjectName(t *testing.T) {
	cases := []struct {
		key      string
		ns, name string
		wantErr  bool
		// roundTrip: ObjectName.String gives the key back (not for keys
		// with an empty namespace before the "/").
		roundTrip bool
	}{
		{key: "ns/name", ns: "ns", name: "name", roundTrip: true},
		{key: "name", name: "name", roundTrip: true},
		{key: "kube-system/coredns-5d78c9869d-abcde", ns: "kube-system", name: "coredns-5d78c9869d-abcde", roundTrip: true},
		{key: "a/b/c", wantErr: true},
		{key: "a//", wantErr: true},
		{key: "//", wantErr: true},
		{key: "/name", name: "name"},
		{key: "ns/", ns: "ns", roundTrip: true},
		{key: "/"},
		{key: "", roundTrip: true},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			ns, name, err := SplitMetaNamespaceKey(tc.key)
			on, perr := ParseObjectName(tc.key)
			if tc.wantErr {
				require.Error(t, err)
				require.Error(t, perr)
				assert.Contains(t, err.Error(), tc.key)
				assert.Empty(t, ns)
				assert.Empty(t, name)
				assert.Equal(t, ObjectName{}, on)
				return
			}
			require.NoError(t, err)
			require.NoError(t, perr)
			assert.Equal(t, tc.ns, ns)
			assert.Equal(t, tc.name, name)
			assert.Equal(t, ObjectName{Namespace: tc.ns, Name: tc.name}, on)
			if tc.roundTrip {
				assert.Equal(t, tc.key, on.String())
			}
		})
	}
}

func TestObjectNameHelpers(t *testing.T) {
	cases := []struct {
		on   ObjectName
		want string
	}{
		{NewObjectName("ns", "n"), "ns/n"},
		{NewObjectName("", "n"), "n"},
		{ObjectName{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.on.String())
			ns, name := tc.on.Parts()
			assert.Equal(t, tc.on.Namespace, ns)
			assert.Equal(t, tc.on.Name, name)
			nn := tc.on.AsNamespacedName()
			assert.Equal(t, types.NamespacedName{Namespace: ns, Name: name}, nn)
			assert.Equal(t, tc.on, NamespacedNameAsObjectName(nn))
			assert.Equal(t, clientcache.NewObjectName(ns, name).String(), tc.on.String())
		})
	}
}

// TestKeySplittingMatchesClientGo splits the same keys with client-go's
// SplitMetaNamespaceKey and ParseObjectName and with ours: a key with at most
// one "/" is accepted whatever its parts (empty ones included), any other is
// rejected with client-go's error text.
func TestKeySplittingMatchesClientGo(t *testing.T) {
	keys := []string{"", "name", "ns/name", "/name", "ns/", "/", "a/b/c", "a//", "//", "/a/", "ns/na me", "\x00/\xff"}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			wantNS, wantName, wantErr := clientcache.SplitMetaNamespaceKey(key)
			ns, name, err := SplitMetaNamespaceKey(key)
			assert.Equal(t, wantNS, ns, "namespace")
			assert.Equal(t, wantName, name, "name")
			if wantErr == nil {
				assert.NoError(t, err)
			} else if assert.Error(t, err) {
				assert.Equal(t, wantErr.Error(), err.Error())
			}

			wantON, wantErr := clientcache.ParseObjectName(key)
			on, err := ParseObjectName(key)
			assert.Equal(t, ObjectName{Namespace: wantON.Namespace, Name: wantON.Name}, on, "ParseObjectName")
			assert.Equal(t, wantErr == nil, err == nil, "ParseObjectName error: client-go %v, ours %v", wantErr, err)
		})
	}
}
