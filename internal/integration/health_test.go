package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/health"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/faultproxy"
	"github.com/kinformer/kinformer/internal/testenv"
)

// TestStalenessRisesWhileWatchEventsAreHeldBack runs a configmap informer through the
// fault proxy, with a staleness probe every 500 ms, while a writer updates a configmap
// every 100 ms. While events flow, each probe's resourceVersion is reached by the next
// event and the staleness stays low. Then the proxy holds the informer's watch back (its
// watch is ended and the reopened one black-holed with a 200 and no events for 8 s): the
// probes go on, the cache does not reach their resourceVersions, and the staleness rises
// past 4 s. When the hold ends the watch reopens from the last resourceVersion, the held
// events arrive and the staleness falls back below 2 s. The probes are the LISTs with
// limit=1 and no resourceVersion the proxy sees.
func TestStalenessRisesWhileWatchEventsAreHeldBack(t *testing.T) {
	env := sharedEnv(t)
	admin := env.Clientset()
	ns := testenv.Namespace(t, admin)
	var probes atomic.Int64
	proxy, err := faultproxy.New(env.Config(), faultproxy.Options{
		OnRequest: func(info faultproxy.RequestInfo, _ *faultproxy.Fault) {
			if info.Verb == faultproxy.List && info.Resource == "configmaps" && info.Namespace == ns &&
				info.Query.Get("limit") == "1" && info.Query.Get("resourceVersion") == "" {
				probes.Add(1)
			}
		},
	})
	require.NoError(t, err)
	defer func() { _ = proxy.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ticker", Namespace: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	writerCtx, stopWriter := context.WithCancel(ctx)
	var writer sync.WaitGroup
	defer writer.Wait()
	defer stopWriter()
	writer.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-writerCtx.Done():
				return
			case <-tick.C:
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ticker", Namespace: ns}, Data: map[string]string{"n": strconv.Itoa(i)}}
			if _, err := admin.CoreV1().ConfigMaps(ns).Update(writerCtx, cm, metav1.UpdateOptions{}); err != nil && writerCtx.Err() == nil {
				t.Errorf("update: %v", err)
				return
			}
		}
	})

	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(proxy.Config()), 0,
		informers.WithNamespace(ns), informers.WithStalenessProbeInterval(500*time.Millisecond), informers.WithWatchIdleTimeout(-1))
	informer := factory.Core().V1().ConfigMaps().Informer()
	runCtx, stop := context.WithCancel(ctx)
	defer factory.Shutdown()
	defer stop()
	factory.StartWithContext(runCtx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(runCtx).AsError())
	staleness := func() time.Duration {
		st, ok := cache.GetInformerStatus(informer)
		require.True(t, ok)
		return st.Staleness(time.Now())
	}

	// Events flow: probes are made and reached, the staleness stays low.
	require.Eventually(t, func() bool { return probes.Load() >= 3 }, 30*time.Second, 10*time.Millisecond, "no staleness probes")
	require.Eventually(t, func() bool { return staleness() < 2*time.Second }, 30*time.Second, 10*time.Millisecond)
	st, _ := cache.GetInformerStatus(informer)
	assert.NotEmpty(t, st.ConfirmedResourceVersion)
	assert.Positive(t, st.StalenessProbes)

	// Hold the watch back: end it, and black-hole the one the informer opens next.
	const hold = 8 * time.Second
	watchOfNS := faultproxy.Match{Verb: faultproxy.Watch, Resource: "configmaps", Namespace: ns}
	hole := proxy.Inject(faultproxy.Rule{Match: watchOfNS, Fault: faultproxy.Fault{Kind: faultproxy.BlackHole, SendHeaders: true, Hold: hold}, Times: 1})
	defer hole.Remove()
	require.Equal(t, 1, proxy.EndActive(watchOfNS))
	select {
	case <-hole.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the informer did not reopen its watch")
	}
	heldAt := time.Now()
	require.Eventually(t, func() bool { return staleness() > 4*time.Second }, hold, 10*time.Millisecond,
		"the staleness did not rise while the watch was held back")
	probesHeld := probes.Load()

	// The hold ends, the watch reopens, the events flow again.
	require.Eventually(t, func() bool { return staleness() < 2*time.Second }, 30*time.Second, 10*time.Millisecond,
		"the staleness did not fall once the events flowed again")
	t.Logf("staleness fell %v after the hold began (hold %v); probes: %d before it ended, %d in all",
		time.Since(heldAt).Round(time.Millisecond), hold, probesHeld, probes.Load())
	assert.GreaterOrEqual(t, time.Since(heldAt), hold-time.Second, "fell before the events could flow")
}

