// Package shard is the client side of kube-apiserver's sharded LIST and
// WATCH (KEP-5866, feature gate ShardedListAndWatch): a Filter is one
// validated shard selector, the string a Reflector sends as
// ListOptions.ShardSelector and the test it applies itself to every object
// it receives.
//
// # Contract
//
//   - New validates what a caller gave (the key and every range) and never
//     panics; its errors wrap ErrInvalid and say which range is wrong and
//     why.
//   - A Filter is immutable once built: safe for concurrent use, and its
//     Selector is the canonical form kube-apiserver echoes in a plain LIST's
//     metadata.shardInfo.selector (apimachinery's sharding.NewSelector of
//     the same requirements, in the order given).
//   - Contains hashes the object's uid or namespace as apimachinery's
//     sharding.HashField does (64-bit FNV-1a) and tests the hash against
//     the ranges, start inclusive, end exclusive: an object is in the shard
//     exactly when the server's selector would match it.
//
// The package holds no state and starts nothing. It never imports
// k8s.io/apiserver (whose selector parser pulls in a CEL engine): a
// selector is only ever built here, never parsed.
package shard
