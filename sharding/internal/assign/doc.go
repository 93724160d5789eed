// Package assign decides which member of a sharding group owns which range:
// rendezvous (highest random weight) hashing of range indices over member
// identities.
//
// # Contract
//
//   - Owner(group, index, members) returns the member with the highest
//     weight for the range, a pure function of its arguments: every replica
//     that sees the same set of members computes the same owner, without
//     talking to the others.
//   - Stability: adding a member moves to it only the ranges it now wins,
//     and takes none from one existing member to give to another; removing
//     a member moves only the ranges it owned. Ranges spread about evenly
//     (each member wins about ranges/members of them), not exactly.
//   - Ties (equal weights, which needs a 64-bit collision) go to the
//     smallest identity, so the result never depends on the order members
//     are given in.
//
// The package holds no state and starts nothing.
package assign
