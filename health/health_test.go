package health

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
)

var t0 = time.Unix(10000, 0)

func sec(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// TestEvaluate checks the rules of Evaluate on statuses, each at t0+100s
// with the default threshold (5 minutes) unless the case sets one.
func TestEvaluate(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("RBAC"))
	synced := func(mod func(*cache.InformerStatus)) cache.InformerStatus {
		st := cache.InformerStatus{Type: "*v1.Pod", Resource: pods, Started: true, Synced: true, StartedAt: sec(0), LastList: sec(1), Confirmed: sec(90), ConfirmedResourceVersion: "7"}
		if mod != nil {
			mod(&st)
		}
		return st
	}
	tests := []struct {
		name       string
		st         cache.InformerStatus
		staleAfter time.Duration
		state      State
		reason     Reason
		message    string
	}{
		{name: "ready", st: synced(nil), state: Ready},
		{name: "not started", st: cache.InformerStatus{Type: "*v1.Pod", Resource: pods}, state: Failing, reason: ReasonNotStarted, message: "the informer has not been started"},
		{name: "stopped", st: synced(func(st *cache.InformerStatus) { st.Stopped = true }), state: Failing, reason: ReasonStopped},
		{name: "still listing", st: synced(func(st *cache.InformerStatus) { st.Synced, st.LastList, st.Confirmed = false, time.Time{}, time.Time{} }),
			state: Failing, reason: ReasonNeverSynced, message: "not synced yet, 1m40s after start"},
		{name: "list forbidden", st: synced(func(st *cache.InformerStatus) {
			st.Synced, st.LastList, st.Confirmed = false, time.Time{}, time.Time{}
			st.LastError, st.LastErrorTime = fmt.Errorf("listing: %w", forbidden), sec(2)
		}), state: Failing, reason: ReasonForbidden, message: `not synced: listing: pods is forbidden: RBAC`},
		{name: "list not found", st: synced(func(st *cache.InformerStatus) {
			st.Synced, st.LastList = false, time.Time{}
			st.LastError, st.LastErrorTime = apierrors.NewNotFound(schema.GroupResource{Resource: "widgets"}, ""), sec(2)
		}), state: Failing, reason: ReasonNotFound},
		{name: "list unauthorized", st: synced(func(st *cache.InformerStatus) {
			st.Synced, st.LastList = false, time.Time{}
			st.LastError, st.LastErrorTime = apierrors.NewUnauthorized("bad token"), sec(2)
		}), state: Failing, reason: ReasonUnauthorized},
		{name: "synced, watch throttled since the last event", st: synced(func(st *cache.InformerStatus) {
			st.LastWatchEvent = sec(50)
			st.LastError, st.LastErrorTime = apierrors.NewTooManyRequests("slow down", 1), sec(60)
		}), state: Degraded, reason: ReasonThrottled, message: "slow down"},
		{name: "synced, an error followed by an event", st: synced(func(st *cache.InformerStatus) {
			st.LastError, st.LastErrorTime = errors.New("connection refused"), sec(60)
			st.LastWatchEvent = sec(61)
		}), state: Ready},
		{name: "synced, an error followed by a list", st: synced(func(st *cache.InformerStatus) {
			st.LastError, st.LastErrorTime = errors.New("connection refused"), sec(60)
			st.LastList = sec(61)
		}), state: Ready},
		{name: "synced, an error", st: synced(func(st *cache.InformerStatus) {
			st.LastError, st.LastErrorTime = errors.New("connection refused"), sec(60)
		}), state: Degraded, reason: ReasonError, message: "connection refused"},
		{name: "stale beyond the threshold", st: synced(func(st *cache.InformerStatus) { st.Confirmed = sec(30) }), staleAfter: time.Minute,
			state: Degraded, reason: ReasonStale, message: "the cache last reached a resourceVersion confirmed as current (7) 1m10s ago (threshold 1m0s)"},
		{name: "stale at the threshold is not stale", st: synced(func(st *cache.InformerStatus) { st.Confirmed = sec(40) }), staleAfter: time.Minute, state: Ready},
		{name: "never confirmed: stale since the start", st: synced(func(st *cache.InformerStatus) { st.Confirmed = time.Time{} }), staleAfter: time.Minute,
			state: Degraded, reason: ReasonStale, message: "no resourceVersion confirmed as current since the start, 1m40s ago (threshold 1m0s)"},
		{name: "threshold off", st: synced(func(st *cache.InformerStatus) { st.Confirmed = sec(-100000) }), staleAfter: -1, state: Ready},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := Evaluate(tc.st, sec(100), Options{StaleAfter: tc.staleAfter})
			assert.Equal(t, tc.state, h.State)
			assert.Equal(t, tc.reason, h.Reason)
			if tc.message != "" {
				assert.Equal(t, tc.message, h.Message)
			}
			if tc.state == Ready {
				assert.Empty(t, h.Message)
			}
			assert.Equal(t, "pods.v1", h.ID)
			assert.Equal(t, "*v1.Pod", h.Type)
		})
	}
}

