package democluster

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// podStore is a Store over a map, for comparing with the model.
type podStore map[string]*corev1.Pod

func (s podStore) ListKeys() []string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	return keys
}

func (s podStore) GetByKey(key string) (any, bool, error) {
	p, ok := s[key]
	return p, ok, nil
}

// listed returns the pods the fake clientset holds now.
func listed(t *testing.T, c *Cluster) podStore {
	t.Helper()
	list, err := c.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := podStore{}
	for i := range list.Items {
		p := &list.Items[i]
		s[p.Namespace+"/"+p.Name] = p
	}
	return s
}

// recordWrites records every write made to c's fake clientset as "verb namespace/name", and
// fails the test when an update leaves a pod as it was: Diff compares contents on the
// embedded cluster, so every write must change its pod.
func recordWrites(t *testing.T, c *Cluster) *[]string {
	t.Helper()
	fc := c.Client.(*fake.Clientset)
	var writes []string
	fc.PrependReactor("*", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "create":
			p := a.(clienttesting.CreateAction).GetObject().(*corev1.Pod)
			writes = append(writes, "create "+p.Namespace+"/"+p.Name)
		case "update":
			p := a.(clienttesting.UpdateAction).GetObject().(*corev1.Pod)
			writes = append(writes, "update "+p.Namespace+"/"+p.Name)
			old, err := fc.Tracker().Get(a.GetResource(), p.Namespace, p.Name)
			if err != nil {
				t.Errorf("update of %s/%s: %v", p.Namespace, p.Name, err)
			} else if equality.Semantic.DeepEqual(old, p) {
				t.Errorf("write %d leaves %s/%s unchanged", len(writes), p.Namespace, p.Name)
			}
		case "delete":
			a := a.(clienttesting.DeleteAction)
			writes = append(writes, "delete "+a.GetNamespace()+"/"+a.GetName())
		}
		return false, nil, nil
	})
	return &writes
}

// TestRunWithWrites checks that RunWith makes exactly the writes asked for, each one changing
// its pod, calls WaitCaughtUp before each and once after the last, and leaves a model that
// Diff finds equal to the clientset's pods.
func TestRunWithWrites(t *testing.T) {
	for _, seed := range []uint64{1, 2, 7} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := New(20, seed)
			writes := recordWrites(t, c)
			waits := 0
			err := c.RunWith(context.Background(), RunOptions{Rate: 1e5, Writes: 200, WaitCaughtUp: func(context.Context) error {
				if waits != len(*writes) {
					t.Errorf("WaitCaughtUp called for the %d-th time after %d writes", waits+1, len(*writes))
				}
				waits++
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if len(*writes) != 200 || waits != 201 {
				t.Errorf("%d writes and %d waits, want 200 and 201", len(*writes), waits)
			}
			s := listed(t, c)
			if d := c.Diff(s); d != "" {
				t.Errorf("Diff of the clientset's pods: %s", d)
			}
			var verbs [3]int
			for _, w := range *writes {
				verbs[slices.Index([]string{"create", "update", "delete"}, w[:6])]++
			}
			if verbs[0] == 0 || verbs[1] == 0 || verbs[2] == 0 {
				t.Errorf("creates, updates, deletes = %v: want some of each in 200 writes", verbs)
			}

			for key, p := range s {
				changed := p.DeepCopy()
				changed.Status.PodIP = "192.0.2.1"
				for name, store := range map[string]podStore{
					"missing": without(s, key),
					"extra":   with(s, "default/extra-99999", p),
					"changed": with(s, key, changed),
				} {
					if d := c.Diff(store); d == "" {
						t.Errorf("Diff of the clientset's pods with %s %s finds no difference", name, key)
					}
				}
				break
			}
		})
	}
}

func without(s podStore, key string) podStore {
	out := podStore{}
	for k, v := range s {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func with(s podStore, key string, p *corev1.Pod) podStore {
	out := without(s, key)
	out[key] = p
	return out
}

// TestSameSeedSameWrites checks that the writes depend on the seed alone.
func TestSameSeedSameWrites(t *testing.T) {
	run := func(seed uint64) []string {
		c := New(20, seed)
		writes := recordWrites(t, c)
		if err := c.RunWith(context.Background(), RunOptions{Rate: 1e5, Writes: 200}); err != nil {
			t.Fatal(err)
		}
		return *writes
	}
	a, b, other := run(3), run(3), run(4)
	if !slices.Equal(a, b) {
		t.Errorf("two runs with seed 3 differ:\n%v\n%v", a, b)
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 3 and 4 make the same writes")
	}
}
