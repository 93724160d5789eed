package integration

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/testenv"
)

// mediaRecorder records, per request kind (list, watch, watchlist) of pod requests, the
// media types the real API server answered in.
type mediaRecorder struct {
	mu     sync.Mutex
	served map[string]map[string]int
}

func (r *mediaRecorder) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return mediaRoundTripper{rt: rt, r: r}
	}
	return cfg
}

func (r *mediaRecorder) snapshot() map[string]map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]map[string]int{}
	for k, m := range r.served {
		out[k] = map[string]int{}
		for media, n := range m {
			out[k][media] = n
		}
	}
	return out
}

type mediaRoundTripper struct {
	rt http.RoundTripper
	r  *mediaRecorder
}

func (t mediaRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/pods") || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	q := req.URL.Query()
	kind := "list"
	if q.Get("watch") == "true" {
		kind = "watch"
		if q.Get("sendInitialEvents") == "true" {
			kind = "watchlist"
		}
	}
	media, _, perr := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if perr != nil {
		media = resp.Header.Get("Content-Type")
	}
	t.r.mu.Lock()
	if t.r.served == nil {
		t.r.served = map[string]map[string]int{}
	}
	if t.r.served[kind] == nil {
		t.r.served[kind] = map[string]int{}
	}
	t.r.served[kind][media]++
	t.r.mu.Unlock()
	return resp, err
}

// TestFactoryGetsProtobufFromTheAPIServer runs the factory's pod informer over a clientset
// configured for JSON against the real kube-apiserver, with the streaming list and with the
// paged LIST: every pod request is answered in protobuf, the store equals a fresh LIST, and
// a label change made after the sync reaches the store through the protobuf watch.
func TestFactoryGetsProtobufFromTheAPIServer(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	itCreatePods(t, cs, ns, "wire", 300, map[string]string{"tier": "wire"})

	for _, mode := range []struct {
		name      string
		streaming bool
	}{{"streaming-list", true}, {"paged-list", false}} {
		t.Run(mode.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, mode.streaming)
			var rec mediaRecorder
			cfg := rec.wrap(env.Config())
			cfg.ContentType = "application/json"
			jsonCS := kubernetes.NewForConfigOrDie(cfg)

			factory := informers.NewSharedInformerFactoryWithOptions(jsonCS, 0, informers.WithNamespace(ns),
				informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "tier=wire" }))
			informer := factory.Core().V1().Pods().Informer()
			itStartFactory(t, factory)
			took := itWaitSynced(t, time.Minute, informer.HasSynced)
			itStoreMatchesServer(t, informer.GetStore(), itListPods(cs, ns), time.Minute)

			name := fmt.Sprintf("wire-%d", map[bool]int{true: 1, false: 2}[mode.streaming])
			patch := fmt.Sprintf(`{"metadata":{"labels":{"list-mode":%q}}}`, mode.name)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			require.NoError(t, err)
			itStoreMatchesServer(t, informer.GetStore(), itListPods(cs, ns), time.Minute)
			obj, ok, err := informer.GetStore().GetByKey(ns + "/" + name)
			require.NoError(t, err)
			require.True(t, ok)
			got, err := metaOf(obj)
			require.NoError(t, err)
			require.Equal(t, mode.name, got.GetLabels()["list-mode"])

			served := rec.snapshot()
			t.Logf("%s: synced in %v; media types served per request kind: %v", mode.name, took.Round(time.Millisecond), served)
			first := "list"
			if mode.streaming {
				first = "watchlist"
			}
			require.NotEmpty(t, served[first], "no %s request was answered", first)
			if !mode.streaming {
				// A streaming list goes on as the watch; a LIST is followed by one.
				require.NotEmpty(t, served["watch"], "no watch request was answered")
			}
			for kind, media := range served {
				for m := range media {
					require.Equal(t, "application/vnd.kubernetes.protobuf", m, "%s answered in %s", kind, m)
				}
			}
		})
	}
}
