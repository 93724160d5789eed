package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/invariant"
	"github.com/kinformer/kinformer/internal/testenv"
)

// writerWorkers is the writer's concurrency: at 32 the API server is saturated on 2 cores
// (64 and 128 workers wrote no faster in TestSoakCeiling, with longer latencies).
const writerWorkers = 32

// TestSoakShort is the soak test's short version, part of `make test`: 1,300 objects,
// about 100 writes per second, and every fault kind once, half a second apart. The pods
// are more than a LIST page (500), for the 410 on a continue token. It runs once per
// seed of shortSeeds (a random seed under `make soak`, the one given by
// KINFORMER_SOAK_SEED when set), each on a cluster of its own.
func TestSoakShort(t *testing.T) {
	if !testenv.Available(t) {
		return
	}
	for _, seed := range seedsToRun(t, shortSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runSoak(t, seed, soakConfig{
				objects:     [5]int{700, 150, 150, 150, 150},
				rate:        100,
				duration:    10 * time.Second,
				faultEvery:  500 * time.Millisecond,
				extraFaults: 0,
				settle:      150 * time.Second,
			})
		})
	}
}

// TestSoakLong is the soak test of `make soak` (KINFORMER_SOAK=long): 20,000 objects,
// writes at up to 500 per second for 60 seconds, a fault every 2.5 seconds.
func TestSoakLong(t *testing.T) {
	if os.Getenv("KINFORMER_SOAK") != "long" {
		t.Skip("the long soak runs with `make soak` (KINFORMER_SOAK=long)")
	}
	if !testenv.Available(t) {
		return
	}
	runSoak(t, seedsToRun(t, nil)[0], soakConfig{
		objects:     [5]int{4000, 4000, 4000, 4000, 4000},
		rate:        500,
		duration:    60 * time.Second,
		faultEvery:  2500 * time.Millisecond,
		extraFaults: 0,
		settle:      150 * time.Second,
	})
}