// TestForbiddenTypeFailsReadiness runs a factory as a user RBAC allows to list and watch
// configmaps of a namespace but not secrets: the readiness handler answers 503 naming the
// secrets informer with reason forbidden after its first LIST was refused, while every
// later secrets request is held back by the client's transport (so no retry could have
// answered yet), and the configmap informer syncs and serves.
func TestForbiddenTypeFailsReadiness(t *testing.T) {
	env := sharedEnv(t)
	admin := env.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := testenv.Namespace(t, admin)
	_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}}},
	}
	_, err = admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: itUserNobody}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	release := make(chan struct{})
	gate := &secretsGate{release: release}
	cfg := rest.CopyConfig(env.APIServer(0).ConfigForToken(env.Token(itUserNobody)))
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return secretsGateRT{rt: rt, g: gate} }
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0, informers.WithNamespace(ns))
	configMaps := factory.Core().V1().ConfigMaps()
	cmInformer := configMaps.Informer()
	_ = factory.Core().V1().Secrets().Informer()
	ready, err := health.NewHandler(health.Policy{}, factory)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	defer factory.Shutdown()
	defer stop()
	defer close(release)
	factory.StartWithContext(runCtx)
	itWaitSynced(t, time.Minute, cmInformer.HasSynced)

	var body health.ProbeResult
	var code int
	require.Eventually(t, func() bool {
		rec := httptest.NewRecorder()
		ready.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		code = rec.Code
		body = health.ProbeResult{}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			return false
		}
		return code == http.StatusServiceUnavailable && len(body.Failed) == 1 && body.Failed[0].Reason == health.ReasonForbidden
	}, time.Minute, 10*time.Millisecond, "the probe never named the forbidden informer: %d %+v", code, body)
	assert.Equal(t, int64(1), gate.listsAnswered.Load(), "one secrets LIST answered (refused), no retry answered")
	f := body.Failed[0]
	assert.Equal(t, "secrets.v1", f.ID)
	assert.Equal(t, health.Failing, f.State)
	// An anonymous caller gets the reason, not the server's error text
	// (which names the user, the namespace and the missing permission).
	assert.Equal(t, "not synced: the last list or watch failed (forbidden)", f.Message)
	assert.NotContains(t, f.Message, itUserNobody)
	assert.NotContains(t, f.Message, env.Token(itUserNobody))

	// The handler's owner opts in to the detail.
	detailed, err := health.NewHandler(health.Policy{Detail: true}, factory)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	detailed.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var detail health.ProbeResult
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &detail))
	require.Len(t, detail.Failed, 1)
	assert.Contains(t, detail.Failed[0].Message, `cannot list resource "secrets"`)
	assert.NotContains(t, detail.Failed[0].Message, env.Token(itUserNobody))
	require.Len(t, body.Informers, 2)
	for _, h := range body.Informers {
		if h.ID == "configmaps.v1" {
			assert.Equal(t, health.Ready, h.State)
		}
	}
	got, err := configMaps.Lister().ConfigMaps(ns).Get("a")
	require.NoError(t, err)
	assert.Equal(t, "a", got.Name)
}

// secretsGate lets the first secrets LIST through and holds every later secrets request
// (LIST or watch) until release is closed or the request ends; secretsGateRT is the
// transport that applies it.
type secretsGate struct {
	release       <-chan struct{}
	listsAnswered atomic.Int64
}

type secretsGateRT struct {
	rt http.RoundTripper
	g  *secretsGate
}

func (r secretsGateRT) RoundTrip(req *http.Request) (*http.Response, error) {
	g := r.g
	if !strings.HasSuffix(req.URL.Path, "/secrets") {
		return r.rt.RoundTrip(req)
	}
	isList := req.Method == http.MethodGet && req.URL.Query().Get("watch") != "true"
	if g.listsAnswered.Load() > 0 {
		select {
		case <-g.release:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	resp, err := r.rt.RoundTrip(req)
	if isList {
		g.listsAnswered.Add(1)
	}
	return resp, err
}
