package projection

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pbPlan is a projection compiled for the protobuf encoding of one kind: the
// field numbers to keep in its objects' messages. A pbPlan is immutable and
// safe for concurrent use.
type pbPlan struct {
	kind     string // the objects' kind, e.g. "Pod"
	listKind string // the kind of their lists, e.g. "PodList"
	typeName string // the objects' Go type, for error messages

	// top filters the object's message, metadata excepted; nil keeps every
	// field of it.
	top *pbMsg
	// metaNum is the field number of the object's metadata (an ObjectMeta)
	// and meta what to keep of it; annotationsNum is the field number of the
	// annotations in ObjectMeta, where the marker goes.
	metaNum        uint64
	meta           *pbFieldPlan
	annotationsNum uint64
}

// pbMsg is what to keep of a message: the fields it names and does not
// drop. Fields of numbers it does not name are dropped too.
type pbMsg struct {
	typeName string // the message's Go type, for error messages
	fields   map[uint64]*pbFieldPlan
}

// pbFieldPlan is what to keep of one field of a message (of every
// occurrence of it, for a repeated field: each element of a list, each entry
// of a map).
type pbFieldPlan struct {
	wire   int  // the wire type the field must have
	packed bool // a repeated scalar, which may also come packed
	// drop drops the field, keep keeps it whole; otherwise the field is a
	// message (filtered by msg) or, with isMap, a map's entry (filtered by
	// keys).
	drop  bool
	keep  bool
	msg   *pbMsg
	isMap bool
	// keys are the map keys kept; a nil *pbMsg keeps the entry whole, another
	// filters the entry's value, a message.
	keys map[string]*pbMsg
}

var (
	objectMetaType    = reflect.TypeFor[metav1.ObjectMeta]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// compileProtobuf compiles the projection tree root for the objects of kind,
// whose Go type is t (a struct, or a pointer to one): it maps the tree's JSON
// names to the field numbers of t's protobuf message, read from the struct
// tags. It returns an error naming the full path of the first step found in
// no field of its type, or going into a value that has no fields. The tree's
// paths are followed in the type, never the type's own recursion, so
// recursive types are compiled as deep as the tree goes and no deeper.
func compileProtobuf(root *node, t reflect.Type, kind string) (*pbPlan, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("projection: %v is not a struct type", t)
	}
	if kind == "" {
		return nil, fmt.Errorf("projection: no kind given for %s", pbTypeName(t))
	}
	p := &pbPlan{kind: kind, listKind: kind + "List", typeName: pbTypeName(t)}

	chain := pbLookup(t, "metadata")
	if len(chain) != 1 || chain[0].Type != objectMetaType {
		return nil, fmt.Errorf("projection: %s has no field \"metadata\" of type ObjectMeta", p.typeName)
	}
	metaTag, ok, err := pbParseTag(chain[0])
	if err != nil {
		return nil, fmt.Errorf("projection: %s: %w", p.typeName, err)
	}
	if !ok {
		return nil, fmt.Errorf("projection: %s has no protobuf encoding of its metadata", p.typeName)
	}
	p.metaNum = metaTag.num
	annChain := pbLookup(objectMetaType, "annotations")
	annTag, ok, err := pbParseTag(annChain[len(annChain)-1])
	if err != nil || !ok {
		return nil, fmt.Errorf("projection: no protobuf encoding of ObjectMeta's annotations")
	}
	p.annotationsNum = annTag.num

	if root == nil || root.all {
		p.meta = &pbFieldPlan{wire: pbWireBytes, keep: true}
		return p, nil
	}
	top, err := pbCompileStruct(t, root, "")
	if err != nil {
		return nil, err
	}
	p.meta = top.fields[p.metaNum]
	delete(top.fields, p.metaNum)
	if p.meta == nil || p.meta.drop {
		// The tree keeps nothing of the metadata: it holds only the marker.
		msg, err := pbNewMsg(objectMetaType)
		if err != nil {
			return nil, fmt.Errorf("projection: %w", err)
		}
		p.meta = &pbFieldPlan{wire: pbWireBytes, msg: msg}
	}
	p.top = top
	return p, nil
}

// pbTag is where a field is in its protobuf message, and how it is
// encoded there.
type pbTag struct {
	num    uint64
	wire   int  // the wire type of the field (of each element, if repeated)
	packed bool // a repeated scalar, which may also come packed
}

