package cache

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache/internal/snapshot"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// setSnapshotTie ties informer's snapshot to tie (SnapshotScope and
// SnapshotProjection, through ConfigureInformer).
func setSnapshotTie(t *testing.T, informer SharedIndexInformer, tie snapshot.Tie) {
	t.Helper()
	require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
		o.SnapshotScope, o.SnapshotProjection = tie.Scope, tie.Projection
	}))
}

// checkSnapshotTie writes a snapshot of two pods with an informer tied to
// written, then runs an informer tied to read from it. Without wantError it
// must load the file without listing; with it, it must reject the file with
// a *SnapshotError containing wantError, list as usual, and rewrite the
// file under read when it stops.
func checkSnapshotTie(t *testing.T, written, read snapshot.Tie, wantError string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pods.snap")
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	srv.Create("a") // 1
	srv.Create("b") // 2
	first, rec, _ := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path})
	setSnapshotTie(t, first, written)
	stopFirst := runInformerUntil(t, first)
	rec.waitN(t, 2)
	require.Eventually(t, func() bool { _, watches := requestCounts(srv); return watches == 1 }, waitTimeout, time.Millisecond)
	stopFirst()
	srv.StopWatches()
	_, _, err := readPodSnapshot(t, path, written)
	require.NoError(t, err, "the first run wrote its snapshot, tied to its scope and projection")

	informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path})
	setSnapshotTie(t, informer, read)
	stop := runInformerUntil(t, informer)
	assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, rec.waitN(t, 2))
	lists, _ := requestCounts(srv)
	if wantError == "" {
		assert.Equal(t, 1, lists, "only the first run listed")
		assert.Empty(t, errs())
		return
	}
	assert.Equal(t, 2, lists, "a normal list follows the rejection")
	got := errs()
	require.NotEmpty(t, got)
	var serr *SnapshotError
	require.ErrorAs(t, got[0], &serr)
	assert.Equal(t, path, serr.Path)
	assert.Equal(t, "load", serr.Op)
	assert.Contains(t, serr.Error(), wantError)

	// On stop the file is rewritten under the new tie.
	stop()
	_, _, err = readPodSnapshot(t, path, read)
	require.NoError(t, err, "the file is rewritten under the informer's own scope and projection")
}

func TestSnapshotScopeDescribesTheInformersSelection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		namespace string
		tweak     func(*metav1.ListOptions)
		want      string
	}{
		{"unrestricted", "", nil, ""},
		{"tweak that selects nothing", "", func(o *metav1.ListOptions) { o.Limit = 10; o.TimeoutSeconds = new(int64) }, ""},
		{"namespace", "prod", nil, `namespace="prod" labelSelector="" fieldSelector=""`},
		{"label selector", "", func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }, `namespace="" labelSelector="app=web" fieldSelector=""`},
		{"both selectors and a namespace", "prod", func(o *metav1.ListOptions) {
			o.LabelSelector = "app=web"
			o.FieldSelector = "spec.nodeName=n1"
		}, `namespace="prod" labelSelector="app=web" fieldSelector="spec.nodeName=n1"`},
		{"quotes cannot be confused", "a\" labelSelector=\"x", nil, `namespace="a\" labelSelector=\"x" labelSelector="" fieldSelector=""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SnapshotScopeFor(tc.namespace, tc.tweak))
		})
	}
}

// TestSnapshotOfForeignScopeIsRejected: a snapshot written under one scope is
// rejected, with a *SnapshotError naming both scopes, by an informer of
// another scope, which lists as usual (and rewrites the file with its own
// scope on stop); an informer of the same scope loads it without listing.
func TestSnapshotOfForeignScopeIsRejected(t *testing.T) {
	webInProd := SnapshotScopeFor("prod", func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })
	for _, tc := range []struct {
		name      string
		scope     string
		wantError string
	}{
		{"same scope loads", webInProd, ""},
		{"other namespace", SnapshotScopeFor("dev", func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }),
			`snapshot holds namespace="prod" labelSelector="app=web" fieldSelector="", this informer selects namespace="dev" labelSelector="app=web" fieldSelector=""`},
		{"other label selector", SnapshotScopeFor("prod", func(o *metav1.ListOptions) { o.LabelSelector = "app=db" }),
			`this informer selects namespace="prod" labelSelector="app=db" fieldSelector=""`},
		{"other field selector", SnapshotScopeFor("prod", func(o *metav1.ListOptions) {
			o.LabelSelector = "app=web"
			o.FieldSelector = "spec.nodeName=n1"
		}), `fieldSelector="spec.nodeName=n1"`},
		{"unrestricted", "", `this informer selects all objects of the type (no namespace, no selectors)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSnapshotTie(t, snapshot.Tie{Scope: webInProd}, snapshot.Tie{Scope: tc.scope}, tc.wantError)
		})
	}
}

// TestSnapshotOfAnotherProjectionIsRejected: a snapshot written by an
// informer keeping the fields of one projection (SnapshotProjection) is
// loaded only by an informer of the same projection; full objects and other
// projections list instead, and the file is rewritten under theirs.
func TestSnapshotOfAnotherProjectionIsRejected(t *testing.T) {
	for _, tc := range []struct {
		name       string
		projection string
		wantError  string
	}{
		{"same projection loads", "aaaa", ""},
		{"another projection", "bbbb", "snapshot holds objects of projection aaaa, this informer keeps objects of projection bbbb"},
		{"full objects", "", "snapshot holds objects of projection aaaa, this informer keeps full objects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSnapshotTie(t, snapshot.Tie{Projection: "aaaa"}, snapshot.Tie{Projection: tc.projection}, tc.wantError)
		})
	}
}
