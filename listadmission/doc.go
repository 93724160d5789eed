// Package listadmission limits how many initial lists and relists a group of
// informers runs at once, and slows the group down when the API server
// answers 429 Too Many Requests. It is a kinformer extension; client-go has
// no counterpart (its informers all list at once).
//
// # What is admitted
//
// A list is one LIST request with all its pages, or one streaming list
// (a watch sending initial events) until the bookmark that ends its initial
// events. A list asks Admission.Acquire for a Slot before its first request
// and holds it until it is complete or failed (Slot.Release). Watches, and
// every request that is not one of the group's lists, need no slot and are
// never held back. Admission changes when lists are requested, never what
// listers and handlers observe.
//
// # Fairness
//
// At most Options.MaxConcurrent lists hold a slot at once (fewer after a
// 429, see below). Lists that wait are admitted by priority, the highest
// first, and in the order they asked among equal priorities; a list that
// arrives while others wait joins the line, behind every waiting list of
// its priority or higher, even when a slot is free. A
// caller whose context ends while it waits leaves the line and gets no
// slot; a slot granted as its context ended goes to the next in line.
//
// # 429s and the Retry-After bound
//
// A 429 answering one of the group's lists (reported by the informer,
// Admission.ThrottledBy, or seen on the wire by the transport
// Admission.WrapTransport returns, which knows a list by the slot its
// request context carries, ContextWithSlot) halves the number of lists
// admitted at once; at one list at a time, a 429 pauses the group for the
// Retry-After the server sent plus a random jitter (Options.Jitter). A
// Retry-After is read as ParseRetryAfter reads it; one longer than
// Options.MaxRetryAfter (DefaultMaxRetryAfter, 60 s, by default) is read as
// that maximum and counted, so that no misbehaving server or proxy can
// freeze the group for longer. A 429 answering a list admitted before the
// group last slowed down answers the burst it already slowed down for: it
// changes nothing, unless it asks for a longer wait than a pause in
// progress, which it then extends. Every list that completes
// without error raises the number of lists admitted at once by one, up to
// Options.MaxConcurrent again.
//
// # Zero values
//
// The zero Options is the factories' default: DefaultLimit lists at once,
// DefaultJitter, DefaultRetryAfter after a 429 that names none,
// DefaultMaxRetryAfter as the bound, the real clock and a randomly seeded
// generator. In Options, zero means the default and a negative value means
// none (no limit, no jitter, no bound). A nil *Admission admits every list
// at once and ignores every 429, as client-go does; its Stats are zero and
// its WrapTransport returns the transport unchanged. A nil *Slot holds
// nothing. The zero Admission value is not ready for use: build one with
// New.
//
// # Concurrency
//
// An Admission is safe for concurrent use by any number of informers and
// factories, in one process; it starts no goroutine, and a caller waiting
// in Acquire is woken by a release, a 429, the end of a pause or its own
// context. A Slot belongs to the one list it admits.
//
// This package does not import kinformer's cache package: the Reflectors
// of package cache call it (SharedIndexInformerOptions.ListAdmission,
// ReflectorOptions.ListAdmission), and the factories of packages informers,
// informers/dynamic and informers/metadata pass one to their informers
// (WithListAdmission).
package listadmission
