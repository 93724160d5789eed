// Command pbdecode writes internal/pbdecode's generated protobuf decoders:
// one function per message of every API type the client-go clientset's
// scheme knows, and the types they reach, with the sizer each object's
// first pass uses.
//
// The wire layout comes from the generated.proto files that k8s.io/api and
// k8s.io/apimachinery ship (field numbers, scalar kinds, repeated and map
// fields); the Go side (field names, named types, pointers) from the types
// themselves, matched to the messages by field number. The struct tags'
// wire types are not used: some are stale (an int32 tagged "bytes"), while
// the .proto files are what the types' own generated Unmarshal methods were
// generated from.
//
// Usage, from anywhere inside the module:
//
//	go run ./internal/gen/pbdecode           # (re)write internal/pbdecode/zz_generated.*.go
//	go run ./internal/gen/pbdecode -verify   # fail if the committed files differ
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
	verify := flag.Bool("verify", false, "compare a fresh generation with the files on disk instead of writing; exit 1 on any difference")
	flag.Parse()
	if err := run(*verify); err != nil {
		fmt.Fprintln(os.Stderr, "pbdecode:", err)
		os.Exit(1)
	}
}

const outDir = "internal/pbdecode"

func run(verify bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	protos, err := loadProtos(root)
	if err != nil {
		return err
	}
	g := newGenerator(protos)
	var roots []reflect.Type
	seen := map[reflect.Type]bool{}
	for _, t := range scheme.Scheme.AllKnownTypes() {
		if !seen[t] {
			seen[t] = true
			roots = append(roots, t)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return typeKey(roots[i]) < typeKey(roots[j]) })
	for _, t := range roots {
		if _, ok := g.message(t); !ok {
			continue // no protobuf form (e.g. metav1.InternalEvent)
		}
		if err := g.need(t); err != nil {
			return fmt.Errorf("%s: %w", typeKey(t), err)
		}
		g.roots = append(g.roots, t)
	}
	files, err := g.render()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, outDir)
	existing, _ := filepath.Glob(filepath.Join(dir, "zz_generated.*.go"))
	if verify {
		var diffs []string
		for name, content := range files {
			old, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(old, content) {
				diffs = append(diffs, name)
			}
		}
		for _, path := range existing {
			if _, ok := files[filepath.Base(path)]; !ok {
				diffs = append(diffs, filepath.Base(path)+" (stale)")
			}
		}
		if len(diffs) > 0 {
			sort.Strings(diffs)
			return fmt.Errorf("generated decoders are out of date (run go run ./internal/gen/pbdecode): %s", strings.Join(diffs, ", "))
		}
		return nil
	}
	for _, path := range existing {
		if _, ok := files[filepath.Base(path)]; !ok {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// protoField is one field of a message in a generated.proto file.
type protoField struct {
	name     string
	num      int
	repeated bool
	typ      string // scalar name or message reference; for maps, the value type
	isMap    bool
}

type protoMessage struct {
	name   string
	fields []protoField
}

var (
	goPackageRE = regexp.MustCompile(`^option go_package = "([^"]+)";`)
	messageRE   = regexp.MustCompile(`^message (\w+) \{$`)
	fieldRE     = regexp.MustCompile(`^\s+(optional|repeated) (\S+) (\w+) = (\d+);$`)
	mapRE       = regexp.MustCompile(`^\s+map<string, (\S+)> (\w+) = (\d+);$`)
)

// loadProtos parses every generated.proto of k8s.io/api and
// k8s.io/apimachinery, by Go package path and message name.
func loadProtos(root string) (map[string]*protoMessage, error) {
	out := map[string]*protoMessage{}
	for _, mod := range []string{"k8s.io/api", "k8s.io/apimachinery"} {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod)
		cmd.Dir = root
		dir, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("finding %s: %w", mod, err)
		}
		err = filepath.WalkDir(strings.TrimSpace(string(dir)), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "generated.proto" {
				return err
			}
			return parseProto(path, out)
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func parseProto(path string, out map[string]*protoMessage) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var pkg string
	var cur *protoMessage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := goPackageRE.FindStringSubmatch(line); m != nil {
			pkg = m[1]
			continue
		}
		if m := messageRE.FindStringSubmatch(line); m != nil {
			cur = &protoMessage{name: m[1]}
			continue
		}
		if cur == nil {
			continue
		}
		if line == "}" {
			if pkg == "" {
				return fmt.Errorf("%s: message %s before go_package", path, cur.name)
			}
			out[pkg+"."+cur.name] = cur
			cur = nil
			continue
		}
		if m := fieldRE.FindStringSubmatch(line); m != nil {
			num, _ := strconv.Atoi(m[4])
			cur.fields = append(cur.fields, protoField{name: m[3], num: num, repeated: m[1] == "repeated", typ: m[2]})
			continue
		}
		if m := mapRE.FindStringSubmatch(line); m != nil {
			num, _ := strconv.Atoi(m[3])
			cur.fields = append(cur.fields, protoField{name: m[2], num: num, typ: m[1], isMap: true})
			continue
		}
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "//") {
			return fmt.Errorf("%s: message %s: line not understood: %q", path, cur.name, line)
		}
	}
	return sc.Err()
}

