package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

func TestNewRefusesBadInput(t *testing.T) {
	const lo, mid = "0x0000000000000000", "0x8000000000000000"
	cases := []struct {
		name   string
		key    string
		ranges []Range
		want   string
	}{
		{"no key", "", []Range{{lo, mid}}, "no key"},
		{"other key", "object.metadata.name", []Range{{lo, mid}}, `unsupported key "object.metadata.name"`},
		{"no range", KeyUID, nil, "no range"},
		{"short start", KeyUID, []Range{{"0x0", mid}}, `range 0 start: "0x0" must have exactly 16 hex digits`},
		{"short end", KeyUID, []Range{{lo, "0x8"}}, `range 0 end: "0x8" must have exactly 16 hex digits after 0x, or be 0x10000000000000000`},
		{"no prefix", KeyUID, []Range{{"0000000000000000", mid}}, "does not start with 0x"},
		{"upper case", KeyUID, []Range{{lo, "0x8000000000000ABC"}}, "not a lowercase hex digit"},
		{"top as start", KeyUID, []Range{{Top, Top}}, "range 0 start"},
		{"17 digits not top", KeyUID, []Range{{lo, "0x10000000000000001"}}, "range 0 end"},
		{"empty range", KeyUID, []Range{{mid, mid}}, "range 0: start 0x8000000000000000 is not below end 0x8000000000000000"},
		{"reversed", KeyNamespace, []Range{{lo, mid}, {mid, lo}}, "range 1: start"},
		{"empty strings", KeyUID, []Range{{}}, "range 0 start"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := New(tc.key, tc.ranges)
			if err == nil {
				t.Fatalf("New accepted %q %v: selector %q", tc.key, tc.ranges, f.Selector())
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestSelectorIsApimachinerysCanonicalForm: the selector sent is what the
// server echoes, apimachinery's NewSelector(...).String().
func TestSelectorIsApimachinerysCanonicalForm(t *testing.T) {
	f, err := New(KeyUID, []Range{{"0x0000000000000000", "0x4000000000000000"}, {"0xc000000000000000", Top}})
	if err != nil {
		t.Fatal(err)
	}
	want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"
	if f.Selector() != want {
		t.Errorf("Selector() = %q, want %q", f.Selector(), want)
	}
	api := sharding.NewSelector(
		sharding.ShardRangeRequirement{Key: KeyUID, Start: "0x0000000000000000", End: "0x4000000000000000"},
		sharding.ShardRangeRequirement{Key: KeyUID, Start: "0xc000000000000000", End: Top})
	if api.String() != f.Selector() {
		t.Errorf("apimachinery writes %q, the filter %q", api.String(), f.Selector())
	}
}

// TestContainsAgreesWithApimachinery: for many uids and namespaces, and for
// ranges of every shape, the filter and apimachinery's Selector.Matches (the
// server's test) agree, and Hash is HashField's number.
func TestContainsAgreesWithApimachinery(t *testing.T) {
	sets := [][]Range{
		{{"0x0000000000000000", Top}},
		{{"0x0000000000000000", "0x8000000000000000"}},
		{{"0x8000000000000000", Top}},
		{{"0x1234567890abcdef", "0x1234567890abcdf0"}},
		{{"0x0000000000000000", "0x2000000000000000"}, {"0x9000000000000000", "0xa000000000000000"}, {"0xf000000000000000", Top}},
	}
	even, err := EvenRanges(7)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range even {
		sets = append(sets, []Range{r})
	}
	for _, key := range []string{KeyUID, KeyNamespace} {
		for _, ranges := range sets {
			f, err := New(key, ranges)
			if err != nil {
				t.Fatal(err)
			}
			reqs := make([]sharding.ShardRangeRequirement, len(ranges))
			for i, r := range ranges {
				reqs[i] = sharding.ShardRangeRequirement{Key: key, Start: r.Start, End: r.End}
			}
			api := sharding.NewSelector(reqs...)
			for i := range 2000 {
				value := fmt.Sprintf("%08x-aaaa-bbbb-cccc-%012d", i*2654435761, i)
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: value, UID: types.UID(value)}}
				want, err := api.Matches(pod)
				if err != nil {
					t.Fatal(err)
				}
				if got := f.Contains(pod); got != want {
					t.Fatalf("%s %v: Contains(%q) = %v, apimachinery says %v", key, ranges, value, got, want)
				}
				if got, want := fmt.Sprintf("%016x", Hash(value)), sharding.HashField(value); got != want {
					t.Fatalf("Hash(%q) = %s, HashField = %s", value, got, want)
				}
			}
		}
	}
}

// TestEvenRangesCoverTheSpace: n ranges, contiguous, from 0 to the top, each
// valid; fewer than one is an error.
func TestEvenRangesCoverTheSpace(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 16, 1000} {
		ranges, err := EvenRanges(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(ranges) != n || ranges[0].Start != "0x0000000000000000" || ranges[n-1].End != Top {
			t.Fatalf("EvenRanges(%d) = %v", n, ranges)
		}
		for i, r := range ranges {
			if _, err := New(KeyUID, []Range{r}); err != nil {
				t.Fatalf("EvenRanges(%d)[%d]: %v", n, i, err)
			}
			if i > 0 && ranges[i-1].End != r.Start {
				t.Fatalf("EvenRanges(%d): gap between %v and %v", n, ranges[i-1], r)
			}
		}
	}
	if got, _ := EvenRanges(4); got[1].Start != "0x4000000000000000" || got[3].Start != "0xc000000000000000" {
		t.Errorf("EvenRanges(4) = %v", got)
	}
	for _, n := range []int{0, -1} {
		if _, err := EvenRanges(n); !errors.Is(err, ErrInvalid) {
			t.Errorf("EvenRanges(%d): error %v", n, err)
		}
	}
}

func TestListSelector(t *testing.T) {
	const sel = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
	cases := []struct {
		name string
		list runtime.Object
		want string
		ok   bool
	}{
		{"typed with", &v1.PodList{ListMeta: metav1.ListMeta{ShardInfo: &metav1.ShardInfo{Selector: sel}}}, sel, true},
		{"typed without", &v1.PodList{}, "", false},
		{"metadata with", &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ShardInfo: &metav1.ShardInfo{Selector: sel}}}, sel, true},
		{"unstructured with", &unstructured.UnstructuredList{Object: map[string]interface{}{
			"metadata": map[string]interface{}{"shardInfo": map[string]interface{}{"selector": sel}}}}, sel, true},
		{"unstructured without", &unstructured.UnstructuredList{Object: map[string]interface{}{"metadata": map[string]interface{}{}}}, "", false},
		{"unstructured nil", (*unstructured.UnstructuredList)(nil), "", false},
		{"unstructured wrong type", &unstructured.UnstructuredList{Object: map[string]interface{}{
			"metadata": map[string]interface{}{"shardInfo": map[string]interface{}{"selector": 3}}}}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ListSelector(tc.list)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ListSelector = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
