package sharding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/sharding/internal/assign"
)

const (
	roleMember = "member"
	roleRange  = "range"
)

// Member is one replica's membership in a group: Run joins the group and
// keeps the member's ranges until its context ends. Create it with
// NewMember. All methods are safe for concurrent use.
type Member struct {
	cfg    Config
	ranges []Range

	// dispatch serializes handler calls and the registration of handlers,
	// so that a handler added late gets the current holds and then every
	// later event, none twice.
	dispatch sync.Mutex
	handlers []*handlerEntry

	mu       sync.Mutex
	held     []heldRange // index: range
	holders  []string    // the holder of each range Lease as last listed
	assigned []string    // the owner of each range by the last assignment
	live     []string
	mismatch []string
	lastErr  error
	started  bool
	ready    chan struct{}

	// observed is owned by the Run goroutine: when each Lease of the
	// group was seen to change last, on the member's clock.
	observed map[string]observation
}

// heldRange is the member's hold on one range.
type heldRange struct {
	held     bool
	acting   bool
	deadline time.Time
}

// observation is a Lease's resourceVersion and when it was first seen.
type observation struct {
	resourceVersion string
	at              time.Time
}

// NewMember returns the member of cfg's group named cfg.Identity, with
// every default applied, or an error wrapping ErrInvalidConfig. It talks to
// nobody until Run.
func NewMember(cfg Config) (*Member, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	bounds, err := cache.EvenShardRanges(cfg.Ranges)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	m := &Member{
		cfg:      cfg,
		ranges:   make([]Range, cfg.Ranges),
		held:     make([]heldRange, cfg.Ranges),
		holders:  make([]string, cfg.Ranges),
		assigned: make([]string, cfg.Ranges),
		observed: map[string]observation{},
		ready:    make(chan struct{}),
	}
	for i, b := range bounds {
		m.ranges[i] = Range{Index: i, Bounds: b}
	}
	return m, nil
}

// Ready returns a channel closed once the member completed its first
// successful round: it then knows the group's live members and holds what
// it could acquire in that round (ranges others still hold come later, as
// they release them).
func (m *Member) Ready() <-chan struct{} { return m.ready }

// Identity returns the member's identity.
func (m *Member) Identity() string { return m.cfg.Identity }

// Ranges returns every range of the group, in index order.
func (m *Member) Ranges() []Range { return slices.Clone(m.ranges) }

// Acting reports whether the member acts on range index now: it holds it
// and the renew deadline of its last successful renewal has not passed on
// the member's clock. False for an index out of range.
func (m *Member) Acting(index int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if index < 0 || index >= len(m.held) {
		return false
	}
	h := m.held[index]
	return h.held && h.acting && m.cfg.Clock.Now().Before(h.deadline)
}

// AddRangeHandler registers h: it is told RangeAcquired (and then
// RangeSuspended where that applies) for every range the member holds now,
// then every later event, until remove is called; after remove returns, h
// is told nothing more. Both may be called at any time from any goroutine,
// but not from within a RangeHandler call (they wait for it to return).
func (m *Member) AddRangeHandler(h RangeHandler) (remove func()) {
	m.dispatch.Lock()
	defer m.dispatch.Unlock()
	m.mu.Lock()
	held := slices.Clone(m.held)
	m.mu.Unlock()
	for i, hr := range held {
		if !hr.held {
			continue
		}
		h.OnRangeEvent(RangeEvent{Type: RangeAcquired, Range: m.ranges[i]})
		if !hr.acting {
			h.OnRangeEvent(RangeEvent{Type: RangeSuspended, Range: m.ranges[i]})
		}
	}
	entry := &handlerEntry{h}
	m.handlers = append(m.handlers, entry)
	return func() {
		m.dispatch.Lock()
		defer m.dispatch.Unlock()
		m.handlers = slices.DeleteFunc(m.handlers, func(e *handlerEntry) bool { return e == entry })
	}
}

