package controllerruntime_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kinformer/kinformer/internal/testenv"
)

// TestDeleteWhileTheWatchIsDownReachesTheReconcilerAsDelete stops the API
// server the manager watches through, deletes a pod through a second API
// server on the same etcd, and starts the first again. The restarted
// server's watch cache begins at the current revision, so the informer's
// watch cannot resume from where it stopped (410) and it relists: the pod is
// gone from the list, and the informer must report it deleted with its final
// state unknown.
func TestDeleteWhileTheWatchIsDownReachesTheReconcilerAsDelete(t *testing.T) {
	watched, other, ok := outageCluster(t)
	if !ok {
		return
	}
	cs := watched.Clientset()
	otherClient := other.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ns := testenv.Namespace(t, cs)
		mgr := newManager(t, watched.Config(), e, manager.Options{})
		r := newPodController(t, mgr, ns)
		startManager(t, mgr)

		key := types.NamespacedName{Namespace: ns, Name: "doomed"}
		createPod(t, cs, newPod(ns, key.Name, nil))
		r.waitForView(t, key, "created", func(v podView) bool { return v.found })

		watched.Stop()
		if err := otherClient.CoreV1().Pods(ns).Delete(context.Background(), key.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete through the second API server: %v", err)
		}
		if err := watched.Start(); err != nil {
			t.Fatalf("restart the watched API server: %v", err)
		}

		r.waitForView(t, key, "deleted", func(v podView) bool { return !v.found })
		deletes := r.deletesOf(key)
		if len(deletes) != 1 || !deletes[0].DeleteStateUnknown {
			t.Fatalf("delete events of %s: %+v, want one with its final state unknown", key, deletes)
		}
		if deletes[0].Object.GetName() != key.Name {
			t.Fatalf("the delete event carries %s, want the last known state of %s", deletes[0].Object.GetName(), key)
		}
	})
}

// outageCluster starts a cluster of its own for a test that stops an API
// server: etcd with two API servers on it, the one the test watches through
// and another to change the cluster while the first is down. Stopping a
// server has a short grace, because kube-apiserver lingers on SIGTERM while
// watches are open. ok is false when the server binaries are missing and the
// test was skipped.
func outageCluster(t *testing.T) (watched, other *testenv.APIServer, ok bool) {
	t.Helper()
	if !testenv.Available(t) {
		return nil, nil, false
	}
	env := testenv.Start(t, testenv.Options{StopGrace: time.Second})
	other, err := env.AddAPIServer()
	if err != nil {
		t.Fatalf("start a second API server: %v", err)
	}
	return env.APIServer(0), other, true
}
