// Package bench holds the side-by-side benchmarks of kinformer's cache
// package against client-go v0.37.2's tools/cache (the reference), and the
// tooling that turns their output into tables and plots (see cmd/benchtable,
// the Makefile's bench targets and BENCHMARKS.md at the repository root):
//
//   - ParseBench reads `go test -bench` output, as `make bench` writes it to
//     a raw results file (internal/bench/results/bench-<commit>.txt): the
//     "# key: value" header lines (commit, start, machine, load, the `go
//     test` command of each group), the result lines, and the lines that
//     report a failure. Results.Check refuses failed output, an empty one,
//     a figure missing from a result line (the pairs are matched by line)
//     and, for a full run, a benchmark or figure of ProtocolBenchmarks that
//     is missing.
//   - Each benchmark op measures one pair, and reports each side's figures
//     as "k-<figure>", "c-<figure>" and "f-<figure>" (kinformer, client-go,
//     the floor). Results.Rows and WriteTable give per benchmark and figure
//     the medians of each side, the median and range (min–max) of the
//     per-pair ratios kinformer / client-go, the A/A spread of the
//     scenario and figure (Results.AASpreads: the A/A controls of `make
//     bench-aa`, KINFORMER_BENCH_AA=1, where both sides run kinformer), a
//     reading (kinformer better or worse by FigureDirection only when the
//     median ratio lies beyond that spread, else "level"; "not judged"
//     without a control or with fewer than MinPairs pairs), the target of
//     Targets judged the same way (TargetVerdict), the floor and
//     kinformer over the floor. Rows of BehaviourDifferences get no ratio
//     and no reading, and a note instead.
//   - Results.Scaling, WriteScalingTables and WritePlot show how cost grows:
//     Sync by pods (sync-ms, peaklive-MB, retained-MB) and Events by
//     handlers (events/s), each side's median and range, as Markdown tables
//     and as SVG plots drawn here, without a plotting dependency.
//   - WriteReport renders a run's report (header, commands, tables, plot
//     links) and ReplaceBlock puts it between the BlockBegin and BlockEnd
//     marker lines of BENCHMARKS.md.
//   - RelistCells and WriteRelistTables tabulate BenchmarkRelistModes.
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