// handlerEntry is one registration of a RangeHandler, comparable whatever
// the handler's type.
type handlerEntry struct{ h RangeHandler }

// Status is what a member knows of its group, as of its last round.
type Status struct {
	// Identity is the member's identity.
	Identity string
	// Members are the live members the member assigned ranges to in its
	// last successful round, sorted; itself included.
	Members []string
	// Mismatched are the members of the group that announce another number
	// of ranges and are left out of the assignment, sorted.
	Mismatched []string
	// Ranges are the group's ranges in index order.
	Ranges []RangeStatus
	// LastError is the error of the member's last round, nil when it
	// succeeded.
	LastError error
}

// RangeStatus is one range in a Status.
type RangeStatus struct {
	Range Range
	// Holder is the holder of the range's Lease as last listed ("" for
	// none).
	Holder string
	// Assigned is the member that wins the range among Status.Members (""
	// before the first successful round); it holds the range once the
	// previous holder released it or its Lease expired.
	Assigned string
	// State is the member's own hold on it now.
	State RangeState
}

// Status returns what the member knows now.
func (m *Member) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Clock.Now()
	st := Status{
		Identity:   m.cfg.Identity,
		Members:    slices.Clone(m.live),
		Mismatched: slices.Clone(m.mismatch),
		Ranges:     make([]RangeStatus, len(m.ranges)),
		LastError:  m.lastErr,
	}
	for i, r := range m.ranges {
		state := RangeNotHeld
		if h := m.held[i]; h.held {
			state = RangeHeldSuspended
			if h.acting && now.Before(h.deadline) {
				state = RangeActing
			}
		}
		st.Ranges[i] = RangeStatus{Range: r, Holder: m.holders[i], Assigned: m.assigned[i], State: state}
	}
	return st
}

// Run joins the group and keeps the member's ranges until ctx ends: every
// RetryPeriod it lists the group's Leases, renews its member Lease, renews
// or releases the range Leases it holds and acquires those it wins that are
// free, and it suspends ranges whose renew deadline passes in between. When
// ctx ends it tells the handlers RangeLost for every range it holds and,
// unless KeepLeasesOnStop, releases them and deletes its member Lease,
// then returns ctx's error. It returns an error at once when called a
// second time. Failures to reach the API server are logged, kept in
// Status.LastError and retried; they never end Run.
func (m *Member) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return fmt.Errorf("sharding member %s of group %s: Run called twice", m.cfg.Identity, m.cfg.Group)
	}
	m.started = true
	m.mu.Unlock()
	logger := klog.FromContext(ctx).WithValues("group", m.cfg.Group, "identity", m.cfg.Identity)
	ctx = klog.NewContext(ctx, logger)
	for {
		start := m.cfg.Clock.Now()
		m.round(ctx, start)
		next := start.Add(m.cfg.RetryPeriod)
		for {
			now := m.cfg.Clock.Now()
			wake := next
			if d, ok := m.earliestDeadline(); ok && d.Before(wake) {
				wake = d
			}
			if !now.Before(next) {
				break
			}
			t := m.cfg.Clock.NewTimer(wake.Sub(now))
			select {
			case <-ctx.Done():
				t.Stop()
				m.leave(ctx)
				return ctx.Err()
			case <-t.C():
			}
			m.suspendExpired(m.cfg.Clock.Now())
		}
		if ctx.Err() != nil {
			m.leave(ctx)
			return ctx.Err()
		}
	}
}

// earliestDeadline returns the earliest renew deadline of a range the
// member acts on.
func (m *Member) earliestDeadline() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var d time.Time
	found := false
	for _, h := range m.held {
		if h.held && h.acting && (!found || h.deadline.Before(d)) {
			d, found = h.deadline, true
		}
	}
	return d, found
}

