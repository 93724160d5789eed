package cache

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
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The snapshot file format (version 1), all integers little-endian:
//
//	magic    8 bytes  "KINFSNAP"
//	version  uint16   1
//	header   uvarint length + JSON of snapshotHeader
//	objects  count times: uvarint length + the object, in header.Codec
//	crc      uint32   CRC-32C (Castagnoli) of every byte before it
//
// It is written to a temporary file in the same directory, synced and
// renamed over the old one, so a reader sees the old or the new file whole.
const (
	snapshotMagic   = "KINFSNAP"
	snapshotVersion = 1
	// snapshotMaxRecord bounds one record, so that a corrupt length cannot
	// make the reader allocate without limit (etcd's own limit is 1.5 MiB
	// per object by default).
	snapshotMaxRecord = 64 << 20
)

var snapshotCRCTable = crc32.MakeTable(crc32.Castagnoli)

// snapshotHeader describes a snapshot's content.
type snapshotHeader struct {
	// Identity names the informer's object type (and description) the
	// snapshot was taken of; a snapshot is only loaded by an informer of
	// the same identity.
	Identity string `json:"identity"`
	// Codec is how the objects are encoded: "protobuf" or "json".
	Codec string `json:"codec"`
	// Scope is the informer's SharedIndexInformerOptions.SnapshotScope
	// (namespace and selectors); a snapshot is only loaded by an informer
	// of the same scope. Absent for an unrestricted informer.
	Scope string `json:"scope,omitempty"`
	// Projection is the fingerprint of the projection the objects were
	// read with (SetSnapshotProjection); a snapshot is only loaded by an
	// informer keeping the same fields. Absent for full objects.
	Projection string `json:"projection,omitempty"`
	// ResourceVersion is the version the cache had reached.
	ResourceVersion string `json:"resourceVersion"`
	// Count is the number of objects.
	Count int `json:"count"`
}

// snapshotTie is what a snapshot file is tied to besides its object type:
// the informer's scope and projection.
type snapshotTie struct {
	scope, projection string
}

// describeSnapshotProjection renders a projection fingerprint for an error
// message.
func describeSnapshotProjection(fingerprint string) string {
	if fingerprint == "" {
		return "full objects"
	}
	return "objects of projection " + fingerprint
}

// SnapshotError is the error of a snapshot file that cannot be loaded
// (corrupt, truncated, of another object type, scope or format version) or
// written. kinformer extension, not in client-go.
type SnapshotError struct {
	// Path is the snapshot file.
	Path string
	// Op is "load", "save" or "remove" (a snapshot of sensitive objects
	// found where none may be kept; see SnapshotProtection).
	Op string
	// Err says what is wrong.
	Err error
}

