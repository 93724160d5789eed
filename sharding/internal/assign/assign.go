package assign

import (
	"hash/fnv"
	"strconv"
)

// Weight returns the rendezvous weight of member for range index of group:
// the 64-bit FNV-1a hash of "group/index/member", passed through
// SplitMix64's finalizer so that identities differing only in their last
// characters still get unrelated weights.
func Weight(group string, index int, member string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(group))
	_, _ = h.Write([]byte{'/'})
	_, _ = h.Write([]byte(strconv.Itoa(index)))
	_, _ = h.Write([]byte{'/'})
	_, _ = h.Write([]byte(member))
	return mix(h.Sum64())
}

// mix is SplitMix64's finalizer.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Owner returns the member of members that owns range index of group, and
// false when members is empty.
func Owner(group string, index int, members []string) (string, bool) {
	var best string
	var bestWeight uint64
	found := false
	for _, m := range members {
		w := Weight(group, index, m)
		if !found || w > bestWeight || (w == bestWeight && m < best) {
			best, bestWeight, found = m, w, true
		}
	}
	return best, found
}

// Assign returns the owner of each of n ranges of group among members
// (index i of the result is range i's), "" for every range when members is
// empty.
func Assign(group string, n int, members []string) []string {
	out := make([]string, n)
	for i := range out {
		out[i], _ = Owner(group, i, members)
	}
	return out
}