// round is one round of Run, started at start.
func (m *Member) round(ctx context.Context, start time.Time) {
	logger := klog.FromContext(ctx)
	// No call of the round may outlast the earliest deadline: a hanging
	// server must not keep the member acting past it.
	timeout := m.cfg.RenewDeadline
	if d, ok := m.earliestDeadline(); ok && d.Sub(start) < timeout {
		timeout = max(d.Sub(start), time.Millisecond)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := m.roundCalls(rctx, start)
	m.mu.Lock()
	m.lastErr = err
	if err == nil {
		select {
		case <-m.ready:
		default:
			close(m.ready)
		}
	}
	m.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		logger.Error(err, "Sharding round failed")
	}
	m.suspendExpired(m.cfg.Clock.Now())
}

// roundCalls lists, observes, renews and reconciles every range.
func (m *Member) roundCalls(ctx context.Context, start time.Time) error {
	leases := m.cfg.Client.Leases(m.cfg.Namespace)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: labels.Set{LabelGroup: m.cfg.Group}.String()})
	if err != nil {
		return fmt.Errorf("listing the Leases of group %s in %s: %w", m.cfg.Group, m.cfg.Namespace, err)
	}
	now := m.cfg.Clock.Now()
	seen := make(map[string]bool, len(list.Items))
	members := map[string]*coordinationv1.Lease{}
	rangeLeases := make([]*coordinationv1.Lease, m.cfg.Ranges)
	for i := range list.Items {
		l := &list.Items[i]
		seen[l.Name] = true
		if o, ok := m.observed[l.Name]; !ok || o.resourceVersion != l.ResourceVersion {
			at := now
			if !ok && l.Labels[LabelRole] == roleMember && l.Spec.RenewTime != nil && l.Spec.RenewTime.Time.Before(now) {
				// A member Lease seen for the first time counts from its
				// renewTime: a member joining after another crashed does
				// not wait a lease duration to count it gone. This trusts
				// the other's clock, which only ever decides the
				// assignment; who may act on a range is decided by range
				// Leases, always on this member's own clock.
				at = l.Spec.RenewTime.Time
			}
			m.observed[l.Name] = observation{resourceVersion: l.ResourceVersion, at: at}
		}
		switch l.Labels[LabelRole] {
		case roleMember:
			members[l.Name] = l
		case roleRange:
			for i := range rangeLeases {
				if l.Name == rangeLeaseName(m.cfg.Group, i, m.cfg.Ranges) {
					rangeLeases[i] = l
				}
			}
		}
	}
	for name := range m.observed {
		if !seen[name] {
			delete(m.observed, name)
		}
	}

	// The member Lease comes first: ranges are renewed only while the
	// others can see this member alive, or they would wait for ranges
	// whose holder they count as gone.
	own := memberLeaseName(m.cfg.Group, m.cfg.Identity)
	if err := m.renewMember(ctx, members[own], start); err != nil {
		return err
	}
	live := []string{m.cfg.Identity}
	var mismatch []string
	for name, l := range members {
		holder := holderOf(l)
		if name == own || holder == "" || m.expired(l, now) {
			continue
		}
		if l.Labels[LabelRanges] != strconv.Itoa(m.cfg.Ranges) {
			mismatch = append(mismatch, holder)
			continue
		}
		live = append(live, holder)
	}
	slices.Sort(live)
	slices.Sort(mismatch)
	owners := assign.Assign(m.cfg.Group, m.cfg.Ranges, live)
	m.mu.Lock()
	m.live, m.mismatch, m.assigned = live, mismatch, owners
	for i, l := range rangeLeases {
		m.holders[i] = holderOf(l)
	}
	m.mu.Unlock()

	var errs []error
	for i := range m.ranges {
		if err := m.reconcile(ctx, i, rangeLeases[i], owners[i], start, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// renewMember creates or renews the member's own Lease.
func (m *Member) renewMember(ctx context.Context, l *coordinationv1.Lease, start time.Time) error {
	leases := m.cfg.Client.Leases(m.cfg.Namespace)
	now := metav1.NewMicroTime(start)
	if l == nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
			Name:      memberLeaseName(m.cfg.Group, m.cfg.Identity),
			Namespace: m.cfg.Namespace,
			Labels:    m.labels(roleMember),
		}}
		m.setHolder(l, start, false)
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating member Lease %s/%s: %w", m.cfg.Namespace, l.Name, err)
		}
		return nil
	}
	l = l.DeepCopy()
	if holderOf(l) != m.cfg.Identity {
		m.setHolder(l, start, true)
	}
	l.Spec.RenewTime = &now
	l.Spec.LeaseDurationSeconds = m.durationSeconds()
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renewing member Lease %s/%s: %w", m.cfg.Namespace, l.Name, err)
	}
	return nil
}

