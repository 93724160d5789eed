package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/testenv"
)

const (
	itUserListOnly = "it-list-only"
	itUserNobody   = "it-nobody"
)

// TestForbiddenInformerReportsAndBacksOff runs configmap informers as a user that may list
// but not watch configmaps, and as one that may do neither. Each must hand the 403 to the
// watch error handler and retry with backoff, not in a loop: each attempt makes at most a
// few requests, and the Reflector's delay between two attempts (0.8 s, doubling; jitter only
// lengthens it) separates every report from the next. A loaded machine only lengthens those
// gaps, so the lower bounds on them hold however slowly it runs.
func TestForbiddenInformerReportsAndBacksOff(t *testing.T) {
	env := sharedEnv(t)
	admin := env.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := testenv.Namespace(t, admin)
	_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "list-configmaps", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}},
	}
	_, err = admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "list-configmaps", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: itUserListOnly}},
	}
	_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)

	for _, tc := range []struct {
		user       string
		wantSynced bool
	}{{itUserListOnly, true}, {itUserNobody, false}} {
		t.Run(tc.user, func(t *testing.T) {
			var counter itRequestCounter
			cfg := counter.wrap(env.APIServer(0).ConfigForToken(env.Token(tc.user)))
			cs := kubernetes.NewForConfigOrDie(cfg)
			lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return cs.CoreV1().ConfigMaps(ns).List(ctx, o)
				},
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					return cs.CoreV1().ConfigMaps(ns).Watch(ctx, o)
				},
			}, cs)
			informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
			// report is one 403 the watch error handler received: when, and how many
			// requests the informer had made by then. The Reflector calls the handler before
			// it starts the delay after the failure.
			type report struct {
				at       time.Time
				requests int64
			}
			var (
				mu        sync.Mutex
				forbidden []error
				reports   []report
				others    []error
			)
			require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
				mu.Lock()
				defer mu.Unlock()
				if apierrors.IsForbidden(err) {
					forbidden = append(forbidden, err)
					reports = append(reports, report{at: time.Now(), requests: counter.list.Load() + counter.watch.Load() + counter.watchList.Load()})
				} else {
					others = append(others, err)
				}
			}))
			itRunInformer(t, informer)
			const attempts = 3
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(reports) >= attempts
			}, 2*time.Minute, 20*time.Millisecond, "fewer than %d 403s reached the watch error handler", attempts)

			// An attempt is one LIST and one WATCH (a streaming list first, where enabled): a
			// retry loop within an attempt makes more. Between two attempts the Reflector waits
			// its backoff delay, at least 0.8 s, then 1.6 s: a loop without backoff, or one
			// that does not double, reports sooner.
			mu.Lock()
			seen := append([]report(nil), reports[:attempts]...)
			mu.Unlock()
			minDelay := 800 * time.Millisecond
			var before int64
			for i, r := range seen {
				require.LessOrEqual(t, r.requests-before, int64(3), "requests in attempt %d: the informer retries within an attempt", i+1)
				before = r.requests
				if i > 0 {
					gap := r.at.Sub(seen[i-1].at)
					t.Logf("%s: attempt %d reported %v after attempt %d", tc.user, i+1, gap, i)
					require.GreaterOrEqual(t, gap, minDelay, "attempt %d came %v after the one before: the informer retries without backing off", i+1, gap)
					minDelay *= 2
				}
			}

			require.Equal(t, tc.wantSynced, informer.HasSynced())
			if tc.wantSynced {
				require.Len(t, informer.GetStore().List(), 1)
			} else {
				// The sync diagnostics name the forbidden resource and verb instead of
				// reporting a bare timeout, and never the token.
				sctx, scancel := context.WithTimeout(context.Background(), time.Second)
				res := cache.WaitForCacheSyncWithContext(sctx, informer)
				scancel()
				require.Error(t, res.AsError())
				require.True(t, apierrors.IsForbidden(res.Err), "not a 403: %v", res.Err)
				require.Regexp(t, `cannot (list|watch) resource "configmaps"`, res.AsError().Error())
				require.NotContains(t, res.AsError().Error(), env.Token(tc.user))
			}
			mu.Lock()
			defer mu.Unlock()
			require.Contains(t, forbidden[0].Error(), "configmaps")
			require.Empty(t, others, "errors other than 403: %v", others)
		})
	}
}
