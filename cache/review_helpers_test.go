package cache

import (
	"testing"
	"time"
)

// rvWaitWatch waits until srv has opened one more watch (the first call
// waits for the first watch). Tests that change the server "silently" or
// expire watches must wait for the informer's watch first: before it is
// open, such a change is not missed by a watch but found by the failed
// resumption's relist, which is a different scenario.
func rvWaitWatch(t testing.TB, srv *infServer) {
	t.Helper()
	select {
	case <-srv.watchOpen:
	case <-time.After(infTimeout):
		t.Fatal("no watch was opened")
	}
}

// rvPoll is the polling interval of the review tests' require.Eventually
// calls.
const rvPoll = time.Millisecond
