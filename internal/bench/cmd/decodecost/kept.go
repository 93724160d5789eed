package main

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unsafe"
)

// keptBlock sums heap blocks an object keeps at one path.
type keptBlock struct {
	objects int64
	bytes   int64
}

// walker visits a decoded value and books every heap block it reaches (the
// bytes of a string, the array behind a slice, a map, the target of a
// pointer, a value boxed in an interface) under the path of the field that
// holds it. A block reached twice is booked once.
type walker struct {
	seen map[uintptr]bool
	kept map[string]*keptBlock
	// lastPath is the path book last booked under.
	lastPath string
}

func walkKept(v any) map[string]*keptBlock {
	w := &walker{seen: map[uintptr]bool{}, kept: map[string]*keptBlock{}}
	w.value(reflect.ValueOf(v), "")
	return w.kept
}

// keptPathDepth is how many path elements a booking keeps: deeper paths
// (managedFields' field sets in unstructured objects) are summed under
// their prefix.
const keptPathDepth = 4

func (w *walker) book(path string, addr uintptr, size int64) bool {
	if addr != 0 {
		if w.seen[addr] {
			return false
		}
		w.seen[addr] = true
	}
	for strings.Contains(path, "{}{}") {
		path = strings.ReplaceAll(path, "{}{}", "{}")
	}
	parts := strings.Split(path, ".")
	if len(parts) > keptPathDepth+1 {
		path = strings.Join(parts[:keptPathDepth+1], ".") + ".…"
	}
	k := w.kept[path]
	if k == nil {
		k = &keptBlock{}
		w.kept[path] = k
	}
	k.objects++
	k.bytes += size
	w.lastPath = path
	return true
}

func (w *walker) value(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		if n := v.Len(); n > 0 {
			w.book(path+"(string)", uintptr(unsafe.Pointer(unsafe.StringData(v.String()))), blockSize(int64(n), false))
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		elem := v.Type().Elem()
		if w.book(path+"[]", v.Pointer(), blockSize(int64(v.Cap())*int64(elem.Size()), hasPointers(elem))) {
			for i := range v.Len() {
				w.value(v.Index(i), path+"[]")
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		elem := v.Type().Elem()
		if w.book(path+"*", v.Pointer(), blockSize(int64(elem.Size()), hasPointers(elem))) || path == "" {
			w.value(v.Elem(), path)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		objs, size := mapSize(v)
		if w.seen[v.Pointer()] {
			return
		}
		w.seen[v.Pointer()] = true
		w.book(path+"{}", 0, size)
		w.kept[w.lastPath].objects += objs - 1
		iter := v.MapRange()
		unstructured := v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.Interface
		for iter.Next() {
			key := iter.Key()
			sub := path + "{}"
			if unstructured && !opaqueMap(path) {
				sub = join(path, key.String())
			}
			w.value(key, sub+"key")
			w.value(iter.Value(), sub)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		switch e.Kind() {
		case reflect.Pointer, reflect.Map, reflect.UnsafePointer, reflect.Chan, reflect.Func:
			w.value(e, path)
		case reflect.Bool:
			// Booleans are boxed into static memory.
		case reflect.Int64, reflect.Float64, reflect.Uint64:
			if bits := e.Interface(); !smallBits(bits) {
				w.book(path+"(boxed)", 0, 8)
			}
		default:
			w.book(path+"(boxed)", 0, blockSize(int64(e.Type().Size()), hasPointers(e.Type())))
			w.value(e, path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			f := t.Field(i)
			name := f.Name
			if f.Anonymous {
				w.value(v.Field(i), path)
				continue
			}
			w.value(v.Field(i), join(path, name))
		}
	case reflect.Array:
		for i := range v.Len() {
			w.value(v.Index(i), path+"[]")
		}
	}
}

// opaqueMap reports whether the unstructured map at path has keys that are
// data rather than field names (labels, annotations, a managedFields entry's
// field set), which the report sums under "{}".
func opaqueMap(path string) bool {
	for _, suffix := range []string{"labels", "annotations", "fieldsV1", "{}"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	if strings.HasSuffix(path, "[]") || strings.HasSuffix(path, "{}") {
		return path + name
	}
	return path + "." + name
}

// smallBits reports whether an int64, uint64 or float64 boxes into the
// runtime's static table of small values instead of a fresh block.
func smallBits(v any) bool {
	switch x := v.(type) {
	case int64:
		return x >= 0 && x < 256
	case uint64:
		return x < 256
	case float64:
		b := *(*uint64)(unsafe.Pointer(&x))
		return b < 256
	}
	return false
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Pointer, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	}
	return false
}

// sizeClasses are the Go allocator's small size classes (runtime/sizeclasses.go).
var sizeClasses = []int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240,
	10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// blockSize is what an allocation of n bytes occupies: pointer-free blocks
// under 16 bytes share the tiny allocator's 16-byte blocks (so cost about
// their size), others round up to their size class, and large ones to
// pages.
func blockSize(n int64, pointers bool) int64 {
	if n == 0 {
		return 0
	}
	if !pointers && n < 16 {
		return n
	}
	for _, c := range sizeClasses {
		if n <= c {
			return c
		}
	}
	return (n + 8191) &^ 8191
}

// mapSize estimates the blocks of a map in Go's swiss-table layout: a
// header, and for up to 8 entries one group of 8 slots (a control word and
// 8 key/value pairs); larger maps add a directory and tables whose groups
// hold 7/8 of their slots at most.
func mapSize(v reflect.Value) (objects, bytes int64) {
	t := v.Type()
	slot := int64(t.Key().Size() + t.Elem().Size())
	group := 8 + 8*slot
	header := blockSize(48, true)
	n := int64(v.Len())
	if n == 0 {
		// An empty map allocates its group on the first insert.
		return 1, header
	}
	if n <= 8 {
		return 2, header + blockSize(group, true)
	}
	slots := int64(8)
	for slots*7/8 < n {
		slots *= 2
	}
	return 4, header + blockSize(8, true) + blockSize(48, true) + blockSize(slots/8*group, true)
}

func writeKept(w io.Writer, kept map[string]*keptBlock, pods int) {
	type row struct {
		path string
		keptBlock
	}
	rows := make([]row, 0, len(kept))
	var total keptBlock
	for p, k := range kept {
		rows = append(rows, row{p, *k})
		total.objects += k.objects
		total.bytes += k.bytes
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].bytes != rows[j].bytes {
			return rows[i].bytes > rows[j].bytes
		}
		return rows[i].path < rows[j].path
	})
	p := float64(pods)
	fmt.Fprintf(w, "Walked, by field path: %.1f blocks and %.0f bytes per pod (sizes rounded to size classes; maps estimated from Go's map layout). Paths with at least 32 bytes per pod:\n\n",
		float64(total.objects)/p, float64(total.bytes)/p)
	fmt.Fprintf(w, "| path | blocks per pod | bytes per pod |\n| --- | ---: | ---: |\n")
	var rest keptBlock
	for _, r := range rows {
		if float64(r.bytes)/p < 32 {
			rest.objects += r.objects
			rest.bytes += r.bytes
			continue
		}
		fmt.Fprintf(w, "| `%s` | %.1f | %.0f |\n", r.path, float64(r.objects)/p, float64(r.bytes)/p)
	}
	fmt.Fprintf(w, "| (other paths) | %.1f | %.0f |\n\n", float64(rest.objects)/p, float64(rest.bytes)/p)
}