// TestInformerMatchesAndID checks the names a policy selects informers by.
func TestInformerMatchesAndID(t *testing.T) {
	deploy := Evaluate(cache.InformerStatus{Type: "*v1.Deployment", Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}, t0, Options{})
	assert.Equal(t, "deployments.v1.apps", deploy.ID)
	for sel, want := range map[string]bool{
		"deployments.v1.apps": true, "deployments": true, "*v1.Deployment": true,
		"deployments.v1": false, "pods": false, "": false,
	} {
		assert.Equal(t, want, deploy.Matches(sel), sel)
	}
	named := Evaluate(cache.InformerStatus{Type: "*v1.Pod", Name: "my-pods"}, t0, Options{})
	assert.Equal(t, "my-pods", named.ID)
	assert.True(t, named.Matches("my-pods"))
	assert.False(t, named.Matches("pods"), "no resource known")
	bare := Evaluate(cache.InformerStatus{Type: "*v1.Widget"}, t0, Options{})
	assert.Equal(t, "*v1.Widget", bare.ID)
}

// TestPolicy checks which informers fail a probe under each policy.
func TestPolicy(t *testing.T) {
	report := Report{State: Failing, Informers: []Informer{
		{ID: "pods.v1", Type: "*v1.Pod", Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, State: Ready},
		{ID: "secrets.v1", Type: "*v1.Secret", Resource: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, State: Failing, Reason: ReasonForbidden},
		{ID: "services.v1", Type: "*v1.Service", Resource: schema.GroupVersionResource{Version: "v1", Resource: "services"}, State: Degraded, Reason: ReasonStale},
	}}
	tests := []struct {
		name   string
		policy Policy
		failed []string
	}{
		{name: "default: failing informers", policy: Policy{}, failed: []string{"secrets.v1"}},
		{name: "degraded too", policy: Policy{FailOn: Degraded}, failed: []string{"secrets.v1", "services.v1"}},
		{name: "ready fails nothing", policy: Policy{FailOn: Ready}},
		{name: "only named informers", policy: Policy{FailOn: Degraded, Informers: []string{"services", "*v1.Pod"}}, failed: []string{"services.v1"}},
		{name: "only named informers, healthy", policy: Policy{Informers: []string{"pods.v1"}}},
		{name: "only some reasons", policy: Policy{FailOn: Degraded, Reasons: []Reason{ReasonStale}}, failed: []string{"services.v1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.policy.Evaluate(report)
			var failed []string
			for _, h := range res.Failed {
				failed = append(failed, h.ID)
			}
			assert.Equal(t, tc.failed, failed)
			assert.Equal(t, len(tc.failed) == 0, res.OK)
			assert.Equal(t, Failing, res.State)
			assert.Len(t, res.Informers, 3)
		})
	}
}

// TestNewHandlerRejectsBadSources checks NewHandler's and Check's errors.
func TestNewHandlerRejectsBadSources(t *testing.T) {
	_, err := NewHandler(Policy{})
	require.ErrorIs(t, err, errNoSources)
	_, err = NewHandler(Policy{}, "pods")
	require.ErrorContains(t, err, "cannot check a string")
	_, err = Check(Options{}, 42)
	require.ErrorContains(t, err, "cannot check a int")
}
