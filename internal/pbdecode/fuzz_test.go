package pbdecode

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// typeByName finds a supported type by its Go name (e.g. "v1.Pod" for
// *k8s.io/api/core/v1.Pod, with the package path: "k8s.io/api/core/v1.Pod").
func typeByName(name string) (reflect.Type, bool) {
	for t := range roots {
		if t.Elem().PkgPath()+"."+t.Elem().Name() == name {
			return t, true
		}
	}
	return nil, false
}

// FuzzUnmarshal decodes arbitrary bytes as one of the supported types with
// apimachinery's generated code and with Unmarshal, which must agree (see
// requireSameDecoding). The committed corpus (testdata/fuzz/FuzzUnmarshal)
// holds one random object of every supported type; regenerate it with
// KINFORMER_UPDATE_PBDECODE_CORPUS=1 go test -run TestFuzzCorpusHasEveryType.
func FuzzUnmarshal(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		typ, ok := typeByName(name)
		if !ok {
			t.Skip()
		}
		requireSameDecoding(t, typ, data)
	})
}

func corpusFile(typ reflect.Type) string {
	name := typ.Elem().PkgPath() + "." + typ.Elem().Name()
	safe := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '/' || c == '.' {
			c = '_'
		}
		safe = append(safe, c)
	}
	return filepath.Join("testdata", "fuzz", "FuzzUnmarshal", string(safe))
}

func TestFuzzCorpusHasEveryType(t *testing.T) {
	update := os.Getenv("KINFORMER_UPDATE_PBDECODE_CORPUS") == "1"
	for i, typ := range rootTypes() {
		path := corpusFile(typ)
		if !update {
			_, err := os.Stat(path)
			if err != nil {
				t.Errorf("no fuzz corpus entry for %s (%s)", typ, path)
			}
			continue
		}
		obj := reflect.New(typ.Elem()).Interface()
		filler(uint64(1000+i)).NumElements(0, 2).MaxDepth(6).Fill(obj)
		b, err := obj.(protoMessage).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		name := typ.Elem().PkgPath() + "." + typ.Elem().Name()
		content := fmt.Sprintf("go test fuzz v1\nstring(%s)\n[]byte(%s)\n", strconv.Quote(name), strconv.Quote(string(b)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