// reconcile renews, releases or acquires range i, whose Lease is l (nil
// when missing) and whose owner by the assignment is owner.
func (m *Member) reconcile(ctx context.Context, i int, l *coordinationv1.Lease, owner string, start, now time.Time) error {
	leases := m.cfg.Client.Leases(m.cfg.Namespace)
	me := m.cfg.Identity
	holder := holderOf(l)
	m.mu.Lock()
	h := m.held[i]
	m.mu.Unlock()

	if holder != me && h.held {
		// Another member took it (after it expired) or it was cleared.
		m.change(i, heldRange{}, RangeLost)
		h = heldRange{}
	}
	switch {
	case holder == me && owner == me:
		l = l.DeepCopy()
		renew := metav1.NewMicroTime(start)
		l.Spec.RenewTime = &renew
		l.Spec.LeaseDurationSeconds = m.durationSeconds()
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("renewing range Lease %s/%s: %w", m.cfg.Namespace, l.Name, err)
		}
		var event RangeEventType
		switch {
		case !h.held:
			// A Lease naming this identity that this process did not
			// acquire: a restart under the same identity.
			event = RangeAcquired
		case !h.acting:
			event = RangeResumed
		}
		m.change(i, heldRange{held: true, acting: true, deadline: start.Add(m.cfg.RenewDeadline)}, event)
	case holder == me:
		// Another member wins it: stop acting, then release.
		if h.held {
			m.change(i, heldRange{}, RangeLost)
		}
		l = l.DeepCopy()
		m.clearHolder(l, start)
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("releasing range Lease %s/%s to %s: %w", m.cfg.Namespace, l.Name, owner, err)
		}
	case owner == me && (l == nil || holder == "" || m.expired(l, now)):
		var err error
		if l == nil {
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
				Name:      rangeLeaseName(m.cfg.Group, i, m.cfg.Ranges),
				Namespace: m.cfg.Namespace,
				Labels:    m.labels(roleRange),
			}}
			m.setHolder(l, start, false)
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		} else {
			// The Lease's times are those of the decision (now, after the
			// list that found it free or expired), so that acquireTime is
			// never before the moment the previous holder's claim ended on
			// this member's clock; the deadline counts from start, earlier.
			l = l.DeepCopy()
			m.setHolder(l, now, true)
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
		if err != nil {
			if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
				// Another member wrote it first; the next round sees how.
				return nil
			}
			return fmt.Errorf("acquiring range Lease %s/%s: %w", m.cfg.Namespace, l.Name, err)
		}
		m.change(i, heldRange{held: true, acting: true, deadline: start.Add(m.cfg.RenewDeadline)}, RangeAcquired)
	}
	return nil
}

// suspendExpired suspends every range whose renew deadline is at or before
// now.
func (m *Member) suspendExpired(now time.Time) {
	for i := range m.ranges {
		m.mu.Lock()
		h := m.held[i]
		m.mu.Unlock()
		if h.held && h.acting && !now.Before(h.deadline) {
			h.acting = false
			m.change(i, h, RangeSuspended)
		}
	}
}

