package cache

import (
	"testing"
	"time"
)

// waitForNextWatch waits until srv has opened one more watch (the first call
// waits for the first watch). Tests that change the server "silently" or
// expire watches must wait for the informer's watch first: before it is
// open, such a change is not missed by a watch but found by the failed
// resumption's relist, which is a different scenario.
func waitForNextWatch(t testing.TB, srv *infServer) {
	t.Helper()
	select {
	case <-srv.watchOpen:
	case <-time.After(infTimeout):
		t.Fatal("no watch was opened")
	}
}

// eventuallyTick is the polling interval of the require.Eventually calls of
// the informer tests that wait on a condition many times a second.
const eventuallyTick = time.Millisecond
