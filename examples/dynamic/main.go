// Command dynamic runs two informers over the same custom resource (widgets.example.com/v1):
// a dynamic informer, whose cache holds every object whole as *unstructured.Unstructured, and a
// metadata-only informer, whose cache holds only *metav1.PartialObjectMetadata. It reads an
// object through each one's lister and prints the live heap each cache costs per object,
// which is why a controller that needs only names, labels, owners or finalizers should use
// the metadata informer.
//
// It runs on client-go's fake dynamic and metadata clients, seeded with the same objects.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/kinformer/kinformer/cache"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
)

// widgets is the custom resource both informers watch.
var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func main() {
	objects := flag.Int("objects", 2000, "number of widgets in the fake cluster")
	duration := flag.Duration("duration", 30*time.Second, "give up if the caches have not synced within this long")
	flag.Parse()
	if flag.NArg() > 0 || *objects < 1 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "dynamic: need --objects >= 1, --duration > 0 and no arguments")
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	err := run(ctx, *objects, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dynamic:", err)
		os.Exit(1)
	}
}

// widget returns custom resource i, with a spec of a realistic size.
func widget(i int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"size":        int64(i % 7),
			"color":       []any{"red", "green", "blue"}[i%3],
			"description": strings.Repeat("a widget of the demo fleet; ", 8),
			"parts":       []any{map[string]any{"name": "axle", "count": int64(2)}, map[string]any{"name": "wheel", "count": int64(4)}},
		},
		"status": map[string]any{"phase": "Ready", "observedGeneration": int64(1)},
	}}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetNamespace([]string{"default", "shop"}[i%2])
	u.SetName(fmt.Sprintf("widget-%05d", i))
	u.SetLabels(map[string]string{"app": "fleet", "tier": []string{"front", "back"}[i%2]})
	u.SetAnnotations(map[string]string{"example.com/owner": "team-" + fmt.Sprint(i%5)})
	u.SetUID(types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)))
	return u
}

// run builds both fake clients and informers, measures, and returns once both informers
// have stopped.
func run(ctx context.Context, n int, out io.Writer) error {
	full := make([]k8sruntime.Object, 0, n)
	meta := make([]k8sruntime.Object, 0, n)
	for i := range n {
		u := widget(i)
		full = append(full, u)
		meta = append(meta, &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
			ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID(),
				Labels: u.GetLabels(), Annotations: u.GetAnnotations()},
		})
	}
	dynClient := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets: "WidgetList"}, full...)
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		return err
	}
	metaClient := metadatafake.NewSimpleMetadataClient(scheme, meta...)

	dynInformer := dynamicinformer.NewFilteredDynamicInformer(dynClient, widgets, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
	dynPerObject, err := heapPerObject(ctx, n, dynInformer.Informer())
	if err != nil {
		return fmt.Errorf("dynamic informer: %w", err)
	}
	obj, err := dynInformer.Lister().ByNamespace("shop").Get("widget-00001")
	if err != nil {
		return fmt.Errorf("dynamic lister: %w", err)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("dynamic lister returned %T", obj)
	}
	color, _, _ := unstructured.NestedString(u.Object, "spec", "color")
	fmt.Fprintf(out, "dynamic informer:  %d widgets cached as %T; shop/widget-00001 has spec.color=%s\n", n, obj, color)

	metaInformer := metadatainformer.NewFilteredMetadataInformer(metaClient, widgets, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
	metaPerObject, err := heapPerObject(ctx, n, metaInformer.Informer())
	if err != nil {
		return fmt.Errorf("metadata informer: %w", err)
	}
	obj, err = metaInformer.Lister().ByNamespace("shop").Get("widget-00001")
	if err != nil {
		return fmt.Errorf("metadata lister: %w", err)
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return fmt.Errorf("metadata lister returned %T", obj)
	}
	fmt.Fprintf(out, "metadata informer: %d widgets cached as %T; shop/widget-00001 has labels %v\n", n, obj, m.Labels)

	fmt.Fprintf(out, "live heap per cached widget: dynamic %.0f B, metadata-only %.0f B (%.0f%% of dynamic)\n",
		dynPerObject, metaPerObject, 100*metaPerObject/dynPerObject)
	return nil
}

// heapPerObject runs informer until its cache holds n objects and returns the growth of the
// live heap per object; the informer is stopped, and its goroutine waited for, before it
// returns.
func heapPerObject(ctx context.Context, n int, informer cache.SharedIndexInformer) (float64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(runCtx) })
	defer func() { cancel(); wg.Wait() }()
	if !cache.WaitForCacheSync(runCtx.Done(), informer.HasSynced) {
		return 0, fmt.Errorf("cache did not sync: %w", ctx.Err())
	}
	if got := len(informer.GetStore().ListKeys()); got != n {
		return 0, fmt.Errorf("cache holds %d objects, want %d", got, n)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(informer)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n), nil
}