// leave ends the membership when Run's context ended: RangeLost for every
// held range, then, unless KeepLeasesOnStop, the releases and the deletion
// of the member Lease, on a context of their own bounded by RenewDeadline.
func (m *Member) leave(ctx context.Context) {
	logger := klog.FromContext(ctx)
	var held []int
	for i := range m.ranges {
		m.mu.Lock()
		h := m.held[i]
		m.mu.Unlock()
		if h.held {
			held = append(held, i)
			m.change(i, heldRange{}, RangeLost)
		}
	}
	if m.cfg.KeepLeasesOnStop {
		return
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.RenewDeadline)
	defer cancel()
	leases := m.cfg.Client.Leases(m.cfg.Namespace)
	now := m.cfg.Clock.Now()
	for _, i := range held {
		name := rangeLeaseName(m.cfg.Group, i, m.cfg.Ranges)
		l, err := leases.Get(lctx, name, metav1.GetOptions{})
		if err == nil && holderOf(l) == m.cfg.Identity {
			m.clearHolder(l, now)
			_, err = leases.Update(lctx, l, metav1.UpdateOptions{})
		}
		if err != nil {
			logger.Error(err, "Releasing a range Lease on leaving failed; it expires instead", "lease", name)
		}
	}
	name := memberLeaseName(m.cfg.Group, m.cfg.Identity)
	if err := leases.Delete(lctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		logger.Error(err, "Deleting the member Lease on leaving failed; it expires instead", "lease", name)
	}
}

// expired reports whether l has not changed for its leaseDurationSeconds
// since the member first saw its current resourceVersion.
func (m *Member) expired(l *coordinationv1.Lease, now time.Time) bool {
	o, ok := m.observed[l.Name]
	if !ok {
		return false
	}
	d := time.Duration(0)
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return !now.Before(o.at.Add(d))
}

// setHolder makes the member l's holder as of at: a new holder's
// acquireTime and renewTime, one more transition when it had another.
func (m *Member) setHolder(l *coordinationv1.Lease, at time.Time, transition bool) {
	t := metav1.NewMicroTime(at)
	id := m.cfg.Identity
	l.Spec.HolderIdentity = &id
	l.Spec.AcquireTime = &t
	l.Spec.RenewTime = &t
	l.Spec.LeaseDurationSeconds = m.durationSeconds()
	var n int32
	if l.Spec.LeaseTransitions != nil {
		n = *l.Spec.LeaseTransitions
	}
	if transition {
		n++
	}
	l.Spec.LeaseTransitions = &n
}

// clearHolder releases l as client-go's leader election does: no holder,
// a one-second duration, acquireTime and renewTime now, the transitions
// kept.
func (m *Member) clearHolder(l *coordinationv1.Lease, at time.Time) {
	t := metav1.NewMicroTime(at)
	empty := ""
	one := int32(1)
	l.Spec.HolderIdentity = &empty
	l.Spec.LeaseDurationSeconds = &one
	l.Spec.AcquireTime = &t
	l.Spec.RenewTime = &t
}

func (m *Member) durationSeconds() *int32 {
	s := int32(m.cfg.LeaseDuration / time.Second)
	return &s
}

func (m *Member) labels(role string) map[string]string {
	return map[string]string{LabelGroup: m.cfg.Group, LabelRole: role, LabelRanges: strconv.Itoa(m.cfg.Ranges)}
}

// change sets the member's hold on range i to h and, unless event is "",
// tells every handler of it, in registration order, as one step for
// AddRangeHandler: a handler added meanwhile sees the hold either before
// the change (and then the event) or after it.
func (m *Member) change(i int, h heldRange, event RangeEventType) {
	m.dispatch.Lock()
	defer m.dispatch.Unlock()
	m.mu.Lock()
	m.held[i] = h
	m.mu.Unlock()
	if event == "" {
		return
	}
	for _, entry := range m.handlers {
		entry.h.OnRangeEvent(RangeEvent{Type: event, Range: m.ranges[i]})
	}
}

// holderOf returns l's holder, "" for a nil Lease or none.
func holderOf(l *coordinationv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
