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
		// clientGoAccepts marks malformed keys that client-go accepts and we
		// deliberately reject.
		clientGoAccepts bool
	}{
		{key: "ns/name", ns: "ns", name: "name"},
		{key: "name", name: "name"},
		{key: "kube-system/coredns-5d78c9869d-abcde", ns: "kube-system", name: "coredns-5d78c9869d-abcde"},
		{key: "a/b/c", wantErr: true},
		{key: "a//", wantErr: true},
		{key: "//", wantErr: true},
		{key: "/name", wantErr: true, clientGoAccepts: true},
		{key: "ns/", wantErr: true, clientGoAccepts: true},
		{key: "/", wantErr: true, clientGoAccepts: true},
		{key: "", wantErr: true, clientGoAccepts: true},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			ns, name, err := SplitMetaNamespaceKey(tc.key)
			on, perr := ParseObjectName(tc.key)
			_, _, cgErr := clientcache.SplitMetaNamespaceKey(tc.key)
			if tc.wantErr {
				require.Error(t, err)
				require.Error(t, perr)
				assert.Contains(t, err.Error(), tc.key)
				assert.Empty(t, ns)
				assert.Empty(t, name)
				assert.Equal(t, ObjectName{}, on)
				assert.Equal(t, !tc.clientGoAccepts, cgErr != nil, "client-go agreement")
				return
			}
			require.NoError(t, err)
			require.NoError(t, perr)
			require.NoError(t, cgErr)
			assert.Equal(t, tc.ns, ns)
			assert.Equal(t, tc.name, name)
			assert.Equal(t, ObjectName{Namespace: tc.ns, Name: tc.name}, on)
			// Round trip.
			assert.Equal(t, tc.key, on.String())
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
