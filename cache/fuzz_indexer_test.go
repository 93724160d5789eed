package cache

import (
	"fmt"
	"sort"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// labelIndex indexes pods by their app label; the value l3 is left out of
// the index, so that objects without an index value are covered.
func labelIndex(obj interface{}) ([]string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("labelIndex: %T is not a pod", obj)
	}
	if v := p.Labels["app"]; v != "" && v != "l3" {
		return []string{v}, nil
	}
	return nil, nil
}

// sortedString returns the strings sorted, with nil and empty alike.
func sortedString(s []string) string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return fmt.Sprint(c)
}

// FuzzIndexerOps decodes the input into add/update/delete/replace operations
// on four keys with increasing resourceVersions and changing labels, applies
// them to an Indexer and to a ThreadSafeStore, both with a namespace index
// and a label index, and after every operation checks contents, lookups,
// index members, index keys and the listed index values against a map model.
func FuzzIndexerOps(f *testing.F) {
	f.Add([]byte{0, 8, 16, 24, 1, 2, 3, 0x0f})
	f.Add([]byte{0x20, 0x40, 0x60, 0x21, 0x41, 0x62, 3, 0x00})
	f.Add([]byte{0, 0x61, 0x01, 0x22, 0x3b, 0xa5, 3, 0xff, 2, 10, 18, 26})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 300 {
			return
		}
		indexers := Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "app": labelIndex}
		idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
		tss := NewThreadSafeStore(indexers, Indices{})
		model := map[string]*v1.Pod{}
		keyOf := func(p *v1.Pod) string {
			if p.Namespace == "" {
				return p.Name
			}
			return p.Namespace + "/" + p.Name
		}
		rv := 0
		var trace []string
		for i := 0; i < len(data); i++ {
			b := data[i]
			k := int(b>>3) % len(fuzzKeys)
			rv++
			p := fuzzPod(k, rv, (b>>5)&3)
			key := keyOf(p)
			var err1, err2 error
			switch b % 4 {
			case 0:
				trace = append(trace, "add "+key+"@"+strconv.Itoa(rv)+" "+p.Labels["app"])
				err1, model[key] = idx.Add(p), p
				tss.Add(key, p)
			case 1:
				trace = append(trace, "update "+key+"@"+strconv.Itoa(rv)+" "+p.Labels["app"])
				err1, model[key] = idx.Update(p), p
				tss.Update(key, p)
			case 2:
				trace = append(trace, "delete "+key)
				err1 = idx.Delete(p)
				delete(model, key)
				tss.Delete(key)
			case 3:
				var mask byte
				if i+1 < len(data) {
					i++
					mask = data[i]
				}
				var list []interface{}
				items := map[string]interface{}{}
				model = map[string]*v1.Pod{}
				for j := range fuzzKeys {
					if mask&(1<<j) != 0 {
						q := fuzzPod(j, rv, (mask>>(4+j%2*2))&3)
						list = append(list, q)
						items[keyOf(q)] = q
						model[keyOf(q)] = q
					}
				}
				trace = append(trace, fmt.Sprintf("replace %d", len(list)))
				err1 = idx.Replace(list, strconv.Itoa(rv))
				tss.Replace(items, strconv.Itoa(rv))
			}
			if err1 != nil || err2 != nil {
				t.Fatalf("after %v: error %v", trace, err1)
			}
			var wantKeys []string
			wantByNS := map[string][]string{}
			wantByApp := map[string][]string{}
			for key, p := range model {
				wantKeys = append(wantKeys, key)
				wantByNS[p.Namespace] = append(wantByNS[p.Namespace], key)
				if vals, _ := labelIndex(p); len(vals) == 1 {
					wantByApp[vals[0]] = append(wantByApp[vals[0]], key)
				}
			}
			for _, s := range []struct {
				name string
				keys []string
				list []interface{}
				get  func(string) (interface{}, bool, error)
				by   func(string, string) ([]interface{}, error)
				ik   func(string, string) ([]string, error)
				lv   func(string) []string
			}{
				{"Indexer", idx.ListKeys(), idx.List(), idx.GetByKey, idx.ByIndex, idx.IndexKeys, idx.ListIndexFuncValues},
				{"ThreadSafeStore", tss.ListKeys(), tss.List(), func(k string) (interface{}, bool, error) { o, ok := tss.Get(k); return o, ok, nil }, tss.ByIndex, tss.IndexKeys, tss.ListIndexFuncValues},
			} {
				if sortedString(s.keys) != sortedString(wantKeys) {
					t.Fatalf("%s after %v: keys %v; want %v", s.name, trace, s.keys, wantKeys)
				}
				var wantList []interface{}
				for _, p := range model {
					wantList = append(wantList, p)
				}
				if fmt.Sprint(storeState(s.list)) != fmt.Sprint(storeState(wantList)) {
					t.Fatalf("%s after %v: list %v; want %v", s.name, trace, storeState(s.list), storeState(wantList))
				}
				for j := range fuzzKeys {
					key := keyOf(fuzzPod(j, 0, 0))
					obj, ok, err := s.get(key)
					want, wok := model[key]
					if err != nil || ok != wok || (ok && objSum(obj) != objSum(want)) {
						t.Fatalf("%s after %v: get %q = %v, %v, %v; want %v, %v", s.name, trace, key, objSum(obj), ok, err, objSum(want), wok)
					}
				}
				for _, ix := range []struct {
					name string
					want map[string][]string
					vals []string
				}{
					{NamespaceIndex, wantByNS, []string{"a", "b", "", "none"}},
					{"app", wantByApp, []string{"l0", "l1", "l2", "l3", "none"}},
				} {
					var wantVals []string
					for v := range ix.want {
						wantVals = append(wantVals, v)
					}
					if got := s.lv(ix.name); sortedString(got) != sortedString(wantVals) {
						t.Fatalf("%s after %v: ListIndexFuncValues(%s) = %q; want %q", s.name, trace, ix.name, got, wantVals)
					}
					for _, v := range ix.vals {
						objs, err := s.by(ix.name, v)
						if err != nil {
							t.Fatalf("%s after %v: ByIndex(%s, %q): %v", s.name, trace, ix.name, v, err)
						}
						var got []string
						for _, o := range objs {
							got = append(got, keyOf(o.(*v1.Pod)))
						}
						if sortedString(got) != sortedString(ix.want[v]) {
							t.Fatalf("%s after %v: ByIndex(%s, %q) = %v; want %v", s.name, trace, ix.name, v, got, ix.want[v])
						}
						keys, err := s.ik(ix.name, v)
						if err != nil || sortedString(keys) != sortedString(ix.want[v]) {
							t.Fatalf("%s after %v: IndexKeys(%s, %q) = %v, %v; want %v", s.name, trace, ix.name, v, keys, err, ix.want[v])
						}
					}
				}
				if _, err := s.by("no-such-index", "a"); err == nil {
					t.Fatalf("%s: ByIndex on an unknown index gave no error", s.name)
				}
			}
		}
	})
}
