package cache

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	clientcache "k8s.io/client-go/tools/cache"
)

func TestIndexFuncToKeyFuncAdapter(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name    string
		fn      IndexFunc
		key     string
		wantErr error
	}{
		{name: "one value", fn: func(interface{}) ([]string, error) { return []string{"k"}, nil }, key: "k"},
		{name: "no value", fn: func(interface{}) ([]string, error) { return nil, nil }},
		{name: "two values", fn: func(interface{}) ([]string, error) { return []string{"a", "b"}, nil }},
		{name: "error", fn: func(interface{}) ([]string, error) { return nil, boom }, wantErr: boom},
		{name: "nil function"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := IndexFuncToKeyFuncAdapter(tc.fn)(newPodIn("ns", "a", ""))
			if tc.key == "" {
				require.Error(t, err)
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.key, key)
			if tc.fn != nil {
				cgKey, cgErr := clientcache.IndexFuncToKeyFuncAdapter(clientcache.IndexFunc(tc.fn))(newPodIn("ns", "a", ""))
				require.NoError(t, cgErr)
				assert.Equal(t, cgKey, key)
			}
		})
	}
}

func TestMetaNamespaceIndexFunc(t *testing.T) {
	for _, tc := range keyCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MetaNamespaceIndexFunc(tc.obj)
			if _, explicit := tc.obj.(ExplicitKey); explicit || tc.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			on, err := ObjectToName(tc.obj)
			require.NoError(t, err)
			assert.Equal(t, []string{on.Namespace}, got)
			cg, cgErr := clientcache.MetaNamespaceIndexFunc(tc.obj)
			require.NoError(t, cgErr)
			assert.Equal(t, cg, got)
		})
	}
}

func TestTypedIndexers(t *testing.T) {
	byNode := func(p *v1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }
	untyped := TypedIndexersToIndexers(TypedIndexers[*v1.Pod]{"node": byNode})
	require.Len(t, untyped, 1)
	p := newPodIn("ns", "a", "")
	p.Spec.NodeName = "n1"
	vals, err := untyped["node"](p)
	require.NoError(t, err)
	assert.Equal(t, []string{"n1"}, vals)

	_, err = untyped["node"](&v1.Node{})
	assert.ErrorContains(t, err, "*v1.Node")
	_, err = untyped["node"](nil)
	assert.Error(t, err)

	_, err = TypedIndexerFuncToIndexerFunc[*v1.Pod](nil)(p)
	assert.Error(t, err)

	idx := NewIndexer(MetaNamespaceKeyFunc, untyped)
	require.NoError(t, idx.Add(p))
	assert.Error(t, idx.Add(&v1.Node{}), "wrong type is an error, not a panic")
	keys, err := idx.IndexKeys("node", "n1")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/a"}, keys)
}
