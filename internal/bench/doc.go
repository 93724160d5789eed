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
// implementations identically (MemoryLW), heap sampling (HeapSampler) and
// the parser and renderer of `go test -bench` output (ParseBench, Table).
package bench
