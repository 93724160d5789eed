package informers

import (
	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
	"github.com/kinformer/kinformer/sharding"
)

// WithMembership makes every informer the factory builds a sharded
// informer (*sharding.Informer, see package sharding) over the ranges
// member holds in its group: one range informer with its own Reflector
// and a one-range shard selector (cache.Shard) per held range, hashed by
// key (cache.ShardByUID, the meaning of "", or cache.ShardByNamespace; see
// cache.Shard for the trade of each). Listers and indexers then read the
// objects of the held ranges only; a range the member gains is listed
// alone, and one it loses leaves the cache without delete notifications
// (handlers implementing sharding.RangeSyncHandler, registered with
// AddEventHandler, hear OnRangeSynced and OnRangeLost; a typed handler
// does not). sharding.InformerOf(informer) returns the *sharding.Informer
// behind a factory's informer, for Acting and RangeStatus: a controller
// checks Acting before it acts on an object, since a member whose renewals
// fail keeps its ranges' caches (and handlers) while it stops acting on
// them. There is no fencing: see package sharding.
//
// The factory does not run member: run member.Run alongside the factory;
// WaitForCacheSync returns once the member completed its first round and
// the ranges it held then have synced. The factory's other settings
// (WithTransform, WithMemoryLean, WithListAdmission, WithRelistPageByPage,
// ...) apply to every range informer. Sharded informers take no snapshots
// (WithSnapshotDir has no effect on them) and publish no metrics under
// WithInformerName (each range's store would count as the whole
// informer's); an informer built by InformerFor with the caller's own
// newFunc is not sharded. With WithShard as well, or an unsupported key,
// every informer's lists fail with an error wrapping cache.ErrInvalidShard
// instead of listing unsharded. A nil member turns the option off.
// kinformer extension, not in client-go.
func WithMembership(member *sharding.Member, key cache.ShardKey) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Membership = factoryengine.Membership{Member: member, Key: key}
		return f
	}
}