func typeKey(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// special are the types decoded by hand-written functions of the package.
var special = map[string]struct{ decode, size string }{
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":      {"decodeTime", "noSize"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime": {"decodeMicroTime", "noSize"},
	"k8s.io/apimachinery/pkg/api/resource.Quantity":  {"decodeQuantity", "quantitySize"},
}

type generator struct {
	protos map[string]*protoMessage
	types  map[string]reflect.Type // by typeKey, every message type to generate
	roots  []reflect.Type
	// entries are the message types used as map values, by typeKey.
	entries map[string]reflect.Type
}

func newGenerator(protos map[string]*protoMessage) *generator {
	return &generator{protos: protos, types: map[string]reflect.Type{}, entries: map[string]reflect.Type{}}
}

func (g *generator) message(t reflect.Type) (*protoMessage, bool) {
	m, ok := g.protos[typeKey(t)]
	return m, ok
}

// need adds t (a message type) and every message type its fields reach.
func (g *generator) need(t reflect.Type) error {
	key := typeKey(t)
	if _, ok := special[key]; ok {
		return nil
	}
	if _, ok := g.types[key]; ok {
		return nil
	}
	msg, ok := g.message(t)
	if !ok {
		return fmt.Errorf("no protobuf message for %s", key)
	}
	g.types[key] = t
	for _, pf := range msg.fields {
		f, err := goField(t, pf)
		if err != nil {
			return err
		}
		if !isScalar(pf.typ) {
			mt := messageType(f.Type, pf)
			if mt == nil {
				return fmt.Errorf("%s.%s: message field of Go type %s", key, pf.name, f.Type)
			}
			if err := g.need(mt); err != nil {
				return fmt.Errorf("%s.%s: %w", key, pf.name, err)
			}
		}
	}
	return nil
}

func isScalar(typ string) bool {
	switch typ {
	case "string", "bytes", "int32", "int64", "bool":
		return true
	}
	return false
}

// goField returns the Go field of t that holds proto field pf: the one whose
// protobuf tag has pf's number. A message whose Go type is a slice (such as
// ExtraValue, a []string) holds its one repeated field itself.
func goField(t reflect.Type, pf protoField) (reflect.StructField, error) {
	if t.Kind() == reflect.Slice {
		if pf.num != 1 || !pf.repeated {
			return reflect.StructField{}, fmt.Errorf("%s: slice type with field %d", typeKey(t), pf.num)
		}
		return reflect.StructField{Name: "", Type: t}, nil
	}
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, fmt.Errorf("%s: message of Go kind %s", typeKey(t), t.Kind())
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("protobuf")
		if !ok {
			continue
		}
		parts := strings.Split(tag, ",")
		if len(parts) < 2 {
			continue
		}
		if n, err := strconv.Atoi(parts[1]); err == nil && n == pf.num {
			return f, nil
		}
	}
	return reflect.StructField{}, fmt.Errorf("%s: no Go field for proto field %s = %d", typeKey(t), pf.name, pf.num)
}

// messageType returns the message type a message field of Go type ft holds:
// the struct (or named slice) itself, or the element of a pointer, slice or
// map value.
func messageType(ft reflect.Type, pf protoField) reflect.Type {
	t := ft
	switch {
	case pf.isMap:
		if t.Kind() != reflect.Map {
			return nil
		}
		t = t.Elem()
	case pf.repeated:
		if t.Kind() != reflect.Slice {
			return nil
		}
		t = t.Elem()
	case t.Kind() == reflect.Pointer:
		t = t.Elem()
	}
	if t.Name() == "" || (t.Kind() != reflect.Struct && t.Kind() != reflect.Slice) {
		return nil
	}
	return t
}
