package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
)

type namedHandler struct{}

func (namedHandler) OnAdd(interface{}, bool)           {}
func (namedHandler) OnUpdate(interface{}, interface{}) {}
func (namedHandler) OnDelete(interface{})              {}

func TestResourceEventHandlerFuncsSkipNil(t *testing.T) {
	var got []string
	full := ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { got = append(got, "add "+describeObj(obj)) },
		UpdateFunc: func(o, n interface{}) { got = append(got, "update "+describeObj(n)) },
		DeleteFunc: func(obj interface{}) { got = append(got, "delete "+describeObj(obj)) },
	}
	detailed := ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj interface{}, initial bool) { got = append(got, "dadd "+describeObj(obj)) },
		UpdateFunc: full.UpdateFunc,
		DeleteFunc: full.DeleteFunc,
	}
	p := newPod("a", "1")
	for _, h := range []ResourceEventHandler{full, detailed, ResourceEventHandlerFuncs{}, ResourceEventHandlerDetailedFuncs{}} {
		h.OnAdd(p, true)
		h.OnUpdate(p, p)
		h.OnDelete(p)
	}
	assert.Equal(t, []string{
		"add ns/a@1", "update ns/a@1", "delete ns/a@1",
		"dadd ns/a@1", "update ns/a@1", "delete ns/a@1",
	}, got)
}

func TestFilteringResourceEventHandlerTransitions(t *testing.T) {
	pass, fail := newPod("pass", "1"), newPod("fail", "1")
	filter := func(obj interface{}) bool {
		if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		return obj.(*v1.Pod).Name == "pass"
	}
	cases := []struct {
		name string
		do   func(h ResourceEventHandler)
		want []string
	}{
		{"add passing", func(h ResourceEventHandler) { h.OnAdd(pass, true) }, []string{"add ns/pass@1 initial=true"}},
		{"add failing", func(h ResourceEventHandler) { h.OnAdd(fail, true) }, nil},
		{"update passing to passing", func(h ResourceEventHandler) { h.OnUpdate(pass, pass) }, []string{"update ns/pass@1 -> ns/pass@1"}},
		{"update failing to passing is add", func(h ResourceEventHandler) { h.OnUpdate(fail, pass) }, []string{"add ns/pass@1 initial=false"}},
		{"update passing to failing is delete", func(h ResourceEventHandler) { h.OnUpdate(pass, fail) }, []string{"delete ns/pass@1"}},
		{"update failing to failing", func(h ResourceEventHandler) { h.OnUpdate(fail, fail) }, nil},
		{"delete passing", func(h ResourceEventHandler) { h.OnDelete(pass) }, []string{"delete ns/pass@1"}},
		{"delete passing tombstone", func(h ResourceEventHandler) {
			h.OnDelete(DeletedFinalStateUnknown{Key: "ns/pass", Obj: pass})
		}, []string{"delete tombstone(ns/pass@1)"}},
		{"delete failing", func(h ResourceEventHandler) { h.OnDelete(fail) }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &eventRecorder{}
			tc.do(FilteringResourceEventHandler{FilterFunc: filter, Handler: rec})
			assert.Equal(t, tc.want, rec.get())
		})
	}
	t.Run("nil filter accepts, nil handler drops", func(t *testing.T) {
		rec := &eventRecorder{}
		FilteringResourceEventHandler{Handler: rec}.OnUpdate(fail, fail)
		assert.Len(t, rec.get(), 1)
		assert.NotPanics(t, func() {
			h := FilteringResourceEventHandler{FilterFunc: filter}
			h.OnAdd(pass, false)
			h.OnUpdate(pass, fail)
			h.OnDelete(pass)
		})
	})
}

