package shard

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
)

// The field paths a shard selector may hash, as the API server names them.
const (
	KeyUID       = "object.metadata.uid"
	KeyNamespace = "object.metadata.namespace"
)

// Top is the exclusive upper bound of the whole hash space, 2^64, as a
// range end.
const Top = "0x10000000000000000"

// ErrInvalid is wrapped by every error New returns.
var ErrInvalid = errors.New("invalid shard selector")

// Range is a half-open range [Start, End) of the 64-bit hash space, each
// bound "0x" followed by exactly 16 lowercase hex digits, or Top as End.
type Range struct {
	Start, End string
}

// span is a validated range as inclusive bounds: first ≤ hash ≤ last.
type span struct {
	first, last uint64
}

// Filter is one validated shard selector. The zero value is not usable;
// build one with New.
type Filter struct {
	key      string
	selector string
	spans    []span
}

// New returns the Filter of key (KeyUID or KeyNamespace) over ranges, in
// the order given. It returns an error wrapping ErrInvalid for another key,
// no range, or a range whose bounds are not "0x" and 16 lowercase hex
// digits (Top as an end), or whose start is not below its end.
func New(key string, ranges []Range) (*Filter, error) {
	switch key {
	case KeyUID, KeyNamespace:
	case "":
		return nil, fmt.Errorf("%w: no key (want %s or %s)", ErrInvalid, KeyUID, KeyNamespace)
	default:
		return nil, fmt.Errorf("%w: unsupported key %q (want %s or %s)", ErrInvalid, key, KeyUID, KeyNamespace)
	}
	if len(ranges) == 0 {
		return nil, fmt.Errorf("%w: no range", ErrInvalid)
	}
	f := &Filter{key: key, spans: make([]span, len(ranges))}
	reqs := make([]sharding.ShardRangeRequirement, len(ranges))
	for i, r := range ranges {
		first, err := parseBound(r.Start, false)
		if err != nil {
			return nil, fmt.Errorf("%w: range %d start: %v", ErrInvalid, i, err)
		}
		end, err := parseBound(r.End, true)
		if err != nil {
			return nil, fmt.Errorf("%w: range %d end: %v", ErrInvalid, i, err)
		}
		// end is one past the range's last hash; Top is 2^64, read as 0
		// (the only bound that wraps), whose last hash is MaxUint64.
		last := end - 1
		if r.End != Top && end <= first {
			return nil, fmt.Errorf("%w: range %d: start %s is not below end %s", ErrInvalid, i, r.Start, r.End)
		}
		f.spans[i] = span{first: first, last: last}
		reqs[i] = sharding.ShardRangeRequirement{Key: key, Start: r.Start, End: r.End}
	}
	f.selector = sharding.NewSelector(reqs...).String()
	return f, nil
}

// parseBound reads a range bound: "0x" and exactly 16 lowercase hex digits,
// or, when end, Top (read as 0). 0x0 and other short forms are refused, as
// the API server refuses them.
func parseBound(s string, end bool) (uint64, error) {
	if end && s == Top {
		return 0, nil
	}
	if len(s) < 2 || s[:2] != "0x" {
		return 0, fmt.Errorf("%q does not start with 0x", s)
	}
	digits := s[2:]
	if len(digits) != 16 {
		if end {
			return 0, fmt.Errorf("%q must have exactly 16 hex digits after 0x, or be %s", s, Top)
		}
		return 0, fmt.Errorf("%q must have exactly 16 hex digits after 0x", s)
	}
	for _, c := range digits {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, fmt.Errorf("%q holds %q, not a lowercase hex digit", s, c)
		}
	}
	v, err := strconv.ParseUint(digits, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", s, err)
	}
	return v, nil
}

// Key returns the field path the Filter hashes.
func (f *Filter) Key() string { return f.key }

// Selector returns the shard selector in the canonical form the API server
// echoes in a plain LIST's metadata.shardInfo.selector.
func (f *Filter) Selector() string { return f.selector }

// Hash returns the 64-bit FNV-1a hash of value, the number
// sharding.HashField writes in hex.
func Hash(value string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(value))
	return h.Sum64()
}

// ContainsHash reports whether h falls in one of the Filter's ranges.
func (f *Filter) ContainsHash(h uint64) bool {
	for _, s := range f.spans {
		if s.first <= h && h <= s.last {
			return true
		}
	}
	return false
}

// Contains reports whether the object of meta falls in the shard.
func (f *Filter) Contains(meta metav1.Object) bool {
	if f.key == KeyNamespace {
		return f.ContainsHash(Hash(meta.GetNamespace()))
	}
	return f.ContainsHash(Hash(string(meta.GetUID())))
}

// EvenRanges returns n ranges of equal width (the last one takes the
// remainder) that cover the hash space in order. n must be at least 1.
func EvenRanges(n int) ([]Range, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: %d ranges; want at least 1", ErrInvalid, n)
	}
	if n == 1 {
		return []Range{{Start: Bound(0), End: Top}}, nil
	}
	width := math.MaxUint64/uint64(n) + 1
	ranges := make([]Range, n)
	for i := range n {
		ranges[i].Start = Bound(uint64(i) * width)
		if i == n-1 {
			ranges[i].End = Top
		} else {
			ranges[i].End = Bound(uint64(i+1) * width)
		}
	}
	return ranges, nil
}

// Bound writes v as a range bound: "0x" and 16 lowercase hex digits.
func Bound(v uint64) string {
	return fmt.Sprintf("0x%016x", v)
}

// ListSelector returns the selector a list answer echoes in
// metadata.shardInfo.selector, and whether it has one: read through
// metav1.ShardedListInterface for typed and metadata lists, and from the
// content of an *unstructured.UnstructuredList.
func ListSelector(list runtime.Object) (string, bool) {
	switch l := list.(type) {
	case metav1.ShardedListInterface:
		info := l.GetShardInfo()
		if info == nil {
			return "", false
		}
		return info.Selector, true
	case *unstructured.UnstructuredList:
		if l == nil {
			return "", false
		}
		s, found, err := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector")
		return s, found && err == nil
	}
	return "", false
}
