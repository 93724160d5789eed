package unstructuredjson

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestFuzzCorpusIsCommitted checks that FuzzDecode's seed corpus is there;
// KINFORMER_UPDATE_UNSTRUCTUREDJSON_CORPUS=1 regenerates it.
func TestFuzzCorpusIsCommitted(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	if os.Getenv("KINFORMER_UPDATE_UNSTRUCTUREDJSON_CORPUS") != "1" {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) < 50 {
			t.Fatalf("FuzzDecode's corpus is missing or short (%d entries, %v)", len(entries), err)
		}
		return
	}
	var seeds [][]byte
	for _, c := range edgeCases() {
		if len(c) < 4096 {
			seeds = append(seeds, []byte(c))
		}
	}
	for i, typ := range builtinTypes() {
		if i%8 != 0 {
			continue
		}
		obj := reflect.New(typ).Interface()
		if !fill(filler(int64(i)).NumElements(0, 2).MaxDepth(5), obj) {
			continue
		}
		if o, ok := obj.(runtime.Object); ok {
			o.GetObjectKind().SetGroupVersionKind(schemaKindOf(typ))
		}
		data, err := json.Marshal(obj)
		if err == nil {
			seeds = append(seeds, data)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range seeds {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s)))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%03d", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
