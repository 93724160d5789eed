package sharding

import (
	"context"

	"errors"
	"fmt"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/sharding/internal/assign"
)

const (
	testGroup  = "ctrl"
	testNS     = "kube-system"
	testRanges = 16
	testLease  = 4 * time.Second
	testRenew  = 3 * time.Second
	testRetry  = time.Second
)

// eventLog records a member's range events.
type eventLog struct {
	mu     sync.Mutex
	events []RangeEvent
}

func (l *eventLog) OnRangeEvent(e RangeEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// take returns the events recorded since the last take, as "Type index".
func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.events))
	for i, e := range l.events {
		out[i] = fmt.Sprintf("%s %d", e.Type, e.Range.Index)
	}
	l.events = nil
	return out
}

// sim drives members on one lease server and one fake clock, round by
// round, without goroutines.
type sim struct {
	t       *testing.T
	server  *leaseServer
	clock   *testingclock.FakeClock
	members map[string]*Member
	logs    map[string]*eventLog
	crashed map[string]bool
}

func newSim(t *testing.T) *sim {
	return &sim{
		t:       t,
		server:  newLeaseServer(),
		clock:   testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		members: map[string]*Member{},
		logs:    map[string]*eventLog{},
		crashed: map[string]bool{},
	}
}

func (s *sim) config(identity string) Config {
	return Config{
		Client: s.server.client(identity).CoordinationV1(), Namespace: testNS, Group: testGroup, Identity: identity,
		Ranges: testRanges, LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry, Clock: s.clock,
	}
}

func (s *sim) add(identity string) *Member {
	m, err := NewMember(s.config(identity))
	require.NoError(s.t, err)
	log := &eventLog{}
	m.AddRangeHandler(log)
	s.members[identity], s.logs[identity] = m, log
	return m
}

