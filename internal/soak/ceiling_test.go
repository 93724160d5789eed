package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/testenv"
)

// TestSoakCeiling measures what bounds the soak's write rate, without faults (run it with
// `make soak-ceiling`, KINFORMER_SOAK=ceiling): on a cluster with 10,000 objects it runs the
// soak's writer back to back (no pacing) for 10 s at several concurrencies, first with no
// informer, then with the soak's five informers watching through the fault proxy, and logs
// confirmed writes per second, request latencies and the CPU seconds kube-apiserver, etcd
// and the test process spent. Then it restarts kube-apiserver and etcd twice each, as the
// soak's faults do, and logs how long each took and how long after it the first write
// succeeded. It fails when a write fails with no fault injected, or a restart does not
// come back.
func TestSoakCeiling(t *testing.T) {
	if os.Getenv("KINFORMER_SOAK") != "ceiling" {
		t.Skip("the write-rate ceiling runs with `make soak-ceiling` (KINFORMER_SOAK=ceiling)")
	}
	if !testenv.Available(t) {
		return
	}
	const n = 2000
	run := newSoakRun(t, soakConfig{objects: [5]int{n, n, n, n, n}}, seedsToRun(t, nil)[0])
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	created := run.populate(ctx)
	require.Equal(t, 5*n, created)
	t.Logf("populate (creates only, %d workers): %d objects in %v = %.0f/s", writerWorkers, created,
		time.Since(start).Round(time.Millisecond), float64(created)/time.Since(start).Seconds())

	measure := func(label string, workers int) {
		const d = 10 * time.Second
		c0 := cpuSeconds(run.env.Dir())
		st := newWriteStats()
		wctx, stop := context.WithTimeout(ctx, d)
		run.write(wctx, workers, 0, st)
		stop()
		c1 := cpuSeconds(run.env.Dir())
		ok := st.confirmed(0, time.Hour)
		q := st.latency(0.5, 0.9, 0.99)
		t.Logf("%s, %d workers: %d writes confirmed in %v = %.0f/s; latency p50 %v p90 %v p99 %v; CPU seconds: kube-apiserver %.1f, etcd %.1f, test process %.1f; load average %s",
			label, workers, ok, d, float64(ok)/d.Seconds(), q[0], q[1], q[2], c1[0]-c0[0], c1[1]-c0[1], c1[2]-c0[2], loadAverage())
		require.Equal(t, st.attempts, ok, "%s: writes failed with no fault injected", label)
	}
	for _, w := range []int{8, writerWorkers, 2 * writerWorkers, 4 * writerWorkers} {
		measure("no informer", w)
	}
	stop := make(chan struct{})
	for _, s := range run.starters {
		s(stop)
	}
	defer close(stop)
	synced := make([]cache.InformerSynced, 0, len(run.res))
	for _, r := range run.res {
		synced = append(synced, r.informer.HasSynced)
	}
	require.True(t, cache.WaitForCacheSync(ctx.Done(), synced...), "informers did not sync")
	for _, w := range []int{writerWorkers, 2 * writerWorkers} {
		measure("5 informers through the proxy", w)
	}

	firstWrite := func() time.Duration {
		began := time.Now()
		for i := 0; ; i++ {
			_, err := run.res[1].create(ctx, fmt.Sprintf("probe-%d", time.Now().UnixNano()), 1)
			if err == nil {
				return time.Since(began)
			}
			require.Less(t, time.Since(began), 2*time.Minute, "no write succeeded after the restart: %v", err)
			time.Sleep(20 * time.Millisecond) // the probe's polling interval
		}
	}
	for i := 0; i < 2; i++ {
		s := run.env.APIServer(0)
		began := time.Now()
		s.Stop()
		stopped := time.Since(began)
		began = time.Now()
		require.NoError(t, s.Start())
		t.Logf("kube-apiserver restart: stop %v, start until /readyz %v, first write %v later",
			stopped.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), firstWrite().Round(time.Millisecond))
		began = time.Now()
		require.NoError(t, run.env.RestartEtcd())
		t.Logf("etcd restart (stop, start until /health): %v, first write %v later",
			time.Since(began).Round(time.Millisecond), firstWrite().Round(time.Millisecond))
	}
	measure("5 informers through the proxy, after the restarts", writerWorkers)
}

// findPid returns the process whose command line mentions dir and contains what, or 0.
func findPid(dir, what string) int {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmdline, dir) && strings.Contains(cmdline, what) {
			var pid int
			if _, err := fmt.Sscanf(p, "/proc/%d/cmdline", &pid); err == nil {
				return pid
			}
		}
	}
	return 0
}

// procCPUSeconds returns the user+system CPU seconds of a process (0 when it is gone).
func procCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	var user, sys float64
	_, _ = fmt.Sscan(fields[11], &user)
	_, _ = fmt.Sscan(fields[12], &sys)
	return (user + sys) / 100 // clock ticks; USER_HZ is 100 on Linux
}

// cpuSeconds returns the CPU seconds spent so far by the environment's kube-apiserver, its etcd
// and this process.
func cpuSeconds(dir string) [3]float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	return [3]float64{procCPUSeconds(findPid(dir, "kube-apiserver ")), procCPUSeconds(findPid(dir, "/etcd ")), self}
}

// loadAverage returns the machine's 1-minute load average.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