func runSoak(t *testing.T, seed uint64, cfg soakConfig) {
	run := newSoakRun(t, cfg, seed)
	if run == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	start := time.Now()
	created := run.populate(ctx)
	total := 0
	for _, n := range cfg.objects {
		total += n
	}
	require.Equal(t, total, created, "not every initial object was created")
	t.Logf("created %d objects in %v", created, time.Since(start).Round(time.Millisecond))

	run.forceListMode()
	stop := make(chan struct{})
	for _, s := range run.starters {
		s(stop)
	}
	defer close(stop)
	synced := make([]cache.InformerSynced, 0, len(run.res))
	for _, r := range run.res {
		synced = append(synced, r.informer.HasSynced)
	}
	syncCtx, syncCancel := context.WithTimeout(ctx, 5*time.Minute)
	require.True(t, cache.WaitForCacheSync(syncCtx.Done(), synced...), "informers did not sync")
	syncCancel()
	t.Logf("informers synced %v after start", time.Since(start).Round(time.Millisecond))
	setup := run.proxy.Counts()
	run.proxy.Clear()
	run.forceListMode()
	initialWrites := 0
	for _, r := range run.res {
		initialWrites += r.writes.Confirmed()
	}

	// The fault phase: the writer runs while the scheduler injects faults.
	writeCtx, stopWriting := context.WithCancel(ctx)
	var writer sync.WaitGroup
	writer.Add(1)
	phaseStart := time.Now()
	wstats := newWriteStats()
	go func() {
		defer writer.Done()
		run.write(writeCtx, writerWorkers, cfg.rate, wstats)
	}()
	rnd := rand.New(rand.NewPCG(run.seed, 0x50a4))
	stats := newFaultStats()
	for i, f := range scheduleFaults(rnd, cfg.extraFaults) {
		if i > 0 {
			time.Sleep(cfg.faultEvery) // the fault schedule's pace, counted from the end of the last fault
		}
		t.Logf("%6.1fs fault %d: %s", time.Since(phaseStart).Seconds(), i+1, f.name)
		began := time.Now()
		effect, err := f.inject(run, ctx, rnd)
		if effect.resource != "" {
			t.Logf("%6.1fs        on %s", time.Since(phaseStart).Seconds(), effect.resource)
		}
		if f.outage() {
			stats.outages = append(stats.outages, serverOutage{name: f.name, began: began, ready: time.Now()})
			t.Logf("%6.1fs        server ready again after %v", time.Since(phaseStart).Seconds(), time.Since(began).Round(time.Millisecond))
		}
		stats.add(f.name, effect, err)
	}
	if wait := time.Until(phaseStart.Add(cfg.duration)); wait > 0 {
		time.Sleep(wait) // the rest of the write phase
	}
	// Rules wait for the request they fault; kick the informers they wait for until they
	// meet it.
	fireDeadline := time.Now().Add(2 * time.Minute)
	for waiting := stats.waiting(); len(waiting) > 0 && time.Now().Before(fireDeadline); waiting = stats.waiting() {
		for res := range waiting {
			run.kick(res)
		}
		// Give the kicked informers up to 2 s to reconnect and meet their rules (longer
		// when one waits out a backoff: then the next round kicks it again).
		settled := time.Now().Add(2 * time.Second)
		for len(stats.waiting()) == len(waiting) && time.Now().Before(settled) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	run.proxy.Clear()
	run.forceListMode()
	stopWriting()
	writer.Wait()
	phase := time.Since(phaseStart)

	divergences, took := invariant.WaitConsistent(ctx, run.targets(), cfg.settle)

	// The report.
	var objects, events, watchErrs, badData int
	writes := map[string]int{}
	confirmed := 0
	for _, r := range run.res {
		n := r.informer.GetStore().List()
		objects += len(n)
		events += r.recorder.Events()
		watchErrs += int(r.watchErrs.Load())
		// Events the Reflector skipped and undecodable frames.
		if st, ok := cache.GetInformerStatus(r.informer); ok {
			badData += int(st.BadData)
		}
		for k, v := range r.writes.Counts() {
			writes[k] += v
		}
		confirmed += r.writes.Confirmed()
	}
	proxyCounts := run.proxy.Counts()
	for k, v := range setup {
		proxyCounts[k] -= v
		if proxyCounts[k] == 0 {
			delete(proxyCounts, k)
		}
	}
	fired := stats.fired()
	var report strings.Builder
	fmt.Fprintf(&report, "soak report (seed %d, replay with %s=%d)\n", run.seed, seedEnv, run.seed)
	fmt.Fprintf(&report, "  objects: %d created initially, %d at the end across 5 informers\n", created, objects)
	phaseWrites := confirmed - initialWrites
	var stalled time.Duration
	outages := make([]string, 0, len(stats.outages))
	for _, o := range stats.outages {
		st := wstats.stall(o.began, o.ready, phaseStart.Add(phase))
		stalled += st
		outages = append(outages, fmt.Sprintf("%s ready after %v, writes stalled %v", o.name,
			o.ready.Sub(o.began).Round(100*time.Millisecond), st.Round(100*time.Millisecond)))
	}
	up := phase - stalled
	lat := wstats.latency(0.5, 0.99)
	fmt.Fprintf(&report, "  writes during the fault phase: %d confirmed in %v = %.0f/s; %.0f/s over the %v the writer was not stalled by a server restart (%s); target %d/s, %d workers, latency p50 %v p99 %v\n",
		phaseWrites, phase.Round(time.Second), float64(phaseWrites)/phase.Seconds(), float64(phaseWrites)/up.Seconds(), up.Round(time.Second),
		strings.Join(outages, "; "), cfg.rate, writerWorkers, lat[0], lat[1])
	fmt.Fprintf(&report, "  confirmed writes in each second of the phase: %v\n", wstats.series())
	fmt.Fprintf(&report, "  all writes by outcome, initial creates included: %s\n", sortedCounts(writes))
	fmt.Fprintf(&report, "  faults injected (fired/injected): ")
	names := make([]string, 0, len(stats.injected))
	for _, f := range faultKinds {
		if n := stats.injected[f.name]; n > 0 {
			names = append(names, fmt.Sprintf("%s=%d/%d", f.name, fired[f.name], n))
		}
	}
	report.WriteString(strings.Join(names, ", ") + "\n")
	fmt.Fprintf(&report, "  proxy faults by kind: %s\n", sortedCounts(proxyCounts))
	fmt.Fprintf(&report, "  handler events: %d; watch errors reported: %d (bad data: %d)\n", events, watchErrs, badData)
	fmt.Fprintf(&report, "  converged %v after the faults stopped; divergences: %d\n", took.Round(time.Millisecond), len(divergences))
	t.Log(report.String())
	if len(divergences) > 0 {
		// What each informer was doing, and every goroutine, for the diagnosis.
		for _, r := range run.res {
			st, ok := cache.GetInformerStatus(r.informer)
			if !ok {
				t.Logf("status of %s: not a kinformer informer", r.name)
				continue
			}
			js, _ := json.Marshal(st)
			t.Logf("status of %s: %s", r.name, js)
		}
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Logf("goroutines:\n%s", stacks.String())
	}

	require.Empty(t, stats.errs, "server-side faults failed")
	require.Empty(t, divergences, invariant.Summary(divergences, 20))
	for _, f := range faultKinds {
		require.Positive(t, fired[f.name], "fault %s never took effect (seed %d)", f.name, run.seed)
	}
}