// ids returns the identities of the members not crashed, sorted.
func (s *sim) ids() []string {
	var out []string
	for id := range s.members {
		if !s.crashed[id] {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// round runs one round of every member not crashed, checks that no range
// has two acting members, and moves the clock by d.
func (s *sim) round(d time.Duration) {
	s.t.Helper()
	for _, id := range s.ids() {
		s.members[id].round(context.Background(), s.clock.Now())
	}
	s.checkExclusive()
	s.clock.Step(d)
	s.checkExclusive()
}

// checkExclusive fails when two members, crashed ones included, act on
// one range.
func (s *sim) checkExclusive() {
	s.t.Helper()
	for i := range testRanges {
		var acting []string
		for id, m := range s.members {
			if m.Acting(i) {
				acting = append(acting, id)
			}
		}
		assert.LessOrEqual(s.t, len(acting), 1, "range %d acted on by %v at %v", i, acting, s.clock.Now())
	}
}

// owners returns the acting member of every range, "" where none.
func (s *sim) owners() []string {
	out := make([]string, testRanges)
	for id, m := range s.members {
		for i := range testRanges {
			if m.Acting(i) {
				out[i] = id
			}
		}
	}
	return out
}

// settle runs rounds until every range is acted on by the member the
// assignment gives it among the live members, and returns how many rounds
// that took.
func (s *sim) settle(maxRounds int) int {
	s.t.Helper()
	want := assign.Assign(testGroup, testRanges, s.ids())
	for n := 0; n < maxRounds; n++ {
		if slices.Equal(s.owners(), want) {
			return n
		}
		s.round(testRetry)
	}
	require.Equal(s.t, want, s.owners(), "not settled after %d rounds", maxRounds)
	return maxRounds
}

func count(events []string, typ RangeEventType) int {
	n := 0
	for _, e := range events {
		var t string
		var i int
		_, _ = fmt.Sscanf(e, "%s %d", &t, &i)
		if t == string(typ) {
			n++
		}
	}
	return n
}

// TestSingleMemberTakesEveryRange: alone in its group, a member acquires
// every range in its first round, and renews them without events after.
func TestSingleMemberTakesEveryRange(t *testing.T) {
	s := newSim(t)
	a := s.add("a")
	s.round(testRetry)
	assert.Equal(t, testRanges, count(s.logs["a"].take(), RangeAcquired))
	for i := range testRanges {
		assert.True(t, a.Acting(i), "range %d", i)
		l := s.server.get(rangeLeaseName(testGroup, i, testRanges))
		require.NotNil(t, l)
		assert.Equal(t, "a", *l.Spec.HolderIdentity)
		assert.Equal(t, int32(4), *l.Spec.LeaseDurationSeconds)
		assert.Equal(t, int32(0), *l.Spec.LeaseTransitions)
	}
	for range 5 {
		s.round(testRetry)
	}
	assert.Empty(t, s.logs["a"].take())
	st := a.Status()
	assert.Equal(t, []string{"a"}, st.Members)
	assert.NoError(t, st.LastError)
	assert.Equal(t, RangeActing, st.Ranges[3].State)
	assert.Equal(t, "a", st.Ranges[3].Holder)
}

// TestJoinMovesOnlyTheJoinersRanges: members a and b own everything; c
// joins; exactly the ranges c wins move, each released by its holder
// (Lost before the release) and acquired by c, with no two members acting
// on one range at any round, and without waiting for any Lease to expire.
func TestJoinMovesOnlyTheJoinersRanges(t *testing.T) {
	s := newSim(t)
	s.add("a")
	s.add("b")
	s.settle(10)
	before := s.owners()
	transitions := make([]int32, testRanges)
	for i := range transitions {
		transitions[i] = *s.server.get(rangeLeaseName(testGroup, i, testRanges)).Spec.LeaseTransitions
	}
	s.logs["a"].take()
	s.logs["b"].take()

	s.add("c")
	rounds := s.settle(10)
	assert.LessOrEqual(t, rounds, 3, "a join should not wait for a Lease to expire")
	after := s.owners()
	moved := 0
	for i := range before {
		if before[i] != after[i] {
			assert.Equal(t, "c", after[i], "range %d", i)
			moved++
		}
	}
	assert.Positive(t, moved)
	assert.Equal(t, moved, count(s.logs["c"].take(), RangeAcquired))
	lostA, lostB := s.logs["a"].take(), s.logs["b"].take()
	assert.Equal(t, moved, count(lostA, RangeLost)+count(lostB, RangeLost))
	assert.Zero(t, count(lostA, RangeAcquired)+count(lostB, RangeAcquired))
	for i := range after {
		if after[i] == "c" {
			assert.Equal(t, transitions[i]+1, *s.server.get(rangeLeaseName(testGroup, i, testRanges)).Spec.LeaseTransitions, "range %d", i)
		}
	}
}

// TestCrashedMembersRangesMoveAfterExpiry: c stops renewing without
// releasing; its ranges stay unowned until their Leases expired on the
// others' clocks, c stops acting at its renew deadline (before that), and
// the new owners' acquireTime is at least a lease duration after c's last
// renewTime.
func TestCrashedMembersRangesMoveAfterExpiry(t *testing.T) {
	s := newSim(t)
	for _, id := range []string{"a", "b", "c"} {
		s.add(id)
	}
	s.settle(10)
	var cRanges []int
	for i, o := range s.owners() {
		if o == "c" {
			cRanges = append(cRanges, i)
		}
	}
	require.NotEmpty(t, cRanges)
	lastRenew := map[int]time.Time{}
	for _, i := range cRanges {
		lastRenew[i] = s.server.get(rangeLeaseName(testGroup, i, testRanges)).Spec.RenewTime.Time
	}
	s.logs["c"].take()
	s.crashed["c"] = true
	crashedAt := s.clock.Now()

	rounds := s.settle(20)
	// Every round is testRetry long: the handoff takes about a lease
	// duration (the member Lease and the range Leases expire together).
	assert.GreaterOrEqual(t, time.Duration(rounds)*testRetry, testLease-testRetry)
	// A crashed process hears of nothing, but its clock alone ends its
	// acting (checkExclusive counted it in every round).
	assert.Empty(t, s.logs["c"].take())
	for _, i := range cRanges {
		assert.False(t, s.members["c"].Acting(i))
	}
	for _, i := range cRanges {
		l := s.server.get(rangeLeaseName(testGroup, i, testRanges))
		assert.NotEqual(t, "c", *l.Spec.HolderIdentity)
		assert.False(t, l.Spec.AcquireTime.Time.Before(lastRenew[i].Add(testLease)),
			"range %d acquired at %v, c renewed it last at %v", i, l.Spec.AcquireTime.Time, lastRenew[i])
	}
	t.Logf("handoff after the crash: %v of fake time", s.clock.Now().Sub(crashedAt))
}

func uniqueTypes(events []string) []string {
	var out []string
	for _, e := range events {
		var typ string
		var i int
		_, _ = fmt.Sscanf(e, "%s %d", &typ, &i)
		if !slices.Contains(out, typ) {
			out = append(out, typ)
		}
	}
	return out
}

// TestOutageSuspendsAndResumesWithoutLoss: a lone member cut off from the
// server stops acting at its renew deadline but keeps its ranges; once the
// server answers again it resumes them: Suspended then Resumed, never Lost
// or Acquired.
func TestOutageSuspendsAndResumesWithoutLoss(t *testing.T) {
	s := newSim(t)
	a := s.add("a")
	s.settle(5)
	s.logs["a"].take()
	s.server.setDown("a", true)
	down := s.clock.Now()
	for s.clock.Now().Sub(down) < 2*testLease {
		s.round(testRetry)
		if s.clock.Now().Sub(down) < testRenew-testRetry {
			assert.True(t, a.Acting(0), "suspended before the renew deadline")
		}
	}
	assert.False(t, a.Acting(0))
	assert.Error(t, a.Status().LastError)
	assert.Equal(t, RangeHeldSuspended, a.Status().Ranges[0].State)
	assert.Equal(t, testRanges, count(s.logs["a"].take(), RangeSuspended))
	s.server.setDown("a", false)
	s.round(testRetry)
	assert.True(t, a.Acting(0))
	ev := s.logs["a"].take()
	assert.Equal(t, testRanges, count(ev, RangeResumed))
	assert.Equal(t, []string{"Resumed"}, uniqueTypes(ev))
}

// TestOutageOfOneMemberHandsItsRangesOver: b is cut off while a is not;
// a takes b's ranges once they expired, and b, back, learns it lost them
// (Suspended, then Lost) and gets back exactly the ranges it wins.
func TestOutageOfOneMemberHandsItsRangesOver(t *testing.T) {
	s := newSim(t)
	s.add("a")
	s.add("b")
	s.settle(10)
	s.logs["b"].take()
	s.server.setDown("b", true)
	for range int(2*testLease/testRetry) + 2 {
		s.round(testRetry)
	}
	for i, o := range s.owners() {
		assert.Equal(t, "a", o, "range %d", i)
	}
	s.server.setDown("b", false)
	s.settle(10)
	ev := s.logs["b"].take()
	assert.Equal(t, []string{"Suspended", "Lost", "Acquired"}, uniqueTypes(ev))
}

// TestLeaseTakenFromUnderIsLost: a range Lease that stops naming its
// holder (written by someone else) is reported lost, and, being free, taken
// again in the same round.
func TestLeaseTakenFromUnderIsLost(t *testing.T) {
	s := newSim(t)
	a := s.add("a")
	s.round(testRetry)
	s.logs["a"].take()
	// Make every range Lease released and then written by someone else
	// between a's list and a's update.
	for i := range testRanges {
		name := rangeLeaseName(testGroup, i, testRanges)
		l := s.server.get(name)
		empty := ""
		l.Spec.HolderIdentity = &empty
		s.server.mu.Lock()
		s.server.store(l)
		s.server.mu.Unlock()
	}
	// a lost them (the Lease no longer names it) and, since the Leases are
	// free, takes them again in the same round.
	s.round(testRetry)
	ev := s.logs["a"].take()
	assert.Equal(t, testRanges, count(ev, RangeLost))
	assert.Equal(t, testRanges, count(ev, RangeAcquired))
	assert.True(t, a.Acting(0))
}

// TestConflictsLoseQuietly: a create that finds the Lease created by
// another member, and an update that finds it written by another, fail
// with AlreadyExists and Conflict; the member reports no acquisition for
// the first, keeps the range for the second (its deadline still runs), and
// sorts both out in later rounds without an error.
func TestConflictsLoseQuietly(t *testing.T) {
	s := newSim(t)
	a := s.add("a")
	other := "b"
	s.server.race = func(verb, name string) {
		switch {
		case verb == "create" && name == rangeLeaseName(testGroup, 0, testRanges):
			// b creates range 0 just before a does.
			l := &coordinationv1.Lease{}
			l.Name, l.Namespace = name, testNS
			l.Labels = map[string]string{LabelGroup: testGroup, LabelRole: roleRange}
			d := int32(testLease / time.Second)
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = &other, &d
			s.server.store(l)
		case verb == "update" && name == rangeLeaseName(testGroup, 1, testRanges):
			// Someone touches range 1 without taking it, just before a's
			// renewal.
			s.server.store(s.server.leases[name].DeepCopy())
		}
	}
	s.round(testRetry)
	ev := s.logs["a"].take()
	assert.Equal(t, testRanges-1, count(ev, RangeAcquired))
	assert.False(t, a.Acting(0))
	assert.True(t, a.Acting(1))
	s.round(testRetry) // a's renewal of range 1 conflicts
	assert.Error(t, a.Status().LastError)
	assert.True(t, a.Acting(1))
	s.server.race = nil
	s.round(testRetry)
	assert.NoError(t, a.Status().LastError)
	assert.Empty(t, s.logs["a"].take())
	// b never joined: its Lease on range 0 expires and a takes it.
	s.settle(int(testLease/testRetry) + 2)
	assert.Equal(t, []string{"Acquired 0"}, s.logs["a"].take())
}

// TestCleanLeaveHandsOverAtOnce: Run releases a member's ranges and
// deletes its member Lease when its context ends, and the other member
// takes them in its next round, without waiting for expiry. Run's
// goroutine and timers stop (goleak in TestMain).
func TestCleanLeaveHandsOverAtOnce(t *testing.T) {
	s := newSim(t)
	b := s.add("b")
	cfgA := s.config("a")
	a, err := NewMember(cfgA)
	require.NoError(t, err)
	logA := &eventLog{}
	a.AddRangeHandler(logA)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	// Run's first round happens at once; wait for it through its status.
	require.Eventually(t, func() bool { return a.Acting(testRanges - 1) }, 10*time.Second, time.Millisecond)
	assert.Equal(t, testRanges, count(logA.take(), RangeAcquired))
	assert.Error(t, a.Run(ctx), "a second Run")

	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Equal(t, testRanges, count(logA.take(), RangeLost))
	assert.Nil(t, s.server.get(memberLeaseName(testGroup, "a")))
	for i := range testRanges {
		assert.Empty(t, *s.server.get(rangeLeaseName(testGroup, i, testRanges)).Spec.HolderIdentity)
	}
	b.round(context.Background(), s.clock.Now())
	for i := range testRanges {
		assert.True(t, b.Acting(i), "range %d", i)
	}
}

// TestRunSuspendsBetweenRounds: Run suspends a range at its renew deadline
// even when that falls between two rounds, on the member's clock.
func TestRunSuspendsBetweenRounds(t *testing.T) {
	s := newSim(t)
	cfg := s.config("a")
	cfg.KeepLeasesOnStop = true
	a, err := NewMember(cfg)
	require.NoError(t, err)
	log := &eventLog{}
	a.AddRangeHandler(log)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	// Wait for the first round to finish: every range acquired.
	require.Eventually(t, func() bool { return a.Acting(testRanges - 1) }, 10*time.Second, time.Millisecond)
	s.server.setDown("a", true)
	// Step the clock round by round until the deadline passed; Run waits on
	// its timer between steps.
	for i := 0; i < 20 && count(peek(log), RangeSuspended) < testRanges; i++ {
		require.Eventually(t, s.clock.HasWaiters, 10*time.Second, time.Millisecond)
		s.clock.Step(testRetry / 2)
	}
	require.Eventually(t, func() bool { return count(slices.Clone(peek(log)), RangeSuspended) == testRanges }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	// KeepLeasesOnStop: the Leases still name a.
	assert.NotNil(t, s.server.get(memberLeaseName(testGroup, "a")))
	assert.Equal(t, "a", *s.server.get(rangeLeaseName(testGroup, 0, testRanges)).Spec.HolderIdentity)
}

func peek(l *eventLog) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.events))
	for i, e := range l.events {
		out[i] = fmt.Sprintf("%s %d", e.Type, e.Range.Index)
	}
	return out
}

// TestNewMemberRefusesBadConfigs lists the configurations NewMember
// refuses.
func TestNewMemberRefusesBadConfigs(t *testing.T) {
	s := newSim(t)
	for _, tc := range []struct {
		name   string
		change func(*Config)
	}{
		{"no client", func(c *Config) { c.Client = nil }},
		{"no namespace", func(c *Config) { c.Namespace = "" }},
		{"bad group", func(c *Config) { c.Group = "Ctrl" }},
		{"bad identity", func(c *Config) { c.Identity = "a/b" }},
		{"negative ranges", func(c *Config) { c.Ranges = -1 }},
		{"fractional lease", func(c *Config) { c.LeaseDuration = 1500 * time.Millisecond }},
		{"renew not below lease", func(c *Config) { c.RenewDeadline = c.LeaseDuration }},
		{"retry not below renew", func(c *Config) { c.RetryPeriod = c.RenewDeadline }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := s.config("a")
			tc.change(&cfg)
			_, err := NewMember(cfg)
			assert.True(t, errors.Is(err, ErrInvalidConfig), "%v", err)
		})
	}
	m, err := NewMember(Config{Client: s.server.client("x").CoordinationV1(), Namespace: "ns", Group: "g", Identity: "x"})
	require.NoError(t, err)
	assert.Len(t, m.Ranges(), DefaultRanges)
	assert.Equal(t, DefaultLeaseDuration, m.cfg.LeaseDuration)
}

