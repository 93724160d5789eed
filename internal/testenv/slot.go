package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SlotsEnv names the variable that sets how many processes may run test clusters at once on
// this machine (default 1). `go test ./...` runs several packages' test binaries at a time, and
// each cluster costs about 330 MB and a good share of a core while it serves; the integration,
// soak, examples and bench packages all start clusters, so without a limit two of them would
// share two cores with each other's servers under the race detector.
const SlotsEnv = "KINFORMER_TESTENV_SLOTS"

// slotLockDirEnv overrides the folder of the slot lock files (for the slot's own test).
const slotLockDirEnv = "KINFORMER_TESTENV_SLOT_DIR"

// The machine-wide slot of this process. A process takes a slot when it starts its first
// cluster and gives it back when its last one stops: the clusters of one process (a package's
// shared cluster and those its tests start beside it) never wait for each other. This is the
// one piece of process-wide state in the package, because the limit is across processes.
var slot struct {
	mu   sync.Mutex
	refs int
	file *os.File
}

// acquireSlot takes this process's slot, waiting for another process to free one when all are
// held, and logs through logf while it waits. Each acquireSlot must be paired with releaseSlot.
func acquireSlot(logf func(format string, args ...any)) error {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.refs > 0 {
		slot.refs++
		return nil
	}
	f, err := lockSlot(logf)
	if err != nil {
		return err
	}
	slot.file = f
	slot.refs = 1
	return nil
}

// releaseSlot gives back what acquireSlot took.
func releaseSlot() {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	slot.refs--
	if slot.refs > 0 {
		return
	}
	if slot.file != nil {
		// Closing the file releases its lock.
		_ = slot.file.Close()
		slot.file = nil
	}
}

// slotCount is the value of KINFORMER_TESTENV_SLOTS, 1 when unset.
func slotCount() (int, error) {
	v := os.Getenv(SlotsEnv)
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a whole number of at least 1", SlotsEnv, v)
	}
	return n, nil
}

// lockSlot locks one of the slot files and returns it open; the lock lasts until the file is
// closed or the process exits, so a crashed test binary never keeps a slot.
func lockSlot(logf func(format string, args ...any)) (*os.File, error) {
	n, err := slotCount()
	if err != nil {
		return nil, err
	}
	dir := os.Getenv(slotLockDirEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "kinformer-testenv-slots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("slot folder: %w", err)
	}
	files := make([]*os.File, n)
	defer func() {
		for _, f := range files {
			if f != nil {
				_ = f.Close()
			}
		}
	}()
	for i := range files {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("slot-%d.lock", i)), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("slot file: %w", err)
		}
		files[i] = f
	}
	start := time.Now()
	announced := false
	for {
		for i, f := range files {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			switch {
			case err == nil:
				_ = f.Truncate(0)
				_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
				if announced {
					logf("testenv: got test-cluster slot %d after waiting %v", i, time.Since(start).Round(time.Millisecond))
				}
				files[i] = nil // kept open: it holds the lock
				return f, nil
			case err != syscall.EWOULDBLOCK:
				return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
			}
		}
		if !announced {
			logf("testenv: all %d test-cluster slots (%s) are held, by process %s; waiting for one", n, SlotsEnv, holders(files))
			announced = true
		}
		// flock has no wait with a timeout or on several files at once; a slot frees up
		// when another test binary's last cluster stops, seconds to minutes from now.
		time.Sleep(200 * time.Millisecond)
	}
}

// holders lists the process IDs written into the slot files.
func holders(files []*os.File) string {
	var pids []string
	for _, f := range files {
		buf := make([]byte, 16)
		n, _ := f.ReadAt(buf, 0)
		if pid := strings.TrimSpace(string(buf[:n])); pid != "" {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return "unknown"
	}
	return strings.Join(pids, ", ")
}
