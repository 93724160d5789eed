package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMapTransactionAppliesInOrderAndObservesPreviousObjects: the writes of
// a batch apply in order, observe sees what each key held just before its
// write, and failures come in order of position, unknown operations
// unapplied and index failures applied.
func TestMapTransactionAppliesInOrderAndObservesPreviousObjects(t *testing.T) {
	m := newTestMap(map[string]IndexFunc{"name": failingIndex}, false)
	a1, a2 := testPod("ns", "a", "1"), testPod("ns", "a", "2")
	bad := testPod("ns", "b", "3", "bad", "true")
	require.NoError(t, put(m, a1))

	type seen struct {
		i       int
		prev    any
		existed bool
	}
	var got []seen
	failures := m.Transaction([]Write{
		{Op: OpUpdate, Key: "ns/a", Object: a2},
		{Op: "Bogus", Key: "ns/c", Object: testPod("ns", "c", "9")},
		{Op: OpAdd, Key: "ns/b", Object: bad},
		{Op: OpDelete, Key: "ns/a", Object: a2},
		{Op: OpAdd, Key: "ns/a", Object: a1},
	}, func(i int, prev any, existed bool) {
		got = append(got, seen{i, prev, existed})
	})
	assert.Equal(t, []seen{
		{0, a1, true},
		{1, nil, false},
		{2, nil, false},
		{3, a2, true},
		{4, nil, false},
	}, got)
	require.Len(t, failures, 2)
	assert.Equal(t, 1, failures[0].Pos)
	assert.False(t, failures[0].Applied)
	assert.ErrorContains(t, failures[0].Err, `unknown transaction type "Bogus" for key "ns/c"`)
	assert.Equal(t, 2, failures[1].Pos)
	assert.True(t, failures[1].Applied)
	assert.ErrorIs(t, failures[1].Err, errBadIndex)
	assert.Equal(t, map[string]any{"ns/a": a1, "ns/b": bad}, contents(t, m))
	assert.Equal(t, "1", m.ResourceVersion(), "the last applied write's")
}

// TestMapTransactionVersionSkipsUnappliedWrites: the recorded version is
// that of the last applied write with metadata; an unknown operation after
// it does not count, an applied write with an index error does.
func TestMapTransactionVersionSkipsUnappliedWrites(t *testing.T) {
	m := newTestMap(map[string]IndexFunc{"name": failingIndex}, false)
	m.Transaction([]Write{
		{Op: OpAdd, Key: "ns/a", Object: testPod("ns", "a", "4")},
		{Op: OpAdd, Key: "ns/b", Object: testPod("ns", "b", "5", "bad", "true")},
		{Op: "Bogus", Key: "ns/c", Object: testPod("ns", "c", "6")},
	}, nil)
	assert.Equal(t, "5", m.ResourceVersion())
}

// TestTransactionOfReadsTheCallersBatch: a batch in the caller's own type
// applies as the same Writes would.
func TestTransactionOfReadsTheCallersBatch(t *testing.T) {
	type named struct {
		verb string
		obj  any
	}
	m := newTestMap(testIndexers(), false)
	a, b := testPod("ns", "a", "1", "app", "x"), testPod("ns", "b", "2")
	failures := TransactionOf(m, []named{{OpAdd, a}, {OpAdd, b}, {OpDelete, b}, {"Bogus", a}}, func(n *named) Write {
		return Write{Op: n.verb, Key: testKey(n.obj), Object: n.obj}
	}, nil)
	require.Len(t, failures, 1)
	assert.Equal(t, 3, failures[0].Pos)
	assert.Equal(t, map[string]any{"ns/a": a}, contents(t, m))
	checkIndices(t, m, testIndexers())
	assert.Equal(t, "2", m.ResourceVersion(), "the last applied write's")
	assert.Nil(t, TransactionOf(m, []named(nil), nil, nil))
}
