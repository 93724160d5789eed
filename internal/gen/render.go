package main

import (
	"bytes"
	"fmt"
	"go/format"
	"path"
	"strings"
	"text/template"
)

// module is the import path of this repository.
const module = "github.com/kinformer/kinformer"

var templates = template.Must(template.New("").Funcs(template.FuncMap{"lower": lowerCamel}).Parse(
	`{{define "lister"}}` + listerTmpl + `{{end}}` +
		`{{define "expansion"}}` + expansionTmpl + `{{end}}` +
		`{{define "listerDoc"}}` + listerDocTmpl + `{{end}}` +
		`{{define "informerDoc"}}` + informerDocTmpl + `{{end}}` +
		`{{define "informer"}}` + informerTmpl + `{{end}}` +
		`{{define "versionInterface"}}` + versionInterfaceTmpl + `{{end}}` +
		`{{define "groupInterface"}}` + groupInterfaceTmpl + `{{end}}` +
		`{{define "generic"}}` + genericTmpl + `{{end}}` +
		`{{define "groups"}}` + groupsTmpl + `{{end}}` +
		`{{define "smoke"}}` + smokeTmpl + `{{end}}`))

// HasInformers reports whether any version of g has informable resources.
func (g *group) HasInformers() bool {
	for _, v := range g.Versions {
		if len(v.Resources) > 0 {
			return true
		}
	}
	return false
}

// gvString names a group/version in docs: "apps/v1", "core/v1".
func (v *version) gvString() string {
	g := v.Group.Name
	if g == "" {
		g = "core"
	}
	return g + "/" + v.Name
}

// versionData is the template input for files about one group/version.
type versionData struct {
	Module   string
	V        *version
	GVString string
	Kinds    []*resource
}

// resourceData is the template input for files about one resource.
type resourceData struct {
	versionData
	R *resource
	// Lower is the unexported form of the kind ("pod").
	Lower string
	// Singular is the resource name client-go puts in NotFound errors ("pod").
	Singular string
	// APIName is the conventional alias of the API package in docs ("corev1").
	APIName string
	// NSParam, NSArg and NSCall splice the namespace into signatures, calls
	// of our constructors and clientset getters.
	NSParam, NSArg, NSCall string
}

// render returns every generated file, keyed by slash-separated path relative
// to the repository root. handWritten lists, per lister package directory,
// the kinds whose expansion interfaces are written by hand.
func render(m *model, handWritten map[string]map[string]bool) (map[string][]byte, error) {
	files := map[string][]byte{}
	emit := func(p, tmpl string, data any) error {
		var buf bytes.Buffer
		buf.WriteString(header)
		if err := templates.ExecuteTemplate(&buf, tmpl, data); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			return fmt.Errorf("%s: gofmt: %w\n%s", p, err, buf.Bytes())
		}
		files[p] = src
		return nil
	}
	var smoke []smokeVersion
	for _, g := range m.Groups {
		for _, v := range g.Versions {
			vd := versionData{Module: module, V: v, GVString: v.gvString()}
			listerDir := path.Join("listers", g.Dir, v.Dir)
			informerDir := path.Join("informers", g.Dir, v.Dir)
			if err := emit(path.Join(listerDir, "doc.go"), "listerDoc", vd); err != nil {
				return nil, err
			}
			var generatedExpansions []*resource
			for _, r := range v.AllListed() {
				rd := resourceData{versionData: vd, R: r, Lower: lowerCamel(r.Kind), Singular: strings.ToLower(r.Kind), APIName: path.Base(g.Dir) + v.Dir}
				if r.Namespaced {
					rd.NSParam, rd.NSArg, rd.NSCall = ", namespace string", ", namespace", "namespace"
				}
				if err := emit(path.Join(listerDir, strings.ToLower(r.Kind)+".go"), "lister", rd); err != nil {
					return nil, err
				}
				if !handWritten[listerDir][r.Kind] {
					generatedExpansions = append(generatedExpansions, r)
				}
				if r.isListerOnly() {
					continue
				}
				if err := emit(path.Join(informerDir, strings.ToLower(r.Kind)+".go"), "informer", rd); err != nil {
					return nil, err
				}
			}
			if len(generatedExpansions) > 0 {
				ed := vd
				ed.Kinds = generatedExpansions
				if err := emit(path.Join(listerDir, "expansion_generated.go"), "expansion", ed); err != nil {
					return nil, err
				}
			}
			if len(v.Resources) == 0 {
				continue
			}
			if err := emit(path.Join(informerDir, "doc.go"), "informerDoc", vd); err != nil {
				return nil, err
			}
			if err := emit(path.Join(informerDir, "interface.go"), "versionInterface", vd); err != nil {
				return nil, err
			}
			smoke = append(smoke, smokeVersion{V: v, Alias: g.Dir + v.Dir})
		}
		if !g.HasInformers() {
			continue
		}
		if err := emit(path.Join("informers", g.Dir, "interface.go"), "groupInterface", struct {
			Module string
			G      *group
		}{module, g}); err != nil {
			return nil, err
		}
	}
	top := struct {
		Module   string
		Groups   []*group
		Versions []smokeVersion
	}{module, m.Groups, smoke}
	if err := emit("informers/generic.go", "generic", top); err != nil {
		return nil, err
	}
	if err := emit("informers/groups.go", "groups", top); err != nil {
		return nil, err
	}
	if err := emit("informers/zz_generated_smoke_test.go", "smoke", top); err != nil {
		return nil, err
	}
	return files, nil
}

// smokeVersion is one group/version of the generated smoke test.
type smokeVersion struct {
	V     *version
	Alias string
}

// isListerOnly reports whether r gets a lister but no informer.
func (r *resource) isListerOnly() bool {
	for _, lo := range r.Version.ListerOnly {
		if lo == r {
			return true
		}
	}
	return false
}
