package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

// tombstone is a deleted object's placeholder without metadata.
type tombstone struct{ key string }

// TestMapRecordsEveryVersionWithoutWatermark: a store without a watermark
// records the version of every write whose object has metadata, of every
// Replace and of every Bookmark, as client-go's does.
func TestMapRecordsEveryVersionWithoutWatermark(t *testing.T) {
	type step struct {
		do   func(m *Map)
		want string
	}
	p := func(rv string) *v1.Pod { return testPod("ns", "a", rv) }
	cases := []struct {
		name  string
		steps []step
	}{
		{name: "put", steps: []step{
			{func(m *Map) { _, _, _ = m.Put("ns/a", p("5")) }, "5"},
			{func(m *Map) { _, _, _ = m.Put("ns/a", p("7")) }, "7"},
			{func(m *Map) { _, _, _ = m.Put("ns/a", p("3")) }, "3"},
		}},
		{name: "delete with object", steps: []step{
			{func(m *Map) { _, _, _ = m.Put("ns/a", p("5")) }, "5"},
			{func(m *Map) { m.Delete("ns/a", p("9")) }, "9"},
			{func(m *Map) { m.Delete("ns/a", nil) }, "9"},
			{func(m *Map) { m.Delete("ns/a", tombstone{"ns/a"}) }, "9"},
		}},
		{name: "bookmark and replace", steps: []step{
			{func(m *Map) { m.Bookmark("11") }, "11"},
			{func(m *Map) { _ = m.ReplaceMap(map[string]any{"ns/a": p("3")}, "12") }, "12"},
			{func(m *Map) { _, _, _ = m.Put("x", "not an object") }, "12"},
			{func(m *Map) { m.Bookmark("4") }, "4"},
			{func(m *Map) { _ = m.Replace(nil, nil, "") }, ""},
		}},
		{name: "transaction takes last applied", steps: []step{
			{func(m *Map) {
				m.Transaction([]Write{
					{Op: OpAdd, Key: "ns/a", Object: p("20")},
					{Op: OpAdd, Key: "ns/b", Object: testPod("ns", "b", "21")},
					{Op: OpDelete, Key: "ns/b", Object: tombstone{"ns/b"}},
				}, nil)
			}, "21"},
			{func(m *Map) {
				m.Transaction([]Write{{Op: "Bogus", Key: "ns/a", Object: p("30")}}, nil)
			}, "21"},
			{func(m *Map) { m.Transaction(nil, nil) }, "21"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMap(nil, false)
			for i, s := range tc.steps {
				s.do(m)
				assert.Equal(t, tc.steps[i].want, m.ResourceVersion(), "step %d", i)
			}
		})
	}
}

// TestWatermarkTakesACompleteListsVersionAndIgnoresBadVersions: a
// watermark moves forward only with AdvanceResourceVersion and bookmarks,
// ignores versions that do not parse as unsigned 64-bit integers (bad
// data), and takes a complete list's version even when it is lower. Writes
// of objects do not move it.
func TestWatermarkTakesACompleteListsVersionAndIgnoresBadVersions(t *testing.T) {
	m := newTestMap(nil, true)
	rv := m.ResourceVersion
	require.NoError(t, replace(m, "5", testPod("ns", "a", "3")))
	assert.Equal(t, "5", rv())
	_, _, err := m.Put("ns/a", testPod("ns", "a", "6"))
	require.NoError(t, err)
	m.Delete("ns/a", testPod("ns", "a", "7"))
	m.Transaction([]Write{{Op: OpAdd, Key: "ns/a", Object: testPod("ns", "a", "8")}}, nil)
	assert.Equal(t, "5", rv(), "writes of objects leave it alone")
	assert.True(t, m.AdvanceResourceVersion("18000000000000000000"))
	assert.Equal(t, "18000000000000000000", rv(), "large jumps are legitimate")
	require.NoError(t, replace(m, "7", testPod("ns", "a", "3")))
	assert.Equal(t, "7", rv(), "a complete list is the server's truth")
	for _, bad := range []string{"99999999999999999999", "-1", "abc", "0x10", "1e9"} {
		assert.False(t, m.AdvanceResourceVersion(bad))
		m.Bookmark(bad)
		assert.Equal(t, "7", rv(), "bad version %q", bad)
	}
	assert.False(t, m.AdvanceResourceVersion("7"), "not ahead")
	assert.False(t, m.AdvanceResourceVersion(""), "empty")
	m.Bookmark("6")
	assert.Equal(t, "7", rv(), "bookmarks only move it forward")
	m.Bookmark("8")
	assert.Equal(t, "8", rv())
	assert.True(t, m.ResetResourceVersion("4"))
	assert.Equal(t, "4", rv(), "a list applied in steps is the server's truth too")
	assert.False(t, m.ResetResourceVersion("4"), "unchanged")
	assert.False(t, m.ResetResourceVersion(""), "empty")
	require.NoError(t, m.Replace(nil, nil, ""))
	assert.Equal(t, "4", rv(), "a list without a version leaves the watermark")

	// A server whose versions are all opaque still moves it, in its order.
	opaque := newTestMap(nil, true)
	require.NoError(t, opaque.Replace(nil, nil, "opaque-7"))
	assert.True(t, opaque.AdvanceResourceVersion("opaque-8"))
	assert.Equal(t, "opaque-8", opaque.ResourceVersion())
	// Anything is ahead of no version.
	empty := newTestMap(nil, true)
	assert.True(t, empty.AdvanceResourceVersion("abc"))
}

// TestMapCallsOnResourceVersionForEveryRecordedVersion: the callback sees
// each version the store records, and nothing else.
func TestMapCallsOnResourceVersionForEveryRecordedVersion(t *testing.T) {
	var seen []string
	m := New(Config{OnResourceVersion: func(rv string) { seen = append(seen, rv) }})
	_, _, _ = m.Put("ns/a", testPod("ns", "a", "1"))
	m.Bookmark("2")
	_ = m.Replace(nil, nil, "3")
	m.Delete("ns/a", nil)
	assert.Equal(t, []string{"1", "2", "3"}, seen)

	seen = nil
	w := New(Config{Watermark: true, OnResourceVersion: func(rv string) { seen = append(seen, rv) }})
	_, _, _ = w.Put("ns/a", testPod("ns", "a", "1"))
	w.AdvanceResourceVersion("5")
	w.AdvanceResourceVersion("4")
	w.ResetResourceVersion("3")
	assert.Equal(t, []string{"5", "3"}, seen)
}