func TestTypedFilteringResourceEventHandlerTransitions(t *testing.T) {
	pass, fail := newPod("pass", "1"), newPod("fail", "1")
	var got []string
	inner := TypedResourceEventHandlerDetailedFuncs[*v1.Pod]{
		AddFunc:    func(p *v1.Pod, initial bool) { got = append(got, "add "+describeObj(p)) },
		UpdateFunc: func(o, n *v1.Pod) { got = append(got, "update "+describeObj(n)) },
		DeleteFunc: func(d DeletedObject[*v1.Pod]) { got = append(got, "delete "+d.GetKey()) },
	}
	h := TypedFilteringResourceEventHandler[*v1.Pod]{
		FilterFunc: func(p *v1.Pod) bool { return p != nil && p.Name == "pass" },
		Handler:    inner,
	}
	h.OnAdd(pass, false)
	h.OnAdd(fail, false)
	h.OnUpdate(pass, pass)
	h.OnUpdate(fail, pass)
	h.OnUpdate(pass, fail)
	h.OnUpdate(fail, fail)
	h.OnDelete(DeletedObject[*v1.Pod]{OptionalObj: pass})
	h.OnDelete(DeletedObject[*v1.Pod]{FinalStateUnknown: &DeletedFinalStateUnknown{Key: "ns/pass"}})
	assert.Equal(t, []string{"add ns/pass@1", "update ns/pass@1", "add ns/pass@1", "delete ns/pass", "delete ns/pass"}, got)
	assert.NotPanics(t, func() {
		TypedFilteringResourceEventHandler[*v1.Pod]{}.OnUpdate(pass, fail)
	})
}

func TestDeletedObjectAccessors(t *testing.T) {
	cases := []struct {
		name          string
		d             DeletedObject[*v1.Pod]
		wantKey       string
		wantName      ObjectName
		wantNamespace string
	}{
		{"object", DeletedObject[*v1.Pod]{OptionalObj: newPod("a", "1")}, "ns/a", ObjectName{Namespace: "ns", Name: "a"}, "ns"},
		{"cluster scoped", DeletedObject[*v1.Pod]{OptionalObj: &v1.Pod{}}, "", ObjectName{}, ""},
		{"nothing", DeletedObject[*v1.Pod]{}, "", ObjectName{}, ""},
		{"tombstone", DeletedObject[*v1.Pod]{FinalStateUnknown: &DeletedFinalStateUnknown{Key: "x/y/z"}}, "x/y/z", ObjectName{Namespace: "x", Name: "y/z"}, "x"},
		{"tombstone without namespace", DeletedObject[*v1.Pod]{FinalStateUnknown: &DeletedFinalStateUnknown{Key: "n"}}, "n", ObjectName{Name: "n"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wantKey, tc.d.GetKey())
			assert.Equal(t, tc.wantName, tc.d.GetObjectName())
			assert.Equal(t, tc.wantName.Name, tc.d.GetName())
			assert.Equal(t, tc.wantNamespace, tc.d.GetNamespace())
		})
	}
	named := DeletedObject[*v1.Pod]{OptionalObj: &v1.Pod{}}
	named.OptionalObj.Name = "cluster"
	assert.Equal(t, "cluster", named.GetKey())
}

func TestNameForHandler(t *testing.T) {
	empty := ResourceEventHandlerFuncs{}
	cases := []struct {
		name    string
		handler ResourceEventHandler
		want    string
	}{
		{"mixture", ResourceEventHandlerFuncs{UpdateFunc: empty.OnUpdate, DeleteFunc: func(interface{}) {}},
			"github.com/kinformer/kinformer/cache.ResourceEventHandlerFuncs.OnUpdate-fm+github.com/kinformer/kinformer/cache.TestNameForHandler.func1"},
		{"add", ResourceEventHandlerFuncs{AddFunc: func(interface{}) {}}, "github.com/kinformer/kinformer/cache.TestNameForHandler"},
		{"pointer to funcs", &ResourceEventHandlerFuncs{AddFunc: func(interface{}) {}}, "github.com/kinformer/kinformer/cache.TestNameForHandler"},
		{"detailed", ResourceEventHandlerDetailedFuncs{DeleteFunc: func(interface{}) {}}, "github.com/kinformer/kinformer/cache.TestNameForHandler"},
		{"struct", namedHandler{}, "github.com/kinformer/kinformer/cache.namedHandler"},
		{"pointer to struct", &namedHandler{}, "github.com/kinformer/kinformer/cache.namedHandler"},
		{"nil", nil, "<nil>"},
		{"nil pointer", (*namedHandler)(nil), "*cache.namedHandler"},
		{"typed funcs", &typedResourceEventHandler[*v1.Pod]{handler: TypedResourceEventHandlerFuncs[*v1.Pod]{AddFunc: func(*v1.Pod) {}}},
			"github.com/kinformer/kinformer/cache.TestNameForHandler"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, nameForHandler(tc.handler))
		})
	}
}
