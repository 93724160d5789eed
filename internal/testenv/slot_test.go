package testenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slotHelperEnv makes the test binary act as another process that wants a slot.
const slotHelperEnv = "KINFORMER_TESTENV_SLOT_HELPER"

// TestSlotHelperProcess is not a test: run as a child by the slot tests, it takes a slot,
// prints "got", and exits (which frees the slot).
func TestSlotHelperProcess(t *testing.T) {
	if os.Getenv(slotHelperEnv) != "1" {
		t.Skip("helper process of the slot tests")
	}
	if err := acquireSlot(func(format string, args ...any) { fmt.Printf(format+"\n", args...) }); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("got")
	releaseSlot()
	os.Exit(0)
}

// TestSlotWaitsForOtherProcessUntilLastRelease holds this process's slot twice (two
// clusters of one process), then starts a second process that wants one: it waits, naming
// this process as the holder, while one hold remains, and gets the slot once the last one
// is released.
func TestSlotWaitsForOtherProcessUntilLastRelease(t *testing.T) {
	t.Setenv(slotLockDirEnv, t.TempDir())
	t.Setenv(SlotsEnv, "1")
	noLog := func(string, ...any) {}
	require.NoError(t, acquireSlot(noLog))
	require.NoError(t, acquireSlot(noLog), "a second cluster of the same process does not wait")
	releaseSlot()

	child := exec.Command(os.Args[0], "-test.run=^TestSlotHelperProcess$", "-test.count=1")
	child.Env = append(os.Environ(), slotHelperEnv+"=1")
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	killed := time.AfterFunc(2*time.Minute, func() { _ = child.Process.Kill() })
	defer killed.Stop()
	lines := bufio.NewScanner(out)

	require.True(t, lines.Scan(), "the child printed nothing: %v", lines.Err())
	waiting := lines.Text()
	assert.Contains(t, waiting, "all 1 test-cluster slots")
	assert.Contains(t, waiting, "by process "+strconv.Itoa(os.Getpid())+";", "the holder is named")

	releaseSlot()
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	require.NoError(t, child.Wait())
	require.NotEmpty(t, rest)
	assert.True(t, strings.HasPrefix(rest[0], "testenv: got test-cluster slot 0 after waiting "), "got %q", rest[0])
	assert.Equal(t, "got", rest[len(rest)-1])
}

// TestSlotCountRejectsBadValues checks KINFORMER_TESTENV_SLOTS: unset means 1, and a value
// that is not a whole number of at least 1 is an error naming the variable.
func TestSlotCountRejectsBadValues(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    int
		wantErr bool
	}{
		{value: "", want: 1},
		{value: "1", want: 1},
		{value: "3", want: 3},
		{value: "0", wantErr: true},
		{value: "-2", wantErr: true},
		{value: "two", wantErr: true},
	} {
		t.Run(fmt.Sprintf("%q", tc.value), func(t *testing.T) {
			t.Setenv(SlotsEnv, tc.value)
			n, err := slotCount()
			if tc.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), SlotsEnv)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
		})
	}
}