// Error implements error.
func (e *SnapshotError) Error() string {
	return fmt.Sprintf("informer snapshot %s: %s: %v", e.Path, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *SnapshotError) Unwrap() error { return e.Err }

// snapshotCodec encodes and decodes the objects of one informer.
type snapshotCodec struct {
	name   string
	encode func(obj interface{}, buf []byte) ([]byte, error)
	decode func(data []byte) (interface{}, error)
}

// protoMessage is what the generated protobuf code of Kubernetes API types
// provides.
type protoMessage interface {
	Size() int
	MarshalToSizedBuffer(dAtA []byte) (int, error)
	Unmarshal(dAtA []byte) error
}

// snapshotCodecFor picks the codec of example's type: JSON for
// unstructured objects, the types' own protobuf encoding for the API types
// that have one, encoding/json otherwise.
func snapshotCodecFor(example runtime.Object) (snapshotCodec, error) {
	if example == nil {
		return snapshotCodec{}, errors.New("the informer has no example object")
	}
	if _, ok := example.(*unstructured.Unstructured); ok {
		return snapshotCodec{
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
		return snapshotCodec{}, fmt.Errorf("example object of type %T is not a pointer", example)
	}
	elem := t.Elem()
	if _, ok := example.(protoMessage); ok {
		return snapshotCodec{
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
	return snapshotCodec{
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

// snapshotIdentity names what an informer caches: the Go type of its
// example object (with the group/version/kind of an unstructured one) and
// its object description.
func snapshotIdentity(example runtime.Object, description string) string {
	id := fmt.Sprintf("%T", example)
	if t := reflect.TypeOf(example); t != nil && t.Kind() == reflect.Pointer {
		id = t.Elem().PkgPath() + "." + t.Elem().Name()
	}
	if gvk := getExpectedGVKFromObject(example); gvk != nil {
		id += " " + gvk.String()
	}
	if description != "" {
		id += " (" + description + ")"
	}
	return id
}

// writeSnapshot writes objects and rv to path atomically, encrypted with
// key unless it is nil. The directory is created owner-only when missing and
// refused when others may write to it (snapshot_perm.go); the file is 0600.
func writeSnapshot(path, identity string, tie snapshotTie, codec snapshotCodec, objects []interface{}, rv string, key []byte) (err error) {
	dir := filepath.Dir(path)
	if err := ensureSnapshotDir(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
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
	var enc *snapshotEncrypter
	if key != nil {
		if enc, err = newSnapshotEncrypter(tmp, key); err != nil {
			return err
		}
		out = enc
	}
	crc := crc32.New(snapshotCRCTable)
	w := bufio.NewWriterSize(io.MultiWriter(out, crc), 256<<10)
	header, err := json.Marshal(snapshotHeader{Identity: identity, Scope: tie.scope, Projection: tie.projection, Codec: codec.name, ResourceVersion: rv, Count: len(objects)})
	if err != nil {
		return err
	}
	var scratch []byte
	scratch = append(scratch, snapshotMagic...)
	scratch = binary.LittleEndian.AppendUint16(scratch, snapshotVersion)
	scratch = binary.AppendUvarint(scratch, uint64(len(header)))
	scratch = append(scratch, header...)
	if _, err := w.Write(scratch); err != nil {
		return err
	}
	var lenBuf [binary.MaxVarintLen64]byte
	for _, obj := range objects {
		scratch, err = codec.encode(obj, scratch[:0])
		if err != nil {
			return fmt.Errorf("encoding %s: %w", snapshotObjectName(obj), err)
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
	return os.Rename(tmp.Name(), path)
}

// storeObjectsByKey returns the objects of store in key order, so that a
// snapshot's file is the same for the same cache and a warm start hands the
// loaded objects to the handlers in key order, as the first list did.
func storeObjectsByKey(store Store) []interface{} {
	keys := store.ListKeys()
	slices.Sort(keys)
	objs := make([]interface{}, 0, len(keys))
	for _, key := range keys {
		if obj, exists, err := store.GetByKey(key); err == nil && exists {
			objs = append(objs, obj)
		}
	}
	return objs
}

func snapshotObjectName(obj interface{}) string {
	if key, err := MetaNamespaceKeyFunc(obj); err == nil {
		return fmt.Sprintf("%T %s", obj, key)
	}
	return fmt.Sprintf("%T", obj)
}

// errSnapshotNotEncrypted is readSnapshot's error for a plain file read
// with a key.
var errSnapshotNotEncrypted = errors.New("refused: the snapshot is not encrypted, and this informer has a key, so it loads only encrypted snapshots")

// readSnapshot loads the snapshot at path, which must be encrypted with key
// when key is not nil and plain when it is. It returns os.ErrNotExist
// (wrapped) when there is none, and refuses a file or directory another
// user could have written (snapshot_perm.go).
func readSnapshot(path, identity string, tie snapshotTie, codec snapshotCodec, key []byte) ([]interface{}, string, error) {
	if err := checkSnapshotDir(filepath.Dir(path)); err != nil {
		return nil, "", err
	}
	f, err := openSnapshotFile(path)
	if err != nil {
		return nil, "", err
	}
	data, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		return nil, "", err
	}
	switch encrypted := isEncryptedSnapshot(data); {
	case encrypted && key == nil:
		return nil, "", errors.New("the snapshot is encrypted and this informer has no key (SnapshotProtection.Key)")
	case !encrypted && key != nil:
		return nil, "", errSnapshotNotEncrypted
	case encrypted:
		if data, err = decryptSnapshot(data, key); err != nil {
			return nil, "", err
		}
	}
	return parseSnapshot(data, identity, tie, codec)
}

// parseSnapshot decodes the plain snapshot file data.
func parseSnapshot(data []byte, identity string, tie snapshotTie, codec snapshotCodec) ([]interface{}, string, error) {
	const fixed = len(snapshotMagic) + 2
	if len(data) < fixed || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, "", errors.New("not a kinformer snapshot (bad magic)")
	}
	if v := binary.LittleEndian.Uint16(data[len(snapshotMagic):]); v != snapshotVersion {
		return nil, "", fmt.Errorf("snapshot format version %d; this build reads version %d", v, snapshotVersion)
	}
	if len(data) < fixed+4 {
		return nil, "", errors.New("truncated: no checksum")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, snapshotCRCTable); got != sum {
		return nil, "", fmt.Errorf("corrupt or truncated: checksum %08x, file says %08x", got, sum)
	}
	r := bytes.NewReader(body[fixed:])
	next := func(what string) ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("truncated in the length of %s", what)
		}
		if n > snapshotMaxRecord || n > uint64(r.Len()) {
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
	var header snapshotHeader
	if err := json.Unmarshal(raw, &header); err != nil {
		return nil, "", fmt.Errorf("unreadable header: %w", err)
	}
	if header.Identity != identity {
		return nil, "", fmt.Errorf("snapshot of %q, this informer caches %q", header.Identity, identity)
	}
	if header.Scope != tie.scope {
		return nil, "", fmt.Errorf("snapshot holds %s, this informer selects %s", describeSnapshotScope(header.Scope), describeSnapshotScope(tie.scope))
	}
	if header.Projection != tie.projection {
		return nil, "", fmt.Errorf("snapshot holds %s, this informer keeps %s", describeSnapshotProjection(header.Projection), describeSnapshotProjection(tie.projection))
	}
	if header.Codec != codec.name {
		return nil, "", fmt.Errorf("objects encoded as %q, this informer uses %q", header.Codec, codec.name)
	}
	if header.ResourceVersion == "" {
		return nil, "", errors.New("no resourceVersion in the header")
	}
	if header.Count < 0 || header.Count > r.Len() {
		return nil, "", fmt.Errorf("header claims %d objects in %d bytes", header.Count, r.Len())
	}
	objects := make([]interface{}, 0, header.Count)
	for i := 0; i < header.Count; i++ {
		raw, err := next(fmt.Sprintf("object #%d", i))
		if err != nil {
			return nil, "", err
		}
		obj, err := codec.decode(raw)
		if err != nil {
			return nil, "", fmt.Errorf("object #%d cannot be decoded: %w", i, err)
		}
		objects = append(objects, obj)
	}
	if r.Len() != 0 {
		return nil, "", fmt.Errorf("%d bytes after the last of %d objects", r.Len(), header.Count)
	}
	return objects, header.ResourceVersion, nil
}

// reflectorResume is the state a Reflector starts from instead of its
// first list: the objects go to the store's Replace and the watch starts
// at resourceVersion.
type reflectorResume struct {
	objects         []interface{}
	resourceVersion string
}
