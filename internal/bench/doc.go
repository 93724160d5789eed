// Package bench holds the side-by-side benchmarks of kinformer's cache
// package against client-go v0.37.2's tools/cache (the reference), and the
// tooling that turns their output into one table (see cmd/benchtable and
// BENCHMARKS.md at the repository root).
//
// It is the only package of the module that may import client-go's
// tools/cache and informers: they are the reference the benchmarks compare
// against. Nothing here is part of kinformer's API.
//
// Every benchmark op measures one pair: kinformer (k), client-go (c) and,
// where the scenario has one, the floor (f: the least work the job needs
// with the bookkeeping both informers do, a mutex-guarded map and the
// namespace index), in an order that rotates from op to op, and reports
// "<side>-<figure>" metrics. The benchmarks with heap figures run every
// side in a child process of its own (the test binary started again by
// the harness in child_test.go), and measure the heap of a phase with one
// definition (HeapPhase): the peak live heap is the highest
// /gc/heap/live:bytes over the GC cycles of the phase, the retained heap
// the live heap after it and two forced GCs, both above the live heap
// before the phase.
//
// The non-test files provide what the benchmarks share: a generator of
// realistic pods (NewPod), an in-memory ListerWatcher that serves both
// implementations identically (MemoryLW), HTTP servers speaking the
// Kubernetes API for pods (PodServer; PodAPI, which serves a PodSet in
// every list mode and expires resourceVersions with 410), heap
// measurement (HeapPhase, LiveHeapWatch, LiveHeap) and the parser and
// renderers of `go test -bench` output (ParseBench, WriteTable,
// WriteRelistTables).
package bench
