package bench

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientdynamic "k8s.io/client-go/dynamic"
	clientdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/projection"
)

// BenchProjection is the benchmarks' fixed projection: what a
// controller of pods placed on nodes reads. Identity fields are kept by
// every projection.
var BenchProjection = projection.MustNew(
	"metadata.labels", "metadata.ownerReferences",
	"spec.nodeName",
	"status.phase", "status.conditions",
)

// BenchmarkProjection is the initial sync of NewPod pods over an httptest
// server (PodServer, in the parent process), each side in its own child
// process through a real clientset on its default content type:
// kinformer's informer with BenchProjection (informers.WithProjection)
// against client-go's informer with a managedFields-stripping transform
// (client-go's best; it cannot skip fields before decoding). Rows:
//
//   - typed: the factories' pod informers; both read protobuf (50,000 pods
//     with KINFORMER_BENCH_FULL=1, 10,000 otherwise);
//   - dynamic: the dynamic factories' informers of pods, which read JSON
//     into unstructured objects, the path of every custom resource
//     (20,000 pods; 5,000).
//
// Figures: sync-ms, peaklive-MB, retained-MB and allocs/pod as in
// BenchmarkHTTP, B/pod (retained heap per cached pod) and cpu-us/pod (the
// child's user and system CPU time from Run to the last handler call, per
// pod). The real API server's row is BenchmarkAPIServer's projection row.
func BenchmarkProjection(b *testing.B) {
	for _, tc := range []struct {
		name    string
		pods    int
		dynamic bool
	}{
		{"typed", sizeFor(10000, 50000), false},
		{"dynamic", sizeFor(5000, 20000), true},
	} {
		b.Run(tc.name+"/"+paramName("pods", tc.pods), func(b *testing.B) {
			srv, err := NewPodServer(tc.pods)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			samples := figureSamples{}
			spec := childSpec{Scenario: childClientset, Pods: tc.pods, URL: srv.URL(), Projection: true, Dynamic: tc.dynamic}
			for range b.N {
				runPairInChildren(b, spec, []string{SideKinformer, SideClientGo}, samples)
			}
			samples.report(b)
		})
	}
}

// buildProjectionSide builds side's informer of the projection rows over
// cfg and cs: kinformer's with BenchProjection, client-go's with
// stripManagedFields, from the typed factories or (s.Dynamic) the dynamic
// ones.
func buildProjectionSide(s childSpec, cfg *rest.Config, cs kubernetes.Interface, h *countingHandler) (informerUnderTest, error) {
	if !s.Dynamic {
		switch s.Side {
		case SideKinformer:
			inf := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithProjection(&v1.Pod{}, BenchProjection)).Core().V1().Pods().Informer()
			if _, err := inf.AddEventHandler(h); err != nil {
				return informerUnderTest{}, err
			}
			return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
		case SideClientGo:
			inf := clientinformers.NewSharedInformerFactoryWithOptions(cs, 0, clientinformers.WithTransform(stripManagedFields)).Core().V1().Pods().Informer()
			if _, err := inf.AddEventHandler(h); err != nil {
				return informerUnderTest{}, err
			}
			return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
		}
		return informerUnderTest{}, fmt.Errorf("no side %q in the projection rows", s.Side)
	}
	dyn, err := clientdynamic.NewForConfig(cfg)
	if err != nil {
		return informerUnderTest{}, err
	}
	switch s.Side {
	case SideKinformer:
		inf := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(dyn, 0,
			dynamicinformer.WithProjection(podsGVR, BenchProjection, cfg)).ForResource(podsGVR).Informer()
		if _, err := inf.AddEventHandler(h); err != nil {
			return informerUnderTest{}, err
		}
		return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
	case SideClientGo:
		inf := clientdynamicinformer.NewDynamicSharedInformerFactory(dyn, 0).ForResource(podsGVR).Informer()
		if err := inf.SetTransform(stripUnstructuredManagedFields); err != nil {
			return informerUnderTest{}, err
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return informerUnderTest{}, err
		}
		return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
	}
	return informerUnderTest{}, fmt.Errorf("no side %q in the projection rows", s.Side)
}

// stripUnstructuredManagedFields is stripManagedFields for unstructured
// objects.
func stripUnstructuredManagedFields(obj interface{}) (interface{}, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	return obj, nil
}

// processCPU returns the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
