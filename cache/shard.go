package cache

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kinformer/kinformer/cache/internal/reflector"
	"github.com/kinformer/kinformer/cache/internal/shard"
)

// ShardKey names the field whose 64-bit FNV-1a hash places an object in a
// shard (see Shard). kinformer extension, not in client-go.
type ShardKey string

const (
	// ShardByUID hashes metadata.uid. The API server makes uids random,
	// so objects spread evenly over the hash space and equal ranges hold
	// about equal numbers of objects; but an
	// owner and the objects it owns (a Deployment, its ReplicaSets, their
	// Pods) have unrelated uids and land in different shards, so a
	// controller that reads an owner's children from its cache must watch
	// the children unsharded or ask the server.
	ShardByUID ShardKey = shard.KeyUID
	// ShardByNamespace hashes metadata.namespace: every object of a
	// namespace lands in the same shard, keeping owners and children (and
	// whatever else a namespace groups) together, at the price of uneven
	// shards when namespaces differ in size or are few. Every
	// cluster-scoped object has the namespace "", which hashes to one
	// value, so all of them land in the one range that holds that hash.
	// FNV-1a spreads names that differ only in their last characters
	// ("ns1", "ns2", ...) poorly over the upper bits that wide ranges
	// split on, so such namespaces may crowd into few shards; uids, random
	// UUIDs, do not have this problem.
	ShardByNamespace ShardKey = shard.KeyNamespace
)

// ShardTop is the exclusive upper end of the whole hash space, 2^64, the
// End of a ShardRange that reaches the top.
const ShardTop = shard.Top

// ErrInvalidShard is wrapped by every error Shard.Validate returns, and by
// the error an informer with an invalid Shard fails its lists with.
// IsPermanentSyncError reports it as permanent. kinformer extension.
var ErrInvalidShard = shard.ErrInvalid

// ShardRange is a half-open range [Start, End) of the 64-bit hash space, in
// the form kube-apiserver's shard selectors take: each bound is "0x"
// followed by exactly 16 lowercase hex digits ("0x0000000000000000",
// "0x8000000000000000"), and End may be ShardTop. Shorter forms such as
// "0x0", upper-case digits and a Start not below End are invalid. kinformer
// extension, not in client-go.
type ShardRange struct {
	Start, End string
}

// Shard selects the part of a resource an informer keeps, by hash of one
// field of each object, for kube-apiserver's sharded LIST and WATCH
// (KEP-5866, alpha in Kubernetes 1.36 and later, feature gate
// ShardedListAndWatch). The zero value selects everything (no shard). A
// Shard holds one or several ranges; an object is in the shard when the
// 64-bit FNV-1a hash of its Key field falls in any of them (start
// included, end excluded), as the API server computes it. Replicas of a
// controller that each take a disjoint set of ranges covering the hash
// space (EvenShardRanges) share the resource between them, each object in
// exactly one replica's cache.
//
// An informer with a Shard sends its selector on every LIST, streaming
// list and watch request (ListOptions.ShardSelector), and also filters
// what it receives with the same hash: objects outside the shard never
// reach its cache, listers, indexers or handlers, whatever the server
// does. A server that ignores the selector (the gate is off, or the server
// is older) is detected, by the shardInfo a plain LIST answer echoes, and
// on streaming lists and watches (which carry none) by an object outside
// the shard; it is reported once per list-and-watch cycle to the watch
// error handler as a *ShardSelectorIgnoredError and counted in
// InformerStatus.ShardIgnored. The informer then runs degraded: its cache
// still holds exactly the shard, but the whole collection crosses the wire
// and is decoded by every replica.
//
// The hashed fields never change during an object's life, so an object
// does not move between shards; should a relist find that a cached object
// is no longer in the shard, it is removed as any object the list no
// longer has (handlers get a DeletedFinalStateUnknown). A watch event for
// an object outside the shard is dropped, but its resourceVersion still
// counts as reached. kinformer extension, not in client-go.
type Shard struct {
	// Key is the hashed field: ShardByUID or ShardByNamespace.
	Key ShardKey
	// Ranges are the shard's ranges, sent in this order.
	Ranges []ShardRange
}

