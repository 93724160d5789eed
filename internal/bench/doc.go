// Package bench holds the side-by-side benchmarks of kinformer's cache
// package against client-go v0.37.2's tools/cache (the reference), and the
// tooling that turns their output into one table (see cmd/benchtable and
// BENCHMARKS.md at the repository root).
//
// It is the only package of the module that may import client-go's
// tools/cache and informers: they are the reference the benchmarks compare
// against. Nothing here is part of kinformer's API.
//
// The non-test files provide what the benchmarks share: a generator of
// realistic pods (NewPod), an in-memory ListerWatcher that serves both
// implementations identically (MemoryLW), HTTP servers speaking the
// Kubernetes API for pods (PodServer; PodAPI, which serves a PodSet in
// every list mode and expires resourceVersions with 410), heap sampling
// (HeapSampler, LiveHeapWatch) and the parser and renderers of `go test
// -bench` output (ParseBench, WriteTable, WriteRelistTables).
package bench
