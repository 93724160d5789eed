// Package reflector is the engine of cache.Reflector: the core that takes
// every decision of a Reflector's list-and-watch cycle, and the driver that
// carries them out.
//
// # The core
//
// Every decision a Reflector takes (what to request next, from which
// resourceVersion, whether a failure is retried, waited out, or ends the
// cycle, when the store's resourceVersion moves) is taken by one
// deterministic function:
//
//	state.Step(input, buffer) -> actions, with state moved to the next one
//
// An Input is something that happened: a request succeeded or failed, a
// watch delivered an event, was closed, went silent, a delay ran out, the
// caller stopped. An Action is something to do: a request to make, a delay
// to wait, a resourceVersion to publish, a Note for the observer (metrics,
// diagnostics, logs, the watch error handler). The core performs no I/O,
// reads no clock (inputs carry the time) and starts no goroutine, so tests
// drive it input by input (core_test.go holds the table of every phase
// against every input). A driver performs the actions and turns their
// outcomes into the next inputs; an observer turns notes into metrics,
// counters, log lines and watch error handler calls.
//
// One list-and-watch cycle moves through the phases
//
//	idle ─▶ resuming ─▶ syncing ─────────────────────────┐
//	  │        └─(no snapshot)─┐                         ▼
//	  └─▶ streamOpening ─▶ streaming ─▶ syncing ─▶ watching ◀─▶ watchOpening
//	         │   ▲  (fallback) │                         ▲
//	         ▼   │             ▼                         │
//	       backoff        listing ─▶ syncing ────────────┘ (via watchOpening)
//
// and ends (back to idle, or stopped) when the watch cannot go on without a
// relist, a request failed in a way the cycle does not retry, or the caller
// stopped. The caller starts the next cycle after its backoff.
//
// # Contract
//
//   - Step depends on nothing but the State and the Input: the same state
//     and input always give the same next state and the same actions. A
//     State is a comparable value holding no pointers to anything shared,
//     so a copy is an independent state.
//   - An input a phase does not expect leaves the state as it is and gives
//     one NoteLogUnexpectedInput.
//   - Step appends to the buffer it is given and allocates nothing else on
//     the path of a watch event.
//
// # Invariants
//
//   - The resourceVersion the store is brought to (ActPublishRV,
//     ActEventApplied with RV) is the one of a complete list, or of an
//     event or bookmark of an open watch once the synthetic initial ADDED
//     events of a watch from "" or "0" are over; an event without a
//     resourceVersion never moves it back to "".
//   - A list the store refused restores the resourceVersion it had before.
//   - Relists ask for data at least as new as the last resourceVersion
//     reached ("" after the server said that version is expired or too
//     new), so the store never goes back in time.
//
// # The engine
//
// An Engine runs the cycles (RunCycle): its driver (driver.go) feeds the
// core what happened and performs the actions it answers with: requests over
// the ListerWatcher, LISTs page by page (list.go), timers, backoff
// (backoff.go), resync, the liveness deadline (liveness.go), and the writes
// to the store. The driver decides nothing itself. The observer (observer.go)
// turns the core's notes into metrics (Metrics), diagnostics (Stats), log
// lines and reports of the failures handled within a cycle (Options.Report).
// Events the Reflector cannot store are counted by kind (BadData) and
// dropped; the watch goes on.
//
// The engine declares what it needs from outside as small interfaces
// (sink.go): a Store for watch events and resyncs, Lists for the lists of that
// store (one sequence per list: objects, page ends, its end at a
// resourceVersion), an Admission for the lists it may run, Stats. Values that
// already have the method set (a ListerWatcher, a store) pass through as they
// are.
//
// Invariants of the driver, besides the core's:
//
//   - Everything it starts (watches, timers, the resync loop) is stopped,
//     and waited for, before RunCycle returns.
//   - An admission slot is held from the start of a LIST or streaming list
//     until it is complete or failed, never across a plain watch.
//   - The store's resourceVersion (LastSyncResourceVersion) is published
//     before the store is handed a complete list, and with every event that
//     moves it; the clock is read once per event.
//
// # Shards
//
// With Settings.Shard (package cache/internal/shard), every LIST, streaming
// list and watch request carries the shard selector, and the driver keeps
// the store to the shard whatever the server sends: a listed object outside
// it is not handed to the list, an event outside it is not written to the
// store (its resourceVersion still moves the store, as the change it stands
// for is none of the shard's). A LIST answer that does not echo the
// selector in its shardInfo, or any object outside the shard, shows a
// server that ignored the selector; the driver reports that at most once
// per cycle (Stats.ShardIgnored and Options.Report with a
// ShardIgnoredError). Without a shard, requests carry no selector.
//
// # Errors
//
// The errors the core makes that a user can see (ShortWatchError,
// IdleTimeoutError, and the driver's ShardIgnoredError) carry the messages of cache's public VeryShortWatchError
// and WatchIdleTimeoutError; cache maps them to those types before a watch
// error handler or a caller of ListAndWatch sees them. This package never
// imports cache.
package reflector