// TestNewcomerCountsFromMemberRenewTime: a member seeing another's member
// Lease for the first time counts its age from its renewTime, so a Lease a
// crashed member left long ago does not count as live, and one renewed
// just now does.
func TestNewcomerCountsFromMemberRenewTime(t *testing.T) {
	s := newSim(t)
	for id, age := range map[string]time.Duration{"gone": 2 * testLease, "alive": testRetry} {
		l := &coordinationv1.Lease{}
		l.Name, l.Namespace = memberLeaseName(testGroup, id), testNS
		l.Labels = map[string]string{LabelGroup: testGroup, LabelRole: roleMember, LabelRanges: "16"}
		holder, d := id, int32(testLease/time.Second)
		renew := metav1.NewMicroTime(s.clock.Now().Add(-age))
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &d, &renew
		s.server.mu.Lock()
		s.server.store(l)
		s.server.mu.Unlock()
	}
	a := s.add("a")
	s.round(testRetry)
	assert.Equal(t, []string{"a", "alive"}, a.Status().Members)
}

// TestRemovedRangeHandlerHearsNothing: a handler removed from a member is
// told of no later event; one added late first hears the ranges held.
func TestRemovedRangeHandlerHearsNothing(t *testing.T) {
	s := newSim(t)
	a := s.add("a")
	removed := &eventLog{}
	remove := a.AddRangeHandler(removed)
	s.round(testRetry)
	assert.Equal(t, testRanges, count(removed.take(), RangeAcquired))
	remove()
	s.add("b")
	s.settle(10)
	assert.Empty(t, removed.take())
	late := &eventLog{}
	a.AddRangeHandler(late)
	held := 0
	for i := range testRanges {
		if a.Acting(i) {
			held++
		}
	}
	assert.Equal(t, held, count(late.take(), RangeAcquired))
}
