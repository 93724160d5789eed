package listers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cgappsv1 "k8s.io/client-go/listers/apps/v1"
	cgappsv1beta1 "k8s.io/client-go/listers/apps/v1beta1"
	cgappsv1beta2 "k8s.io/client-go/listers/apps/v1beta2"
	cgbatchv1 "k8s.io/client-go/listers/batch/v1"
	cgcorev1 "k8s.io/client-go/listers/core/v1"
	cgextensionsv1beta1 "k8s.io/client-go/listers/extensions/v1beta1"
	cgpolicyv1 "k8s.io/client-go/listers/policy/v1"
	cgpolicyv1beta1 "k8s.io/client-go/listers/policy/v1beta1"
	cgcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	listersappsv1 "github.com/kinformer/kinformer/listers/apps/v1"
	listersappsv1beta1 "github.com/kinformer/kinformer/listers/apps/v1beta1"
	listersappsv1beta2 "github.com/kinformer/kinformer/listers/apps/v1beta2"
	listersbatchv1 "github.com/kinformer/kinformer/listers/batch/v1"
	listerscorev1 "github.com/kinformer/kinformer/listers/core/v1"
	listersextensionsv1beta1 "github.com/kinformer/kinformer/listers/extensions/v1beta1"
	listerspolicyv1 "github.com/kinformer/kinformer/listers/policy/v1"
	listerspolicyv1beta1 "github.com/kinformer/kinformer/listers/policy/v1beta1"
)

// selectorCase is one controller object of the expansion scenarios: its
// name, namespace and selector.
type selectorCase struct {
	name, namespace string
	selector        *metav1.LabelSelector
}

// selectorCases covers every selector shape the expansions treat
// differently.
var selectorCases = []selectorCase{
	{"match", "ns", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	{"match-expr", "ns", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}},
	{"other-namespace", "other", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	{"empty", "ns", &metav1.LabelSelector{}},
	{"nil", "ns", nil},
	{"invalid", "ns", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}},
	{"no-match", "ns", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
}

func caseMeta(c selectorCase) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: c.name, Namespace: c.namespace}
}

// subjectPods are the pods (and, as labels, ControllerRevisions) looked up.
var subjectPods = []struct {
	name      string
	namespace string
	labels    map[string]string
}{
	{"labelled", "ns", map[string]string{"app": "web"}},
	{"unlabelled", "ns", nil},
	{"lonely", "other", map[string]string{"app": "api"}},
	{"nobody-home", "empty", map[string]string{"app": "web"}},
}

// expansionCase is one expansion method run on our lister and client-go's
// over the same objects. Each func returns the names found or an error.
type expansionCase struct {
	name   string
	ours   func(idx cache.Indexer, meta metav1.ObjectMeta) ([]string, error)
	theirs func(idx cgcache.Indexer, meta metav1.ObjectMeta) ([]string, error)
	build  func(c selectorCase) interface{}
	// want maps subject name to the names expected from ours (nil: an error).
	want map[string][]string
}

func objectNames[T metav1.Object](items []T, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		out = append(out, it.GetName())
	}
	return out, nil
}

func podOf(meta metav1.ObjectMeta) *corev1.Pod { return &corev1.Pod{ObjectMeta: meta} }

func jobNames(items []batchv1.Job, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out, nil
}

// Expected results for the selector policies, per subject.
var (
	wantNonEmpty   = map[string][]string{"labelled": {"match", "match-expr"}, "unlabelled": nil, "lonely": nil, "nobody-home": nil}
	wantAllowEmpty = map[string][]string{"labelled": {"empty", "match", "match-expr"}, "unlabelled": nil, "lonely": nil, "nobody-home": nil}
	// PodDisruptionBudgets do not reject unlabelled pods: the empty selector
	// (policy/v1) still selects them.
	wantPDBv1      = map[string][]string{"labelled": {"empty", "match", "match-expr"}, "unlabelled": {"empty"}, "lonely": nil, "nobody-home": nil}
	wantReplicaMap = map[string][]string{"labelled": {"match"}, "unlabelled": nil, "lonely": nil, "nobody-home": nil}
)

