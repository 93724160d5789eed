package cache

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcache "k8s.io/client-go/tools/cache"
)

// modelSplit is the model of SplitMetaNamespaceKey (client-go's contract):
// a key is "name" or "namespace/name", either part possibly empty; a key with
// more than one "/" is malformed.
func modelSplit(key string) (ns, name string, ok bool) {
	switch strings.Count(key, "/") {
	case 0:
		return "", key, true
	case 1:
		i := strings.IndexByte(key, '/')
		return key[:i], key[i+1:], true
	default:
		return "", "", false
	}
}

// FuzzKeyFunctions checks the key functions against modelSplit on arbitrary
// namespace, name and key strings: MetaNamespaceKeyFunc and ObjectName.String
// agree, well-formed keys round-trip through SplitMetaNamespaceKey and
// ParseObjectName, malformed keys give errors (never panics), and every key
// splits as client-go splits it.
func FuzzKeyFunctions(f *testing.F) {
	for _, s := range [][3]string{
		{"", "", ""},
		{"ns", "name", "ns/name"},
		{"", "name", "name"},
		{"ns", "", "ns/"},
		{"", "", "/name"},
		{"a/b", "c", "a/b/c"},
		{"ns", "a/b", "//"},
		{"ünï", "cødé", "/"},
		{"kube-system", "coredns-5d78c9869d-abcde", "kube-system/coredns"},
		{"\x00", "\xff", "\x00/\xff"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, ns, name, key string) {
		// Keys of objects.
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		want := name
		if ns != "" {
			want = ns + "/" + name
		}
		got, err := MetaNamespaceKeyFunc(pod)
		if err != nil || got != want {
			t.Fatalf("MetaNamespaceKeyFunc(%q, %q) = %q, %v; want %q", ns, name, got, err, want)
		}
		if s := (ObjectName{Namespace: ns, Name: name}).String(); s != want {
			t.Fatalf("ObjectName{%q, %q}.String() = %q; want %q", ns, name, s, want)
		}
		on, err := ObjectToName(pod)
		if err != nil || on != (ObjectName{Namespace: ns, Name: name}) {
			t.Fatalf("ObjectToName(%q, %q) = %v, %v", ns, name, on, err)
		}
		cgKey, cgErr := clientcache.MetaNamespaceKeyFunc(pod)
		if cgErr != nil || cgKey != got {
			t.Fatalf("MetaNamespaceKeyFunc(%q, %q) = %q; client-go %q, %v", ns, name, got, cgKey, cgErr)
		}
		// Round trip of an object key when both parts are free of "/".
		if !strings.Contains(ns, "/") && !strings.Contains(name, "/") {
			gns, gname, err := SplitMetaNamespaceKey(want)
			if err != nil || gns != ns || gname != name {
				t.Fatalf("SplitMetaNamespaceKey(%q) = %q, %q, %v; want %q, %q", want, gns, gname, err, ns, name)
			}
			on, err := ParseObjectName(want)
			if err != nil || on != (ObjectName{Namespace: ns, Name: name}) {
				t.Fatalf("ParseObjectName(%q) = %v, %v", want, on, err)
			}
		}
		if dk, err := DeletionHandlingMetaNamespaceKeyFunc(DeletedFinalStateUnknown{Key: want, Obj: pod}); err != nil || dk != want {
			t.Fatalf("DeletionHandlingMetaNamespaceKeyFunc(tombstone %q) = %q, %v", want, dk, err)
		}

		// Arbitrary keys.
		for _, k := range []string{key, want} {
			mns, mname, ok := modelSplit(k)
			gns, gname, err := SplitMetaNamespaceKey(k)
			if ok != (err == nil) || gns != mns || gname != mname {
				t.Fatalf("SplitMetaNamespaceKey(%q) = %q, %q, %v; model %q, %q, ok=%v", k, gns, gname, err, mns, mname, ok)
			}
			on, perr := ParseObjectName(k)
			if (perr == nil) != ok || on != (ObjectName{Namespace: mns, Name: mname}) {
				t.Fatalf("ParseObjectName(%q) = %v, %v; model %q, %q, ok=%v", k, on, perr, mns, mname, ok)
			}
			if ok && (mns != "" || !strings.Contains(k, "/")) && on.String() != k {
				t.Fatalf("ParseObjectName(%q).String() = %q", k, on.String())
			}
			dn, derr := DeletionHandlingObjectToName(DeletedFinalStateUnknown{Key: k})
			if (derr == nil) != ok || dn != on {
				t.Fatalf("DeletionHandlingObjectToName(tombstone %q) = %v, %v; want %v, ok=%v", k, dn, derr, on, ok)
			}
			if ek, err := MetaNamespaceKeyFunc(ExplicitKey(k)); err != nil || ek != k {
				t.Fatalf("MetaNamespaceKeyFunc(ExplicitKey(%q)) = %q, %v", k, ek, err)
			}
			cns, cname, cerr := clientcache.SplitMetaNamespaceKey(k)
			if (cerr == nil) != (err == nil) || cns != gns || cname != gname {
				t.Fatalf("SplitMetaNamespaceKey(%q) = %q, %q, %v; client-go %q, %q, %v", k, gns, gname, err, cns, cname, cerr)
			}
		}

		// Objects that carry no usable metadata give errors, never panics.
		for _, bad := range []interface{}{nil, (*v1.Pod)(nil), ns, 42, struct{ Name string }{name}} {
			if _, err := MetaNamespaceKeyFunc(bad); err == nil {
				t.Fatalf("MetaNamespaceKeyFunc(%#v) gave no error", bad)
			}
			if _, err := ObjectToName(bad); err == nil {
				t.Fatalf("ObjectToName(%#v) gave no error", bad)
			}
		}
	})
}
