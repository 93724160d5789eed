package metadatainformer

import (
	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
	"github.com/kinformer/kinformer/informers/internal/gvrfactory"
	"github.com/kinformer/kinformer/sharding"
)

// WithMembership makes every informer the factory builds a sharded
// informer (*sharding.Informer) over the ranges member holds in its group,
// hashed by key (cache.ShardByUID, the meaning of "", or
// cache.ShardByNamespace); see informers.WithMembership for what listers
// and handlers then see, and package sharding. The factory does not run
// member: run member.Run alongside it. sharding.InformerOf returns the
// *sharding.Informer of a ForResource(gvr).Informer(). Sharded informers
// take no snapshots (WithSnapshotDir has no effect on them). With WithShard
// as well, or an unsupported key, every informer's lists fail with an error
// wrapping cache.ErrInvalidShard. A nil member turns the option off.
// kinformer extension, not in client-go.
func WithMembership(member *sharding.Member, key cache.ShardKey) SharedInformerOption {
	return option(func(o *gvrfactory.Options) {
		o.Membership = factoryengine.Membership{Member: member, Key: key}
	})
}