var expansionCases = []expansionCase{
	{
		name: "apps/v1 GetPodDaemonSets",
		build: func(c selectorCase) interface{} {
			return &appsv1.DaemonSet{ObjectMeta: caseMeta(c), Spec: appsv1.DaemonSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1.NewDaemonSetLister(idx).GetPodDaemonSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1.NewDaemonSetLister(idx).GetPodDaemonSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1 GetHistoryDaemonSets",
		build: func(c selectorCase) interface{} {
			return &appsv1.DaemonSet{ObjectMeta: caseMeta(c), Spec: appsv1.DaemonSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1.NewDaemonSetLister(idx).GetHistoryDaemonSets(&appsv1.ControllerRevision{ObjectMeta: m}))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1.NewDaemonSetLister(idx).GetHistoryDaemonSets(&appsv1.ControllerRevision{ObjectMeta: m}))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1 GetPodReplicaSets",
		build: func(c selectorCase) interface{} {
			return &appsv1.ReplicaSet{ObjectMeta: caseMeta(c), Spec: appsv1.ReplicaSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1.NewReplicaSetLister(idx).GetPodReplicaSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1.NewReplicaSetLister(idx).GetPodReplicaSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1 GetPodStatefulSets",
		build: func(c selectorCase) interface{} {
			return &appsv1.StatefulSet{ObjectMeta: caseMeta(c), Spec: appsv1.StatefulSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1.NewStatefulSetLister(idx).GetPodStatefulSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1.NewStatefulSetLister(idx).GetPodStatefulSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1beta2 GetPodDaemonSets",
		build: func(c selectorCase) interface{} {
			return &appsv1beta2.DaemonSet{ObjectMeta: caseMeta(c), Spec: appsv1beta2.DaemonSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1beta2.NewDaemonSetLister(idx).GetPodDaemonSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1beta2.NewDaemonSetLister(idx).GetPodDaemonSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1beta2 GetHistoryDaemonSets",
		build: func(c selectorCase) interface{} {
			return &appsv1beta2.DaemonSet{ObjectMeta: caseMeta(c), Spec: appsv1beta2.DaemonSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1beta2.NewDaemonSetLister(idx).GetHistoryDaemonSets(&appsv1beta2.ControllerRevision{ObjectMeta: m}))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1beta2.NewDaemonSetLister(idx).GetHistoryDaemonSets(&appsv1beta2.ControllerRevision{ObjectMeta: m}))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1beta2 GetPodReplicaSets",
		build: func(c selectorCase) interface{} {
			return &appsv1beta2.ReplicaSet{ObjectMeta: caseMeta(c), Spec: appsv1beta2.ReplicaSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1beta2.NewReplicaSetLister(idx).GetPodReplicaSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1beta2.NewReplicaSetLister(idx).GetPodReplicaSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1beta2 GetPodStatefulSets",
		build: func(c selectorCase) interface{} {
			return &appsv1beta2.StatefulSet{ObjectMeta: caseMeta(c), Spec: appsv1beta2.StatefulSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1beta2.NewStatefulSetLister(idx).GetPodStatefulSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1beta2.NewStatefulSetLister(idx).GetPodStatefulSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "apps/v1beta1 GetPodStatefulSets",
		build: func(c selectorCase) interface{} {
			return &appsv1beta1.StatefulSet{ObjectMeta: caseMeta(c), Spec: appsv1beta1.StatefulSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersappsv1beta1.NewStatefulSetLister(idx).GetPodStatefulSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgappsv1beta1.NewStatefulSetLister(idx).GetPodStatefulSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "extensions/v1beta1 GetPodDaemonSets",
		build: func(c selectorCase) interface{} {
			return &extensionsv1beta1.DaemonSet{ObjectMeta: caseMeta(c), Spec: extensionsv1beta1.DaemonSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersextensionsv1beta1.NewDaemonSetLister(idx).GetPodDaemonSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgextensionsv1beta1.NewDaemonSetLister(idx).GetPodDaemonSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "extensions/v1beta1 GetHistoryDaemonSets",
		build: func(c selectorCase) interface{} {
			return &extensionsv1beta1.DaemonSet{ObjectMeta: caseMeta(c), Spec: extensionsv1beta1.DaemonSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersextensionsv1beta1.NewDaemonSetLister(idx).GetHistoryDaemonSets(&appsv1beta1.ControllerRevision{ObjectMeta: m}))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgextensionsv1beta1.NewDaemonSetLister(idx).GetHistoryDaemonSets(&appsv1beta1.ControllerRevision{ObjectMeta: m}))
		},
		want: wantNonEmpty,
	},
	{
		name: "extensions/v1beta1 GetPodReplicaSets",
		build: func(c selectorCase) interface{} {
			return &extensionsv1beta1.ReplicaSet{ObjectMeta: caseMeta(c), Spec: extensionsv1beta1.ReplicaSetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listersextensionsv1beta1.NewReplicaSetLister(idx).GetPodReplicaSets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgextensionsv1beta1.NewReplicaSetLister(idx).GetPodReplicaSets(podOf(m)))
		},
		want: wantNonEmpty,
	},
	{
		name: "batch/v1 GetPodJobs",
		build: func(c selectorCase) interface{} {
			return &batchv1.Job{ObjectMeta: caseMeta(c), Spec: batchv1.JobSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return jobNames(listersbatchv1.NewJobLister(idx).GetPodJobs(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return jobNames(cgbatchv1.NewJobLister(idx).GetPodJobs(podOf(m)))
		},
		want: wantAllowEmpty,
	},
	{
		name: "core/v1 GetPodControllers",
		build: func(c selectorCase) interface{} {
			rc := &corev1.ReplicationController{ObjectMeta: caseMeta(c)}
			if c.selector != nil {
				rc.Spec.Selector = c.selector.MatchLabels
			}
			return rc
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listerscorev1.NewReplicationControllerLister(idx).GetPodControllers(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgcorev1.NewReplicationControllerLister(idx).GetPodControllers(podOf(m)))
		},
		want: wantReplicaMap,
	},
	{
		name: "policy/v1 GetPodPodDisruptionBudgets",
		build: func(c selectorCase) interface{} {
			return &policyv1.PodDisruptionBudget{ObjectMeta: caseMeta(c), Spec: policyv1.PodDisruptionBudgetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listerspolicyv1.NewPodDisruptionBudgetLister(idx).GetPodPodDisruptionBudgets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgpolicyv1.NewPodDisruptionBudgetLister(idx).GetPodPodDisruptionBudgets(podOf(m)))
		},
		want: wantPDBv1,
	},
	{
		name: "policy/v1beta1 GetPodPodDisruptionBudgets",
		build: func(c selectorCase) interface{} {
			return &policyv1beta1.PodDisruptionBudget{ObjectMeta: caseMeta(c), Spec: policyv1beta1.PodDisruptionBudgetSpec{Selector: c.selector}}
		},
		ours: func(idx cache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(listerspolicyv1beta1.NewPodDisruptionBudgetLister(idx).GetPodPodDisruptionBudgets(podOf(m)))
		},
		theirs: func(idx cgcache.Indexer, m metav1.ObjectMeta) ([]string, error) {
			return objectNames(cgpolicyv1beta1.NewPodDisruptionBudgetLister(idx).GetPodPodDisruptionBudgets(podOf(m)))
		},
		want: wantNonEmpty,
	},
}

// TestEachListerExpansionMatchesClientGo runs every hand-written expansion
// method on the same objects through our listers and client-go's: the names
// found and the error texts must be equal, and match the expected selector
// policy.
func TestEachListerExpansionMatchesClientGo(t *testing.T) {
	for _, e := range expansionCases {
		t.Run(e.name, func(t *testing.T) {
			ours := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			theirs := cgcache.NewIndexer(cgcache.MetaNamespaceKeyFunc, cgcache.Indexers{cgcache.NamespaceIndex: cgcache.MetaNamespaceIndexFunc})
			for _, c := range selectorCases {
				obj := e.build(c)
				require.NoError(t, ours.Add(obj))
				require.NoError(t, theirs.Add(obj))
			}
			for _, s := range subjectPods {
				meta := metav1.ObjectMeta{Name: s.name, Namespace: s.namespace, Labels: s.labels}
				got, err := e.ours(ours, meta)
				gotCG, errCG := e.theirs(theirs, meta)
				want := e.want[s.name]
				if want == nil {
					require.Error(t, err, "subject %s: got %v", s.name, got)
					require.Error(t, errCG, "client-go, subject %s", s.name)
					assert.Equal(t, errCG.Error(), err.Error(), "subject %s", s.name)
					continue
				}
				require.NoError(t, err, "subject %s", s.name)
				require.NoError(t, errCG, "client-go, subject %s", s.name)
				assert.ElementsMatch(t, want, got, "subject %s", s.name)
				assert.ElementsMatch(t, gotCG, got, "subject %s vs client-go", s.name)
			}
		})
	}
}

// TestListerExpansionsRejectNilObjects checks that a nil pod or
// ControllerRevision is an error, not a panic (client-go panics).
func TestListerExpansionsRejectNilObjects(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	calls := map[string]func() error{
		"GetPodDaemonSets":     func() error { _, err := listersappsv1.NewDaemonSetLister(idx).GetPodDaemonSets(nil); return err },
		"GetHistoryDaemonSets": func() error { _, err := listersappsv1.NewDaemonSetLister(idx).GetHistoryDaemonSets(nil); return err },
		"GetPodReplicaSets":    func() error { _, err := listersappsv1.NewReplicaSetLister(idx).GetPodReplicaSets(nil); return err },
		"GetPodStatefulSets":   func() error { _, err := listersappsv1.NewStatefulSetLister(idx).GetPodStatefulSets(nil); return err },
		"GetPodJobs":           func() error { _, err := listersbatchv1.NewJobLister(idx).GetPodJobs(nil); return err },
		"GetPodControllers": func() error {
			_, err := listerscorev1.NewReplicationControllerLister(idx).GetPodControllers(nil)
			return err
		},
		"GetPodPodDisruptionBudgets": func() error {
			_, err := listerspolicyv1.NewPodDisruptionBudgetLister(idx).GetPodPodDisruptionBudgets(nil)
			return err
		},
	}
	for name, call := range calls {
		assert.Error(t, call(), name)
	}
}
