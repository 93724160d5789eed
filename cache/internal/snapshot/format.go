package snapshot

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The snapshot file format (version 1), all integers little-endian:
//
//	magic    8 bytes  "KINFSNAP"
//	version  uint16   1
//	header   uvarint length + JSON of header
//	objects  count times: uvarint length + the object, in header.Codec
//	crc      uint32   CRC-32C (Castagnoli) of every byte before it
//
// It is written to a temporary file in the same directory, synced and
// renamed over the old one, so a reader sees the old or the new file whole.
const (
	// Magic is the first bytes of a plain snapshot file; the format
	// version, a little-endian uint16, follows it.
	Magic         = "KINFSNAP"
	formatVersion = 1
	// maxRecord bounds one record, so that a corrupt length cannot make
	// the reader allocate without limit (etcd's own limit is 1.5 MiB per
	// object by default).
	maxRecord = 64 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// header describes a snapshot's content.
type header struct {
	// Identity names the informer's object type (and description) the
	// snapshot was taken of; a snapshot is only loaded by an informer of
	// the same identity.
	Identity string `json:"identity"`
	// Codec is how the objects are encoded: "protobuf" or "json".
	Codec string `json:"codec"`
	// Scope is the informer's snapshot scope (namespace and selectors,
	// possibly the cluster); a snapshot is only loaded by an informer of
	// the same scope. Absent for an unrestricted informer.
	Scope string `json:"scope,omitempty"`
	// Projection is the fingerprint of the projection the objects were
	// read with; a snapshot is only loaded by an informer keeping the same
	// fields. Absent for full objects.
	Projection string `json:"projection,omitempty"`
	// ResourceVersion is the version the cache had reached.
	ResourceVersion string `json:"resourceVersion"`
	// Count is the number of objects.
	Count int `json:"count"`
}

// Tie is what a snapshot file is tied to besides its object type: the
// informer's scope (ScopeFor, possibly followed by the cluster's identity)
// and the fingerprint of its projection ("" for full objects). A file is
// read only by a File with an equal Tie.
type Tie struct {
	Scope, Projection string
}

// describeProjection renders a projection fingerprint for an error message.
func describeProjection(fingerprint string) string {
	if fingerprint == "" {
		return "full objects"
	}
	return "objects of projection " + fingerprint
}

// Codec encodes and decodes the objects of one informer. Build it with
// CodecFor; the zero value encodes nothing.
type Codec struct {
	name   string
	encode func(obj interface{}, buf []byte) ([]byte, error)
	decode func(data []byte) (interface{}, error)
}

// Name is the codec's name as a file's header records it: "protobuf" or
// "json".
func (c Codec) Name() string { return c.name }

// protoMessage is what the generated protobuf code of Kubernetes API types
// provides.
type protoMessage interface {
	Size() int
	MarshalToSizedBuffer(dAtA []byte) (int, error)
	Unmarshal(dAtA []byte) error
}

// CodecFor picks the codec of example's type: JSON for unstructured
// objects, the types' own protobuf encoding for the API types that have
// one, encoding/json otherwise. It fails for a nil example and for one that
// is not a pointer. The codec's encoder refuses an object of another type
// than example's.
func CodecFor(example runtime.Object) (Codec, error) {
	if example == nil {
		return Codec{}, errors.New("the informer has no example object")
	}
	if _, ok := example.(*unstructured.Unstructured); ok {
		return Codec{
			name: "json",
			encode: func(obj interface{}, buf []byte) ([]byte, error) {
				u, ok := obj.(*unstructured.Unstructured)
				if !ok {
					return nil, fmt.Errorf("cached object of type %T is not *unstructured.Unstructured", obj)
				}
				data, err := u.MarshalJSON()
				return append(buf, data...), err
			},
			decode: func(data []byte) (interface{}, error) {
				u := &unstructured.Unstructured{}
				return u, u.UnmarshalJSON(data)
			},
		}, nil
	}
	t := reflect.TypeOf(example)
	if t.Kind() != reflect.Pointer {
		return Codec{}, fmt.Errorf("example object of type %T is not a pointer", example)
	}
	elem := t.Elem()
	if _, ok := example.(protoMessage); ok {
		return Codec{
			name: "protobuf",
			encode: func(obj interface{}, buf []byte) ([]byte, error) {
				if reflect.TypeOf(obj) != t {
					return nil, fmt.Errorf("cached object of type %T is not %v", obj, t)
				}
				m := obj.(protoMessage)
				n := m.Size()
				start := len(buf)
				buf = append(buf, make([]byte, n)...)
				if _, err := m.MarshalToSizedBuffer(buf[start:]); err != nil {
					return nil, err
				}
				return buf, nil
			},
			decode: func(data []byte) (interface{}, error) {
				obj := reflect.New(elem).Interface()
				return obj, obj.(protoMessage).Unmarshal(data)
			},
		}, nil
	}
	return Codec{
		name: "json",
		encode: func(obj interface{}, buf []byte) ([]byte, error) {
			if reflect.TypeOf(obj) != t {
				return nil, fmt.Errorf("cached object of type %T is not %v", obj, t)
			}
			data, err := json.Marshal(obj)
			return append(buf, data...), err
		},
		decode: func(data []byte) (interface{}, error) {
			obj := reflect.New(elem).Interface()
			return obj, json.Unmarshal(data, obj)
		},
	}, nil
}

// Identity names what an informer caches: the Go type of its example
// object (with the group/version/kind of an unstructured one) and its
// object description. A file is read only by a File of the same identity.
func Identity(example runtime.Object, description string) string {
	id := fmt.Sprintf("%T", example)
	if t := reflect.TypeOf(example); t != nil && t.Kind() == reflect.Pointer {
		id = t.Elem().PkgPath() + "." + t.Elem().Name()
	}
	if gvk := unstructuredKind(example); gvk != nil {
		id += " " + gvk.String()
	}
	if description != "" {
		id += " (" + description + ")"
	}
	return id
}

// unstructuredKind returns the group/version/kind example declares when it
// is an unstructured object that declares one, else nil.
func unstructuredKind(example interface{}) *schema.GroupVersionKind {
	u, ok := example.(*unstructured.Unstructured)
	if !ok || u == nil {
		return nil
	}
	gvk := u.GroupVersionKind()
	if gvk.Empty() {
		return nil
	}
	return &gvk
}

// File is one informer's snapshot file and what its content is tied to.
// Its methods may be called concurrently on distinct paths; two writers of
// one path leave one of their files whole.
type File struct {
	// Path is where the file lives.
	Path string
	// Identity is the informer's Identity.
	Identity string
	// Tie is the informer's scope and projection.
	Tie Tie
	// Codec encodes the informer's objects (CodecFor).
	Codec Codec
	// Key, when not nil, is the KeySize-byte key the file is encrypted
	// with; nil means a plain file.
	Key []byte
	// Describe names an object in the error of an object that cannot be
	// encoded; nil names it by its Go type.
	Describe func(obj interface{}) string
}

// describe names obj for an error message.
func (f File) describe(obj interface{}) string {
	if f.Describe != nil {
		return f.Describe(obj)
	}
	return fmt.Sprintf("%T", obj)
}

// Write writes objects, in their order, and rv to the file atomically,
// encrypted with f.Key unless it is nil: a reader sees the old file or the
// new one whole, and a failed write leaves no temporary file behind. The
// directory is created owner-only when missing and refused when others may
// write to it (perm.go); the file is 0600.
func (f File) Write(objects []interface{}, rv string) (err error) {
	dir := filepath.Dir(f.Path)
	if err := ensureDir(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(f.Path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	// CreateTemp makes the file 0600 already; say so, whatever the umask.
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	var out io.Writer = tmp
	var enc *encrypter
	if f.Key != nil {
		if enc, err = newEncrypter(tmp, f.Key); err != nil {
			return err
		}
		out = enc
	}
	crc := crc32.New(crcTable)
	w := bufio.NewWriterSize(io.MultiWriter(out, crc), 256<<10)
	head, err := json.Marshal(header{Identity: f.Identity, Scope: f.Tie.Scope, Projection: f.Tie.Projection, Codec: f.Codec.name, ResourceVersion: rv, Count: len(objects)})
	if err != nil {
		return err
	}
	var scratch []byte
	scratch = append(scratch, Magic...)
	scratch = binary.LittleEndian.AppendUint16(scratch, formatVersion)
	scratch = binary.AppendUvarint(scratch, uint64(len(head)))
	scratch = append(scratch, head...)
	if _, err := w.Write(scratch); err != nil {
		return err
	}
	var lenBuf [binary.MaxVarintLen64]byte
	for _, obj := range objects {
		scratch, err = f.Codec.encode(obj, scratch[:0])
		if err != nil {
			return fmt.Errorf("encoding %s: %w", f.describe(obj), err)
		}
		n := binary.PutUvarint(lenBuf[:], uint64(len(scratch)))
		if _, err := w.Write(lenBuf[:n]); err != nil {
			return err
		}
		if _, err := w.Write(scratch); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if _, err := out.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return err
	}
	if enc != nil {
		if err := enc.Close(); err != nil {
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}

// ErrNotEncrypted is Read's error for a plain file read with a key.
var ErrNotEncrypted = errors.New("refused: the snapshot is not encrypted, and this informer has a key, so it loads only encrypted snapshots")

// Read loads the file, which must be encrypted with f.Key when it is not
// nil and plain when it is, and returns its objects in their written order
// and its resourceVersion. It returns an error wrapping os.ErrNotExist when
// there is none; ErrNotEncrypted for a plain file read with a key; and an
// error saying why for a file or directory another user could have written
// (perm.go), an encrypted file that does not authenticate with the key, and
// a file that is corrupt, truncated, of another format version, or of
// another identity, tie or codec than f's.
func (f File) Read() ([]interface{}, string, error) {
	if err := checkDir(filepath.Dir(f.Path)); err != nil {
		return nil, "", err
	}
	file, err := openFile(f.Path)
	if err != nil {
		return nil, "", err
	}
	data, err := io.ReadAll(file)
	_ = file.Close()
	if err != nil {
		return nil, "", err
	}
	switch encrypted := IsEncrypted(data); {
	case encrypted && f.Key == nil:
		return nil, "", errors.New("the snapshot is encrypted and this informer has no key (SnapshotProtection.Key)")
	case !encrypted && f.Key != nil:
		return nil, "", ErrNotEncrypted
	case encrypted:
		if data, err = decrypt(data, f.Key); err != nil {
			return nil, "", err
		}
	}
	return f.parse(data)
}

// parse decodes the plain file content data.
func (f File) parse(data []byte) ([]interface{}, string, error) {
	const fixed = len(Magic) + 2
	if len(data) < fixed || string(data[:len(Magic)]) != Magic {
		return nil, "", errors.New("not a kinformer snapshot (bad magic)")
	}
	if v := binary.LittleEndian.Uint16(data[len(Magic):]); v != formatVersion {
		return nil, "", fmt.Errorf("snapshot format version %d; this build reads version %d", v, formatVersion)
	}
	if len(data) < fixed+4 {
		return nil, "", errors.New("truncated: no checksum")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, crcTable); got != sum {
		return nil, "", fmt.Errorf("corrupt or truncated: checksum %08x, file says %08x", got, sum)
	}
	r := bytes.NewReader(body[fixed:])
	next := func(what string) ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("truncated in the length of %s", what)
		}
		if n > maxRecord || n > uint64(r.Len()) {
			return nil, fmt.Errorf("truncated or corrupt: %s claims %d bytes, %d left", what, n, r.Len())
		}
		off := len(body) - r.Len()
		_, _ = r.Seek(int64(n), io.SeekCurrent)
		return body[off : off+int(n)], nil
	}
	raw, err := next("the header")
	if err != nil {
		return nil, "", err
	}
	var head header
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, "", fmt.Errorf("unreadable header: %w", err)
	}
	if head.Identity != f.Identity {
		return nil, "", fmt.Errorf("snapshot of %q, this informer caches %q", head.Identity, f.Identity)
	}
	if head.Scope != f.Tie.Scope {
		return nil, "", fmt.Errorf("snapshot holds %s, this informer selects %s", describeScope(head.Scope), describeScope(f.Tie.Scope))
	}
	if head.Projection != f.Tie.Projection {
		return nil, "", fmt.Errorf("snapshot holds %s, this informer keeps %s", describeProjection(head.Projection), describeProjection(f.Tie.Projection))
	}
	if head.Codec != f.Codec.name {
		return nil, "", fmt.Errorf("objects encoded as %q, this informer uses %q", head.Codec, f.Codec.name)
	}
	if head.ResourceVersion == "" {
		return nil, "", errors.New("no resourceVersion in the header")
	}
	if head.Count < 0 || head.Count > r.Len() {
		return nil, "", fmt.Errorf("header claims %d objects in %d bytes", head.Count, r.Len())
	}
	objects := make([]interface{}, 0, head.Count)
	for i := 0; i < head.Count; i++ {
		raw, err := next(fmt.Sprintf("object #%d", i))
		if err != nil {
			return nil, "", err
		}
		obj, err := f.Codec.decode(raw)
		if err != nil {
			return nil, "", fmt.Errorf("object #%d cannot be decoded: %w", i, err)
		}
		objects = append(objects, obj)
	}
	if r.Len() != 0 {
		return nil, "", fmt.Errorf("%d bytes after the last of %d objects", r.Len(), head.Count)
	}
	return objects, head.ResourceVersion, nil
}
