package soak

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	fp "github.com/kinformer/kinformer/internal/faultproxy"
	"github.com/kinformer/kinformer/internal/testenv"
	corelisters "github.com/kinformer/kinformer/listers/core/v1"
)

const readerUser = "reader"

// undecodable is what the watch error handler hears of a frame the client cannot decode
// (client-go's watch decoder turns it into an ERROR event).
const undecodable = "unable to decode an event from the watch stream"

// TestCredentialsNeverLogged runs informers through the fault proxy with bearer tokens
// while the proxy makes them fail in every way it can (410, 429, 500, 503, cut and
// black-holed watches, garbage, bad events) and the server refuses some of them (403 for
// a user without rights, 401 for a wrong token). It captures all klog output, the
// global logger and the contextual one, and every error the watch error handlers and the
// factory's SyncResult get, and checks that no token appears in any of them.
func TestCredentialsNeverLogged(t *testing.T) {
	if !testenv.Available(t) {
		return
	}
	env := testenv.Start(t, testenv.Options{Users: []string{readerUser}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	admin := env.Clientset()
	const ns = "credentials"
	// Each fault kind meets informers of their own, in a namespace of their own, started
	// just before it: a fault then meets a reflector that has not failed before, so that it
	// fires at the reflector's first reconnect instead of behind a backoff that every earlier
	// failure lengthened (up to 30 s).
	kinds := []fp.Fault{
		{Kind: fp.Garbage, AfterFrames: 1}, {Kind: fp.NoObject, AfterFrames: 1}, {Kind: fp.WrongType, AfterFrames: 1},
		{Kind: fp.BookmarkNoRV, AfterFrames: 1},
		{Kind: fp.Gone}, {Kind: fp.InternalError}, {Kind: fp.ServiceUnavailable}, {Kind: fp.TooManyRequests, RetryAfterSeconds: 1},
		{Kind: fp.CutFrame, AfterFrames: 1},
		{Kind: fp.BlackHole, SendHeaders: true, Hold: time.Second}, {Kind: fp.CloseConn, AfterFrames: 1},
	}
	kindNS := func(i int) string { return fmt.Sprintf("%s-%d", ns, i) }
	for _, n := range append([]string{ns}, func() (out []string) {
		for i := range kinds {
			out = append(out, kindNS(i))
		}
		return out
	}()...) {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		require.NoError(t, err)
		for i := 0; i < 20; i++ {
			_, err := admin.CoreV1().ConfigMaps(n).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		_, err = admin.RbacV1().Roles(n).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = admin.RbacV1().RoleBindings(n).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: readerUser}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	adminToken := env.Config().BearerToken
	readerToken := env.Token(readerUser)
	const wrongToken = "wrong-token-0123456789abcdef0123456789abcdef"
	require.NotEmpty(t, adminToken)
	require.NotEmpty(t, readerToken)
	secrets := []string{adminToken, readerToken, wrongToken}

	// Every log line, from the global klog functions and from contextual loggers alike.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(10)))
	klog.SetLogger(logger)
	t.Cleanup(klog.ClearLogger)
	logCtx := klog.NewContext(ctx, logger)

	p, err := fp.New(env.Config(), fp.Options{Seed: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	var mu sync.Mutex
	var errs []string
	collect := func(what string, err error) {
		if err == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, fmt.Sprintf("%s: %v | %+v | %#v", what, err, err, err))
	}
	type run struct {
		name    string
		factory informers.SharedInformerFactory
		synced  bool // whether it must sync
	}
	var runs []run
	t.Cleanup(func() {
		for _, r := range runs {
			r.factory.Shutdown()
		}
	})
	// start starts one informer with token in namespace n, and waits for its cache to sync
	// when it must.
	start := func(name, token, n string, pods, synced bool) informers.SharedInformerFactory {
		cfg := env.Config()
		cfg.BearerToken = token
		cs := kubernetes.NewForConfigOrDie(p.ConfigFor(cfg))
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(n))
		var inf cache.SharedIndexInformer
		if pods {
			inf = f.Core().V1().Pods().Informer()
		} else {
			inf = f.Core().V1().ConfigMaps().Informer()
		}
		require.NoError(t, inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			collect(name, err)
		}))
		runs = append(runs, run{name: name, factory: f, synced: synced})
		f.StartWithContext(logCtx)
		if !synced {
			return f
		}
		sctx, scancel := context.WithTimeout(ctx, time.Minute)
		defer scancel()
		require.NoError(t, f.WaitForCacheSyncWithContext(sctx).AsError(), name)
		return f
	}
	start("reader-configmaps", readerToken, ns, false, true)
	start("admin-configmaps", adminToken, ns, false, true)
	start("reader-pods-forbidden", readerToken, ns, true, false)
	start("wrong-token", wrongToken, ns, false, false)

	// One fault kind after another, each on the plain watches (not the streaming initial
	// lists) of its own reader and admin informers, and on one of their LISTs. The informers'
	// watches are ended the way the server ends a watch at its timeout, so that each resumes
	// with a plain watch from its last resourceVersion, which meets the rule. (A cut stream
	// would be a decoding error, after which an informer relists; and a watch ended within a
	// second of its start without an event makes it relist too, so each watch delivers an
	// event first.) Writes go on until the fault has acted twice.
	notInitialList := func(info fp.RequestInfo) bool { return info.Query.Get("sendInitialEvents") != "true" }
	patch := func(n, name, label string, value int) {
		_, err := admin.CoreV1().ConfigMaps(n).Patch(ctx, name, "application/merge-patch+json",
			[]byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"%d"}}}`, label, value)), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	for i, f := range kinds {
		n := kindNS(i)
		var listers []corelisters.ConfigMapNamespaceLister
		for _, who := range []struct{ name, token string }{{"reader", readerToken}, {"admin", adminToken}} {
			fac := start(fmt.Sprintf("%s-configmaps-%d", who.name, i), who.token, n, false, true)
			listers = append(listers, fac.Core().V1().ConfigMaps().Lister().ConfigMaps(n))
		}
		// Until removed: a stream that ends before the fault's frame uses up no application.
		watchFault := p.Inject(fp.Rule{Match: fp.Match{Resource: "configmaps", Namespace: n, Verb: fp.Watch, Func: notInitialList}, Fault: f})
		p.Inject(fp.Rule{Match: fp.Match{Resource: "configmaps", Namespace: n, Verb: fp.List}, Fault: fp.Fault{Kind: fp.InternalError}, Times: 1})
		before := p.Counts()[f.Kind]
		began := time.Now()
		patch(n, "cm-0", "kick", i)
		require.Eventually(t, func() bool {
			for _, l := range listers {
				cm, err := l.Get("cm-0")
				if err != nil || cm.Labels["kick"] != strconv.Itoa(i) {
					return false
				}
			}
			return true
		}, time.Minute, 10*time.Millisecond, "fault %s: the informers never saw the write before their watches end", f.Kind)
		require.Equal(t, 2, p.EndActive(fp.Match{Resource: "configmaps", Namespace: n, Verb: fp.Watch}), "fault %s: open watches", f.Kind)
		// One write every 50 ms until the fault has acted twice.
		writes := time.NewTicker(50 * time.Millisecond)
		for j := 0; p.Counts()[f.Kind]-before < 2; j++ {
			patch(n, fmt.Sprintf("cm-%d", j%5), "i", j)
			select {
			case <-writes.C:
			case <-ctx.Done():
				t.Fatalf("fault %s acted %d times of 2 (on %d watches) in namespace %s before the test's deadline", f.Kind, p.Counts()[f.Kind]-before, watchFault.Fired(), n)
			}
		}
		writes.Stop()
		watchFault.Remove()
		t.Logf("fault %s acted twice after %v (%d watches met it)", f.Kind, time.Since(began).Round(time.Millisecond), watchFault.Fired())
	}
	// The capture check below needs the undecodable frame's error to have reached a
	// handler; keep writing until it has.
	require.Eventually(t, func() bool {
		_, err := admin.CoreV1().ConfigMaps(ns).Patch(ctx, "cm-0", "application/merge-patch+json",
			[]byte(fmt.Sprintf(`{"metadata":{"labels":{"t":"%d"}}}`, time.Now().UnixNano())), metav1.PatchOptions{})
		if err != nil {
			t.Logf("patch: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(errs, "\n"), undecodable)
	}, 2*time.Minute, 250*time.Millisecond, "the undecodable frame's error never reached the error handler")
	p.Clear()

	// SyncResults of the factories that cannot sync carry their errors.
	for _, r := range runs {
		if r.synced {
			continue
		}
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		res := r.factory.WaitForCacheSyncWithContext(sctx)
		scancel()
		require.Error(t, res.AsError(), r.name)
		collect(r.name+" SyncResult", res.AsError())
		collect(r.name+" SyncResult value", fmt.Errorf("%+v %#v", res, res))
	}

	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	mu.Lock()
	allErrs := strings.Join(errs, "\n")
	mu.Unlock()
	// The capture works: the failures it must have seen are there.
	require.Contains(t, allErrs, "forbidden", "no 403 reached the error handler")
	require.Contains(t, allErrs, "Unauthorized", "no 401 reached the error handler")
	require.Contains(t, allErrs, undecodable, "the undecodable frame's error never reached the error handler")
	// Events the reflector cannot store are logged with client-go's messages and skipped.
	require.Contains(t, logs, "Unexpected watch event object type", "the logs were not captured")
	require.Contains(t, logs, "Unable to understand watch event", "the logs were not captured")
	require.NotEmpty(t, p.Counts())
	for _, secret := range secrets {
		require.NotContains(t, logs, secret, "a bearer token appears in the logs")
		require.NotContains(t, allErrs, secret, "a bearer token appears in an error")
		// Also no recognisable part of it.
		require.NotContains(t, logs, secret[:16])
		require.NotContains(t, allErrs, secret[:16])
	}
	t.Logf("checked %d bytes of logs and %d errors; faults: %v", len(logs), len(errs), p.Counts())
}