// pbParseTag reads the field number of f from its protobuf struct tag
// ("bytes,3,opt,name=spec"); ok is false if f has none, i.e. f is not in
// the protobuf message. The wire type follows from f's Go type, as the
// generated code encodes it: the tag's type and label are not always right
// (core/v1 PodSpec's priority, an int32, is tagged "bytes").
func pbParseTag(f reflect.StructField) (pbTag, bool, error) {
	s, has := f.Tag.Lookup("protobuf")
	if !has || s == "-" {
		return pbTag{}, false, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return pbTag{}, false, fmt.Errorf("field %s: malformed protobuf tag %q", f.Name, s)
	}
	num, err := strconv.ParseUint(parts[1], 10, 32)
	if err != nil || num == 0 || num > pbMaxFieldNum {
		return pbTag{}, false, fmt.Errorf("field %s: bad field number in protobuf tag %q", f.Name, s)
	}
	t := pbTag{num: num}
	ft := pbDeref(f.Type)
	switch {
	case ft.Kind() != reflect.Slice || ft.Elem().Kind() == reflect.Uint8:
		t.wire = pbScalarWire(ft)
	case reflect.PointerTo(ft).Implements(pbMarshalerType):
		// A named list with its own Marshal is a message wrapping the
		// list (metav1.Verbs).
		t.wire = pbWireBytes
	default:
		// A repeated field, whatever its tag says (resource/v1
		// DeviceAttribute's ints are tagged "opt").
		t.wire = pbScalarWire(pbDeref(ft.Elem()))
		t.packed = t.wire != pbWireBytes
	}
	return t, true, nil
}

// pbMarshalerType is the method protobuf messages' Go types have.
var pbMarshalerType = reflect.TypeFor[interface{ Marshal() ([]byte, error) }]()

// pbScalarWire is the wire type of a value of Go type t.
func pbScalarWire(t reflect.Type) int {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return pbWireVarint
	case reflect.Float64:
		return pbWireFixed64
	case reflect.Float32:
		return pbWireFixed32
	}
	return pbWireBytes // strings, bytes, messages, maps' entries
}

// pbJSONName is the member name encoding/json gives struct field f; inline
// is true for an embedded struct whose members are promoted into its
// parent's, skip for a field JSON leaves out.
func pbJSONName(f reflect.StructField) (name string, inline, skip bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, true
	}
	name, _, _ = strings.Cut(tag, ",")
	if name == "" && f.Anonymous {
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct {
			return "", true, false
		}
	}
	if !f.IsExported() {
		return "", false, true
	}
	if name == "" {
		name = f.Name
	}
	return name, false, false
}

// pbLookup finds the member of struct type t that the JSON name names,
// looking into inlined embedded structs as encoding/json does (the
// shallowest wins). It returns the chain of struct fields from t down to the
// member, or nil if there is none.
func pbLookup(t reflect.Type, name string) []reflect.StructField {
	type level struct {
		t     reflect.Type
		chain []reflect.StructField
	}
	current := []level{{t: t}}
	seen := map[reflect.Type]bool{t: true}
	for len(current) > 0 {
		var next []level
		for _, l := range current {
			for i := range l.t.NumField() {
				f := l.t.Field(i)
				n, inline, skip := pbJSONName(f)
				switch {
				case skip:
				case inline:
					et := f.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !seen[et] {
						seen[et] = true
						next = append(next, level{t: et, chain: append(l.chain[:len(l.chain):len(l.chain)], f)})
					}
				case n == name:
					return append(l.chain[:len(l.chain):len(l.chain)], f)
				}
			}
		}
		current = next
	}
	return nil
}

// pbCompileStruct compiles node n (which keeps only its children) for the
// message of struct type t; path is the JSON path of n, for errors.
func pbCompileStruct(t reflect.Type, n *node, path string) (*pbMsg, error) {
	m, err := pbNewMsg(t)
	if err != nil {
		return nil, fmt.Errorf("projection: field path %q: %w", path, err)
	}
	for _, name := range slices.Sorted(maps.Keys(n.children)) {
		child := n.children[name]
		childPath := name
		if path != "" {
			childPath = path + "." + name
		}
		chain := pbLookup(t, name)
		if chain == nil {
			return nil, fmt.Errorf("projection: field path %q: no field %q in %s", childPath, name, pbTypeName(t))
		}
		// Walk the inlined structs: each that is a field of the message
		// (corev1.Volume's VolumeSource) is a nested message holding the
		// member; one that is not (TypeMeta) holds members that are not on
		// the wire.
		cur := m
		onWire := true
		for _, emb := range chain[:len(chain)-1] {
			tag, ok, err := pbParseTag(emb)
			if err != nil {
				return nil, fmt.Errorf("projection: field path %q: %s: %w", childPath, pbTypeName(t), err)
			}
			if !ok {
				onWire = false
				break
			}
			fp := cur.fields[tag.num]
			if fp == nil || fp.drop {
				msg, err := pbNewMsg(pbDeref(emb.Type))
				if err != nil {
					return nil, fmt.Errorf("projection: field path %q: %w", childPath, err)
				}
				fp = &pbFieldPlan{wire: pbWireBytes, msg: msg}
				cur.fields[tag.num] = fp
			}
			if fp.msg == nil {
				onWire = false // already kept whole
				break
			}
			cur = fp.msg
		}
		if !onWire {
			continue
		}
		member := chain[len(chain)-1]
		tag, ok, err := pbParseTag(member)
		if err != nil {
			return nil, fmt.Errorf("projection: field path %q: %s: %w", childPath, pbTypeName(t), err)
		}
		if !ok {
			// A member JSON has but the protobuf message does not: nothing
			// of it is on the wire, so nothing is left to keep.
			continue
		}
		fp, err := pbCompileField(member.Type, tag, child, childPath)
		if err != nil {
			return nil, err
		}
		cur.fields[tag.num] = fp
	}
	return m, nil
}

