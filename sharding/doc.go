// Package sharding splits one resource between the replicas of a controller
// that come and go: replicas join a named group through
// coordination.k8s.io/v1 Leases, the 64-bit hash space of kube-apiserver's
// shard selectors (see cache.Shard) is cut into a fixed number of ranges
// (cache.EvenShardRanges), and every range is owned by one live member at a
// time. kinformer extension, not in client-go.
//
// # Leases
//
// A group G with N ranges in namespace NS is a set of Leases in NS labelled
// sharding.kinformer.io/group=G:
//
//   - one member Lease per replica, named "G-member-<identity>", holder the
//     replica's identity, renewed every RetryPeriod while it runs and
//     deleted when it leaves cleanly;
//   - one range Lease per range, named "G-range-<i>-of-<N>", holder the
//     member owning range i ("" once released). Its fields keep client-go's
//     leader election meaning (tools/leaderelection/resourcelock.LeaseLock):
//     leaseDurationSeconds is how long the holder's claim lasts without a
//     renewal, acquireTime when the holder took it, renewTime its last
//     renewal, leaseTransitions how many times it changed hands.
//
// # Assignment
//
// Each member computes the owner of every range from the set of live
// members it sees, by rendezvous hashing (the member with the highest
// weight for the range wins): every member seeing the same members
// computes the same owners, a member joining takes only the ranges it wins
// and a member leaving gives up only its own. A member that sees another
// member win a range it holds releases it (it stops acting first, then
// clears the holder); the winner acquires a range only once its Lease is
// released, missing, or expired. A Lease is expired once it has not
// changed for its leaseDurationSeconds, measured on the observer's own
// clock from the moment it saw the last change (as client-go's leader
// election does), so clocks need not agree, only run at about the same
// rate. A member is live while its member Lease is not expired; a member
// Lease seen for the first time counts from its renewTime when that is
// earlier (so that a member joining after a crash does not wait a lease
// duration to count the crashed member gone): that trusts the other
// member's clock, but liveness only decides the assignment, never who may
// act on a range, which range Leases decide on the observer's clock.
//
// # Acting
//
// A member acts on a range (Member.Acting, RangeAcquired/RangeResumed)
// until its renew deadline: RenewDeadline after the start of the last
// renewal that succeeded. RenewDeadline is shorter than LeaseDuration, and
// another member takes a range over only after it saw the Lease unchanged
// for LeaseDuration, so two members do not act on one range at the same
// time as long as the clocks' rates differ by less than the margin between
// the two and every handler returns promptly. This is best effort, as
// client-go's leader election is: there is no fencing, and a process paused
// longer than the margin (a stopped VM, a long GC pause) may act on a range
// another member already took. Work that must never be done twice needs
// its own guard, such as preconditions on the objects written.
//
// A member whose renewals fail (the API server is unreachable) stops acting
// on its ranges at their deadline (RangeSuspended) but keeps them: a cache
// built for them stays, and a later renewal that finds the member still the
// holder resumes them (RangeResumed) without a relist. A range some other
// member took in the meantime is reported lost (RangeLost).
//
// # Informer
//
// An Informer is a cache.SharedIndexInformer over the ranges a Member
// holds: one range informer (its own Reflector and store, with a one-range
// cache.Shard) per held range, so gaining a range lists that range only,
// and losing one drops exactly its objects, without delete notifications
// (handlers implementing RangeSyncHandler hear OnRangeLost instead; a key
// of a lost range still in a work queue finds nothing in the lister).
// Listers and indexers read the union of the held ranges, suspended ones
// included. HasSynced keeps client-go's contract (once true, true);
// ranges gained later report their own sync (Informer.RangeStatus,
// RangeSyncHandler.OnRangeSynced). The resourceVersions it reports are the
// lowest over its synced ranges. Snapshots (SnapshotFile) are off for
// sharded informers: a file tied to ranges the replica may not own on its
// next start would be loaded for nothing or, worse, for ranges another
// replica now owns.
//
// The three informer factories build Informers over a Member with one
// option, informers.WithMembership (and the dynamic and metadata
// factories' WithMembership): every informer of the factory is then one,
// and InformerOf reaches it behind the typed informer the factory hands
// out. The factory does not run the Member: run Member.Run beside it.
//
// # Cost
//
// Every member lists its group's Leases (one LIST with a label selector)
// and writes its member Lease and each range Lease it holds once every
// RetryPeriod: with the defaults (16 ranges, 2 s) and 3 replicas, about 1.5
// LISTs and 9.5 Lease updates a second for the group.
//
// Changing the number of ranges of a group is not a rolling change: members
// ignore members of their group that announce another number (and report
// them in Status.Mismatched), so run the new number under a new group name.
package sharding
