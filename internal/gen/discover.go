package main

import (
	"fmt"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"

	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// apiPrefix is the import path prefix of the Go types the clientset serves.
const apiPrefix = "k8s.io/api/"

// model is everything the templates need: the API groups in a stable order.
type model struct {
	Groups []*group
}

// group is one API group as the clientset exposes it (CoreV1, CoreV2 → "Core").
type group struct {
	// GoName is the factory accessor name ("Core", "Internal", "Admissionregistration").
	GoName string
	// Dir is the package directory and name ("core", "apiserverinternal").
	Dir string
	// Name is the API group name ("" for core, "apps", "admissionregistration.k8s.io").
	Name     string
	Versions []*version
}

// version is one group/version.
type version struct {
	Group *group
	// GoName is the accessor name ("V1", "V1beta2").
	GoName string
	// Dir is the package directory and name ("v1", "v1beta2").
	Dir string
	// ClientMethod is the clientset accessor ("CoreV1").
	ClientMethod string
	// APIPath is the import path of the Go types ("k8s.io/api/core/v1").
	APIPath string
	// Name is the version string ("v1").
	Name string
	// Resources served by informers (list and watch); ListerOnly are the extra
	// types that get a lister but no informer.
	Resources  []*resource
	ListerOnly []*resource

	groupName string
}

// resource is one kind of object in a group/version.
type resource struct {
	Version *version
	// Kind is the Go type name ("Pod").
	Kind string
	// Plural is the clientset getter name ("Pods").
	Plural string
	// Resource is the lower-case plural used in the GVR ("pods").
	Resource string
	// Namespaced is true when the getter takes a namespace.
	Namespaced bool
}

// AllListed is the set of resources that get a lister: the informer ones plus
// ListerOnly, sorted by kind.
func (v *version) AllListed() []*resource {
	all := append(append([]*resource(nil), v.Resources...), v.ListerOnly...)
	sort.Slice(all, func(i, j int) bool { return all[i].Kind < all[j].Kind })
	return all
}

// listerOnlyTypes are the types client-go's lister-gen emits a lister for
// although the clientset cannot list or watch them: lister-gen includes every
// "+genclient" type whose tags do not restrict its verbs, and these three are
// tagged "+genclient:noVerbs". The set is checked against client-go's listers
// tree (see compare.go), so a change upstream fails generation.
var listerOnlyTypes = []struct {
	obj        runtime.Object
	gv         schema.GroupVersion
	plural     string
	namespaced bool
}{
	{&imagepolicyv1alpha1.ImageReview{}, imagepolicyv1alpha1.SchemeGroupVersion, "ImageReviews", false},
	{&policyv1.Eviction{}, policyv1.SchemeGroupVersion, "Evictions", true},
	{&policyv1beta1.Eviction{}, policyv1beta1.SchemeGroupVersion, "Evictions", true},
}

var versionSuffix = regexp.MustCompile(`^([A-Z][A-Za-z]*?)(V[0-9]+(?:(?:alpha|beta)[0-9]+)?)$`)

// discover walks kubernetes.Interface by reflection: every group/version
// accessor, every resource getter of its typed client, and the item type of
// each getter's List result. A getter takes a namespace when it has one string
// parameter. Getters without List and Watch are not informable and skipped.
func discover() (*model, error) {
	ctx := reflect.TypeFor[kubernetes.Interface]()
	groups := map[string]*group{}
	for i := 0; i < ctx.NumMethod(); i++ {
		m := ctx.Method(i)
		sub := versionSuffix.FindStringSubmatch(m.Name)
		if sub == nil || m.Type.NumIn() != 0 || m.Type.NumOut() != 1 || m.Type.Out(0).Kind() != reflect.Interface {
			continue
		}
		v := &version{GoName: sub[2], Dir: strings.ToLower(sub[2]), ClientMethod: m.Name}
		if err := v.discoverResources(m.Type.Out(0)); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if len(v.Resources) == 0 {
			continue
		}
		if err := addVersion(groups, sub[1], v); err != nil {
			return nil, err
		}
	}
	for _, lo := range listerOnlyTypes {
		t := reflect.TypeOf(lo.obj).Elem()
		r := &resource{Kind: t.Name(), Plural: lo.plural, Resource: strings.ToLower(lo.plural), Namespaced: lo.namespaced}
		v, err := findVersion(groups, t.PkgPath(), lo.gv)
		if err != nil {
			return nil, err
		}
		r.Version = v
		v.ListerOnly = append(v.ListerOnly, r)
	}
	m := &model{}
	for _, g := range groups {
		sort.Slice(g.Versions, func(i, j int) bool { return g.Versions[i].Dir < g.Versions[j].Dir })
		for _, v := range g.Versions {
			sort.Slice(v.Resources, func(i, j int) bool { return v.Resources[i].Kind < v.Resources[j].Kind })
		}
		m.Groups = append(m.Groups, g)
	}
	sort.Slice(m.Groups, func(i, j int) bool { return m.Groups[i].Dir < m.Groups[j].Dir })
	return m, nil
}

// addVersion files v under its group, creating the group on first sight and
// checking that all versions of a group agree on its directory and name.
func addVersion(groups map[string]*group, goName string, v *version) error {
	gdir := path.Dir(strings.TrimPrefix(v.APIPath, apiPrefix))
	g := groups[gdir]
	if g == nil {
		g = &group{GoName: goName, Dir: gdir, Name: v.groupName}
		groups[gdir] = g
	}
	if g.GoName != goName || g.Name != v.groupName {
		return fmt.Errorf("group %s: accessors %s and %s disagree (API groups %q, %q)", gdir, g.GoName, goName, g.Name, v.groupName)
	}
	v.Group = g
	g.Versions = append(g.Versions, v)
	return nil
}

// findVersion returns the version whose Go types live in pkgPath, creating a
// group and version for lister-only types the clientset does not serve.
func findVersion(groups map[string]*group, pkgPath string, gv schema.GroupVersion) (*version, error) {
	rel := strings.TrimPrefix(pkgPath, apiPrefix)
	gdir, vdir := path.Dir(rel), path.Base(rel)
	g := groups[gdir]
	if g == nil {
		g = &group{GoName: upperFirst(gdir), Dir: gdir, Name: gv.Group}
		groups[gdir] = g
	}
	for _, v := range g.Versions {
		if v.Dir == vdir {
			return v, nil
		}
	}
	v := &version{Group: g, GoName: upperFirst(vdir), Dir: vdir, APIPath: pkgPath, Name: gv.Version, groupName: gv.Group}
	g.Versions = append(g.Versions, v)
	return v, nil
}

// discoverResources fills v from the methods of a typed group/version client.
func (v *version) discoverResources(client reflect.Type) error {
	for i := 0; i < client.NumMethod(); i++ {
		m := client.Method(i)
		if m.Type.NumOut() != 1 || m.Type.Out(0).Kind() != reflect.Interface {
			continue
		}
		namespaced := false
		switch {
		case m.Type.NumIn() == 0:
		case m.Type.NumIn() == 1 && m.Type.In(0).Kind() == reflect.String:
			namespaced = true
		default:
			continue
		}
		getter := m.Type.Out(0)
		list, ok := getter.MethodByName("List")
		if !ok {
			continue
		}
		if _, ok := getter.MethodByName("Watch"); !ok {
			continue
		}
		item, err := listItemType(list.Type)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		obj, ok := reflect.New(item).Interface().(runtime.Object)
		if !ok {
			return fmt.Errorf("%s: *%s is not a runtime.Object", m.Name, item)
		}
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		gvk := gvks[0]
		if gvk.Kind != item.Name() {
			return fmt.Errorf("%s: kind %s differs from Go type %s", m.Name, gvk.Kind, item.Name())
		}
		if v.APIPath == "" {
			v.APIPath, v.Name, v.groupName = item.PkgPath(), gvk.Version, gvk.Group
		}
		if v.APIPath != item.PkgPath() || v.Name != gvk.Version || v.groupName != gvk.Group {
			return fmt.Errorf("%s: type %s.%s (%s) does not belong to %s (%s/%s)", m.Name, item.PkgPath(), item.Name(), gvk, v.APIPath, v.groupName, v.Name)
		}
		if !strings.HasPrefix(v.APIPath, apiPrefix) {
			return fmt.Errorf("%s: type %s outside %s", m.Name, v.APIPath, apiPrefix)
		}
		v.Resources = append(v.Resources, &resource{Version: v, Kind: item.Name(), Plural: m.Name, Resource: strings.ToLower(m.Name), Namespaced: namespaced})
	}
	return nil
}

// listItemType returns T from a List method of shape
// func(context.Context, metav1.ListOptions) (*TList, error) whose TList has
// an Items []T field.
func listItemType(list reflect.Type) (reflect.Type, error) {
	if list.NumOut() != 2 || list.Out(0).Kind() != reflect.Pointer || list.Out(0).Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("List returns %s, want a pointer to a list struct", list)
	}
	f, ok := list.Out(0).Elem().FieldByName("Items")
	if !ok || f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s has no Items slice of structs", list.Out(0))
	}
	return f.Type.Elem(), nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// lowerCamel turns an exported Go name into an unexported one, lowering a
// leading acronym as a whole: Pod → pod, CSIDriver → csiDriver, IPAddress →
// ipAddress.
func lowerCamel(s string) string {
	r := []byte(s)
	n := 0
	for n < len(r) && r[n] >= 'A' && r[n] <= 'Z' {
		n++
	}
	switch {
	case n == 0:
		return s
	case n == 1 || n == len(r):
	default:
		n-- // keep the capital that starts the next word
	}
	for i := 0; i < n; i++ {
		r[i] += 'a' - 'A'
	}
	return string(r)
}