// IsZero reports whether s selects everything: no key and no range.
func (s Shard) IsZero() bool {
	return s.Key == "" && len(s.Ranges) == 0
}

// Validate returns nil for the zero Shard and for a valid one, and
// otherwise an error wrapping ErrInvalidShard that says which range is
// wrong and why: a key other than ShardByUID and ShardByNamespace, no
// range, a bound that is not "0x" and 16 lowercase hex digits (ShardTop as
// an End), a Start not below its End. It never panics.
func (s Shard) Validate() error {
	_, err := s.filter()
	return err
}

// Selector returns the shard selector s sends, in the canonical form
// kube-apiserver echoes in a LIST answer's metadata.shardInfo (for example
// "shardRange(object.metadata.uid, '0x0000000000000000',
// '0x8000000000000000')", ranges joined by " || "); "" for the zero Shard.
// It returns Validate's error for an invalid one.
func (s Shard) Selector() (string, error) {
	f, err := s.filter()
	if f == nil || err != nil {
		return "", err
	}
	return f.Selector(), nil
}

// Contains reports whether obj is in the shard (always, for the zero
// Shard). It returns an error for an invalid Shard and for an object
// without metadata.
func (s Shard) Contains(obj interface{}) (bool, error) {
	f, err := s.filter()
	if f == nil || err != nil {
		return err == nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false, fmt.Errorf("cannot place %T in a shard: %w", obj, err)
	}
	return f.Contains(m), nil
}

// clone returns s with its own copy of the ranges.
func (s Shard) clone() Shard {
	s.Ranges = slices.Clone(s.Ranges)
	return s
}

// filter returns the validated filter of s: nil and no error for the zero
// Shard.
func (s Shard) filter() (*shard.Filter, error) {
	if s.IsZero() {
		return nil, nil
	}
	ranges := make([]shard.Range, len(s.Ranges))
	for i, r := range s.Ranges {
		ranges[i] = shard.Range{Start: r.Start, End: r.End}
	}
	return shard.New(string(s.Key), ranges)
}

// EvenShardRanges returns n ranges of equal width (the last one a little
// wider when 2^64 does not divide by n) that cover the whole hash space in
// order, the first starting at 0x0000000000000000 and the last ending at
// ShardTop: give replica i of n the Shard{Key: key, Ranges:
// EvenShardRanges(n)[i:i+1]}. It returns an error wrapping ErrInvalidShard
// for n below 1. kinformer extension.
func EvenShardRanges(n int) ([]ShardRange, error) {
	ranges, err := shard.EvenRanges(n)
	if err != nil {
		return nil, err
	}
	out := make([]ShardRange, len(ranges))
	for i, r := range ranges {
		out[i] = ShardRange{Start: r.Start, End: r.End}
	}
	return out, nil
}

// ShardSelectorIgnoredError is what an informer with a Shard passes to its
// watch error handler, at most once per list-and-watch cycle, when it finds
// that the API server answered without applying the shard selector (the
// ShardedListAndWatch feature gate is off, or the server predates it). The
// informer goes on, degraded: its cache holds exactly the shard, filtered
// on the client, but the whole collection crosses the wire. Its message
// names the selector and how the server was found out, never an object.
// Match it with errors.As. kinformer extension, not in client-go.
type ShardSelectorIgnoredError struct {
	// Selector is the shard selector the informer sent.
	Selector string
	// Request is how it was found out: "list" (a LIST answer without the
	// selector echoed in metadata.shardInfo, or echoing another one, or
	// holding objects outside the shard), "streaming list" or "watch"
	// (objects outside the shard delivered; these carry no shardInfo).
	Request string
	// ShardInfo is the selector a LIST answer echoed when it was another
	// one; "" otherwise.
	ShardInfo string
}

// Error says that the server ignored the selector, and how that was found.
func (e *ShardSelectorIgnoredError) Error() string {
	return (&reflector.ShardIgnoredError{Selector: e.Selector, Request: e.Request, ShardInfo: e.ShardInfo}).Error()
}

// isInvalidShard reports an error of an invalid Shard.
func isInvalidShard(err error) bool {
	return errors.Is(err, ErrInvalidShard)
}
