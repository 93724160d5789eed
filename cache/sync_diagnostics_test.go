package cache

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// podInformerWithListError returns an informer over a fake clientset whose pod
// LISTs fail with listErr (none when nil).
func podInformerWithListError(t *testing.T, listErr error) SharedIndexInformer {
	t.Helper()
	cs := fake.NewClientset(newPod("a", "1"))
	if listErr != nil {
		cs.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, listErr
		})
	}
	lw, _ := fakeClientLW(cs)
	return NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{
		Identifier: (*InformerName)(nil).WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}),
	})
}

func TestWaitForCacheSyncReportsReflectorErrors(t *testing.T) {
	podsGR := schema.GroupResource{Resource: "pods"}
	forbidden := apierrors.NewForbidden(podsGR, "", errors.New(`User "bob" cannot list resource "pods" in API group "" at the cluster scope`))
	notFound := apierrors.NewNotFound(podsGR, "")
	tooMany := apierrors.NewTooManyRequests("slow down", 1)

	for _, tc := range []struct {
		name     string
		listErr  error
		failFast bool
		// wantFast: the wait ended before the deadline, with
		// ErrPermanentSyncFailure instead of the context's cause.
		wantFast bool
		check    func(error) bool
	}{
		{"forbidden, fail fast", forbidden, true, true, apierrors.IsForbidden},
		{"not found, fail fast", notFound, true, true, apierrors.IsNotFound},
		{"forbidden, waiting", forbidden, false, false, apierrors.IsForbidden},
		{"429, fail fast waits", tooMany, true, false, apierrors.IsTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			informer := podInformerWithListError(t, tc.listErr)
			runInformer(t, informer)
			deadline := 700 * time.Millisecond
			if tc.wantFast {
				deadline = waitTimeout
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			res := WaitForCacheSyncWithOptions(ctx, SyncOptions{FailFast: tc.failFast}, informer)

			assert.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&v1.Pod{}): false}, res.Synced)
			require.Error(t, res.Err)
			assert.True(t, tc.check(res.Err), "wrong error kind: %v", res.Err)
			assert.True(t, tc.check(res.AsError()), "AsError loses the kind: %v", res.AsError())
			if tc.wantFast {
				assert.NoError(t, ctx.Err(), "fail fast waited for the deadline")
				assert.ErrorIs(t, res.Err, ErrPermanentSyncFailure)
				assert.NotErrorIs(t, res.Err, context.DeadlineExceeded)
			} else {
				assert.ErrorIs(t, res.Err, context.DeadlineExceeded)
				assert.NotErrorIs(t, res.Err, ErrPermanentSyncFailure)
			}
			var se *InformerSyncError
			require.ErrorAs(t, res.Err, &se)
			assert.Equal(t, "*v1.Pod", se.Type)
			assert.Equal(t, "pods.v1", se.Resource)
			assert.ErrorIs(t, se, tc.listErr)
			assert.Equal(t, "informer for *v1.Pod (pods.v1) has not synced: failed to list *v1.Pod: "+tc.listErr.Error(), se.Error())
		})
	}
}

func TestWaitForCacheSyncResultSucceeds(t *testing.T) {
	informer := podInformerWithListError(t, nil)
	runInformer(t, informer)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res := WaitForCacheSyncWithOptions(ctx, SyncOptions{FailFast: true}, informer, nil)
	assert.NoError(t, res.Err)
	assert.NoError(t, res.AsError())
	assert.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&v1.Pod{}): true}, res.Synced)
}

// TestWaitForCacheSyncResultOfUnstartedInformer: an informer that never ran has no
// error to report; the part says so.
func TestWaitForCacheSyncResultOfUnstartedInformer(t *testing.T) {
	informer := podInformerWithListError(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := WaitForCacheSyncWithContext(ctx, informer)
	require.ErrorIs(t, res.Err, context.Canceled)
	var se *InformerSyncError
	require.ErrorAs(t, res.Err, &se)
	assert.NoError(t, se.Err)
	assert.Equal(t, "informer for *v1.Pod (pods.v1) has not synced (no list or watch error reported)", se.Error())
	assert.Equal(t, "context canceled\ninformer for *v1.Pod (pods.v1) has not synced (no list or watch error reported)", res.Err.Error())
}

func TestIsPermanentSyncErrorClassifiesErrors(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{apierrors.NewForbidden(gr, "", errors.New("no")), true},
		{apierrors.NewUnauthorized("who"), true},
		{apierrors.NewNotFound(gr, ""), true},
		{apierrors.NewBadRequest("field label not supported"), true},
		{apierrors.NewMethodNotSupported(gr, "watch"), true},
		{apierrors.NewTooManyRequests("slow", 1), false},
		{apierrors.NewInternalError(errors.New("boom")), false},
		{apierrors.NewServiceUnavailable("later"), false},
		{apierrors.NewResourceExpired("old"), false},
		{apierrors.NewTimeoutError("slow", 1), false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{errors.Join(errors.New("wrapped"), apierrors.NewForbidden(gr, "", errors.New("no"))), true},
	} {
		assert.Equal(t, tc.want, IsPermanentSyncError(tc.err), "%v", tc.err)
	}
}