// pbNewMsg returns the message of struct type t keeping none of its
// fields, but knowing their wire types: a field of the wrong wire type is
// refused even where it is dropped, as a decoder would refuse it.
func pbNewMsg(t reflect.Type) (*pbMsg, error) {
	m := &pbMsg{typeName: pbTypeName(t), fields: map[uint64]*pbFieldPlan{}}
	for i := range t.NumField() {
		tag, ok, err := pbParseTag(t.Field(i))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.typeName, err)
		}
		if ok {
			m.fields[tag.num] = &pbFieldPlan{wire: tag.wire, packed: tag.packed, drop: true}
		}
	}
	return m, nil
}

// pbCompileField compiles node n for a field of Go type t with protobuf tag
// tag; path is n's JSON path.
func pbCompileField(t reflect.Type, tag pbTag, n *node, path string) (*pbFieldPlan, error) {
	fp := &pbFieldPlan{wire: tag.wire, packed: tag.packed}
	if n.all {
		fp.keep = true
		return fp, nil
	}
	t = pbDeref(t)
	if pbIsLeaf(t) {
		return nil, pbLeafError(t, n, path)
	}
	if tag.wire != pbWireBytes {
		return nil, fmt.Errorf("projection: field path %q: %s is encoded as protobuf %s, not as a message", path, pbTypeName(t), pbWireTypeName(tag.wire))
	}
	switch t.Kind() {
	case reflect.Struct:
		msg, err := pbCompileStruct(t, n, path)
		if err != nil {
			return nil, err
		}
		fp.msg = msg
	case reflect.Slice, reflect.Array:
		// A repeated message: n applies to each element.
		et := pbDeref(t.Elem())
		if et.Kind() != reflect.Struct || pbIsLeaf(et) {
			return nil, pbLeafError(et, n, path)
		}
		msg, err := pbCompileStruct(et, n, path)
		if err != nil {
			return nil, err
		}
		fp.msg = msg
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("projection: field path %q: the keys of %s are not strings and cannot be selected", path, pbTypeName(t))
		}
		fp.isMap = true
		fp.keys = map[string]*pbMsg{}
		for _, key := range slices.Sorted(maps.Keys(n.children)) {
			child := n.children[key]
			if child.all {
				fp.keys[key] = nil
				continue
			}
			vt := pbDeref(t.Elem())
			childPath := path + "." + key
			if vt.Kind() != reflect.Struct || pbIsLeaf(vt) {
				return nil, pbLeafError(vt, child, childPath)
			}
			msg, err := pbCompileStruct(vt, child, childPath)
			if err != nil {
				return nil, err
			}
			fp.keys[key] = msg
		}
	default:
		return nil, pbLeafError(t, n, path)
	}
	return fp, nil
}

// pbDeref strips t's pointers.
func pbDeref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// pbIsLeaf reports whether a value of type t is taken whole by a projection:
// a scalar, bytes, a list of scalars, or a type with its own JSON encoding
// (metav1.Time, resource.Quantity, intstr.IntOrString...).
func pbIsLeaf(t reflect.Type) bool {
	if t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return false
	case reflect.Slice, reflect.Array:
		et := pbDeref(t.Elem())
		return et.Kind() != reflect.Struct || pbIsLeaf(et)
	}
	return true
}

// pbLeafError reports a path going into a value of type t, which has no
// fields; it names the first step below n.
func pbLeafError(t reflect.Type, n *node, path string) error {
	if len(n.children) > 0 {
		path += "." + slices.Sorted(maps.Keys(n.children))[0]
	}
	return fmt.Errorf("projection: field path %q: %s has no fields (it is kept whole or not at all)", path, pbTypeName(t))
}

// pbTypeName names t in error messages: "core/v1.PodSpec" for a type of
// package k8s.io/api/core/v1.
func pbTypeName(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		return t.String()
	}
	pkg := t.PkgPath()
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		if j := strings.LastIndexByte(pkg[:i], '/'); j >= 0 {
			pkg = pkg[j+1:]
		}
	}
	return pkg + "." + t.Name()
}
