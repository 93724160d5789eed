// Command decodecost breaks down what apimachinery's decoders spend on one
// benchmark pod (internal/bench.NewPod), the measurement that issue 26's
// decoder design starts from. For each way an informer receives pods it
// reports, per pod:
//
//   - the totals: CPU time, allocations and bytes allocated (testing.Benchmark);
//   - allocations and bytes by site: the Go type and field whose decoding
//     allocated (from a memory profile at MemProfileRate 1; for protobuf the
//     field is read from the generated Unmarshal code's source line), and what
//     kind of allocation it was (string, slice, slice growth, map, pointer);
//   - what the decoded object keeps: heap blocks by Go type and field path
//     (or JSON path, for unstructured objects), sizes rounded up to the
//     allocator's size classes;
//   - CPU by phase, from a CPU profile: framing and envelope, field decoding,
//     allocation, map inserts, copying, Quantity and Time conversion, JSON
//     scanning, garbage collection.
//
// The scenarios are a protobuf PodList (what a typed informer's LIST
// decodes), a stream of protobuf watch events (its WATCH), and a JSON PodList
// decoded into unstructured objects (a dynamic informer's LIST); the LISTs
// also with kinformer's decoders (internal/pbdecode,
// internal/unstructuredjson), to show which costs they remove.
//
// Usage: go run ./internal/bench/cmd/decodecost [-pods 2000] [-cpu 4s] > report.md
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restwatch "k8s.io/client-go/rest/watch"

	"google.golang.org/protobuf/encoding/protowire"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/internal/bench"
	"github.com/kinformer/kinformer/internal/pbdecode"
	"github.com/kinformer/kinformer/internal/unstructuredjson"
)

// unknownRaw returns the raw object bytes of a protobuf body (the "k8s\x00"
// prefix, then a runtime.Unknown whose field 2 is the object), in place.
func unknownRaw(body []byte) ([]byte, error) {
	const prefix = "k8s\x00"
	if !bytes.HasPrefix(body, []byte(prefix)) {
		return nil, fmt.Errorf("no protobuf prefix")
	}
	b := body[len(prefix):]
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 2 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			return v, nil
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil, fmt.Errorf("no raw object in the envelope")
}

func main() {
	pods := flag.Int("pods", 2000, "pods per LIST and per watch stream")
	cpu := flag.Duration("cpu", 4*time.Second, "how long each scenario runs under the CPU profiler")
	flag.Parse()
	if err := run(os.Stdout, *pods, *cpu); err != nil {
		fmt.Fprintln(os.Stderr, "decodecost:", err)
		os.Exit(1)
	}
}

// scenario is one way of receiving pods: decode decodes the whole input once
// and returns what an informer would keep, and pods is how many pods that is.
type scenario struct {
	name   string
	what   string
	input  int // bytes decoded per run
	pods   int
	decode func() (any, error)
}

func run(w io.Writer, pods int, cpu time.Duration) error {
	scenarios, err := buildScenarios(pods)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# What decoding a benchmark pod costs (apimachinery's decoders)\n\n")
	fmt.Fprintf(w, "Go %s, %s/%s, GOMAXPROCS %d; %d pods per run; command: `go run ./internal/bench/cmd/decodecost -pods %d -cpu %s`.\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), pods, pods, cpu)
	for _, s := range scenarios {
		if err := report(w, s, cpu); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

func buildScenarios(pods int) ([]scenario, error) {
	list := bench.NewPodList(0, pods, "1000")
	pbInfo, ok := kruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), kruntime.ContentTypeProtobuf)
	if !ok {
		return nil, fmt.Errorf("no protobuf serializer")
	}
	jsonInfo, ok := kruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), kruntime.ContentTypeJSON)
	if !ok {
		return nil, fmt.Errorf("no JSON serializer")
	}
	pbList, err := kruntime.Encode(scheme.Codecs.EncoderForVersion(pbInfo.Serializer, v1.SchemeGroupVersion), list)
	if err != nil {
		return nil, err
	}
	jsonList, err := kruntime.Encode(scheme.Codecs.EncoderForVersion(jsonInfo.Serializer, v1.SchemeGroupVersion), list)
	if err != nil {
		return nil, err
	}

	// A watch stream as kube-apiserver writes it in protobuf: one
	// length-prefixed frame per event, each a WatchEvent whose object is the
	// pod in its runtime.Unknown envelope.
	var stream bytes.Buffer
	objEncoder := scheme.Codecs.EncoderForVersion(pbInfo.Serializer, v1.SchemeGroupVersion)
	frameWriter := pbInfo.StreamSerializer.Framer.NewFrameWriter(&stream)
	eventEncoder := pbInfo.StreamSerializer.Serializer
	for i := range list.Items {
		pod := list.Items[i]
		raw, err := kruntime.Encode(objEncoder, &pod)
		if err != nil {
			return nil, err
		}
		ev := &metav1.WatchEvent{Type: string(watch.Modified), Object: kruntime.RawExtension{Raw: raw}}
		if err := eventEncoder.Encode(ev, frameWriter); err != nil {
			return nil, err
		}
	}
	watchBytes := stream.Bytes()

	decoder := scheme.Codecs.WithoutConversion().DecoderToVersion(pbInfo.Serializer, v1.SchemeGroupVersion)
	return []scenario{
		{
			name:  "protobuf LIST",
			what:  "a PodList body decoded by the typed client's REST client (`Result.Into`: the protobuf serializer, the runtime.Unknown envelope, then `(*PodList).Unmarshal`)",
			input: len(pbList), pods: pods,
			decode: func() (any, error) {
				into := &v1.PodList{}
				err := kruntime.DecodeInto(decoder, pbList, into)
				return into, err
			},
		},
		{
			name:  "protobuf WATCH",
			what:  "a stream of MODIFIED events read as client-go's watch does (length-delimited frames, a metav1.WatchEvent each, the embedded pod decoded from its own runtime.Unknown envelope)",
			input: len(watchBytes), pods: pods,
			decode: func() (any, error) {
				frames := pbInfo.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(watchBytes)))
				d := restwatch.NewDecoder(streaming.NewDecoder(frames, pbInfo.StreamSerializer.Serializer), decoder)
				out := make([]kruntime.Object, 0, pods)
				for {
					_, obj, err := d.Decode()
					if err == io.EOF {
						return out, nil
					}
					if err != nil {
						return nil, err
					}
					out = append(out, obj)
				}
			},
		},
		{
			name:  "protobuf LIST, kinformer's decoder",
			what:  "the same PodList body: the runtime.Unknown envelope read in place (no copy of its raw bytes), then internal/pbdecode's generated decoder",
			input: len(pbList), pods: pods,
			decode: func() (any, error) {
				raw, err := unknownRaw(pbList)
				if err != nil {
					return nil, err
				}
				into := &v1.PodList{}
				return into, pbdecode.Unmarshal(raw, into)
			},
		},
		{
			name:  "JSON LIST to unstructured",
			what:  "a PodList body in JSON decoded as the dynamic client does (`unstructured.UnstructuredJSONScheme` into an UnstructuredList)",
			input: len(jsonList), pods: pods,
			decode: func() (any, error) {
				return kruntime.Decode(unstructured.UnstructuredJSONScheme, jsonList)
			},
		},
		{
			name:  "JSON LIST to unstructured, kinformer's decoder",
			what:  "the same JSON body decoded by internal/unstructuredjson",
			input: len(jsonList), pods: pods,
			decode: func() (any, error) {
				return kruntime.Decode(unstructuredjson.Scheme, jsonList)
			},
		},
	}, nil
}

func report(w io.Writer, s scenario, cpu time.Duration) error {
	fmt.Fprintf(w, "## %s\n\n%s; %d bytes per pod on the wire.\n\n", s.name, s.what, s.input/s.pods)

	// Totals.
	var failed error
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.decode(); err != nil {
				failed = err
				b.Fatal(err)
			}
		}
	})
	if failed != nil {
		return failed
	}
	n := float64(res.N * s.pods)
	// CPU time of the process (every thread: the garbage collector's
	// included) over a fixed number of runs, less sensitive than wall time
	// to other processes on the machine.
	const cpuRuns = 5
	runtime.GC()
	cpu0 := processCPU()
	start := time.Now()
	for range cpuRuns {
		if _, err := s.decode(); err != nil {
			return err
		}
	}
	used, wall := processCPU()-cpu0, time.Since(start)
	fmt.Fprintf(w, "Totals per pod: %.1f µs of CPU (process CPU time over %d runs; %.1f µs of wall time), %.0f allocations, %.0f bytes allocated (testing.Benchmark, %d runs of %d pods).\n\n",
		float64(used.Nanoseconds())/float64(cpuRuns*s.pods)/1e3, cpuRuns, float64(wall.Nanoseconds())/float64(cpuRuns*s.pods)/1e3,
		float64(res.MemAllocs)/n, float64(res.MemBytes)/n, res.N, s.pods)

	// Allocation sites.
	sites, err := allocationSites(s)
	if err != nil {
		return err
	}
	writeSites(w, sites, s.pods)

	// What the result keeps: measured as the live heap it adds, and walked.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := s.decode()
	if err != nil {
		return err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	fmt.Fprintf(w, "### What the decoded pods keep\n\nMeasured: %.0f bytes and %.1f heap objects per pod of live heap once decoded (after a GC, the result alive).\n\n",
		float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(s.pods), float64(int64(after.HeapObjects)-int64(before.HeapObjects))/float64(s.pods))
	kept := walkKept(out)
	writeKept(w, kept, s.pods)
	runtime.KeepAlive(out)

	// CPU by phase.
	phases, total, err := cpuPhases(s, cpu)
	if err != nil {
		return err
	}
	writePhases(w, phases, total)
	return nil
}

// site is where allocations happened: the type whose decoding allocated, the
// field (when known) and the kind of allocation.
type site struct {
	typ, field, kind string
}

type amount struct {
	objects, bytes int64
}

func allocationSites(s scenario) (map[site]amount, error) {
	// Warm up (first-use initialisation is not a per-pod cost), then
	// profile every allocation of one run.
	if _, err := s.decode(); err != nil {
		return nil, err
	}
	runtime.GC()
	before := profileRecords()
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	_, err := s.decode()
	runtime.MemProfileRate = old
	if err != nil {
		return nil, err
	}
	// The memory profile publishes a cycle's allocations after two GCs.
	runtime.GC()
	runtime.GC()
	after := profileRecords()
	sites := map[site]amount{}
	for key, a := range after {
		b := before[key]
		d := amount{a.objects - b.objects, a.bytes - b.bytes}
		if d.objects <= 0 {
			continue
		}
		st := classifyStack(key)
		sum := sites[st]
		sum.objects += d.objects
		sum.bytes += d.bytes
		sites[st] = sum
	}
	return sites, nil
}

type stackKey [32]uintptr

func profileRecords() map[stackKey]amount {
	var records []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		records = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		n, ok = runtime.MemProfile(records, true)
		if ok {
			records = records[:n]
			break
		}
	}
	out := make(map[stackKey]amount, len(records))
	for _, r := range records {
		k := stackKey(r.Stack0)
		a := out[k]
		a.objects += r.AllocObjects
		a.bytes += r.AllocBytes
		out[k] = a
	}
	return out
}

// classifyStack names the allocation at the top of stack: the kind from the
// runtime function that allocated, the type and field from the first caller
// outside the runtime.
func classifyStack(stack stackKey) site {
	var pcs []uintptr
	for _, pc := range stack {
		if pc == 0 {
			break
		}
		pcs = append(pcs, pc)
	}
	frames := runtime.CallersFrames(pcs)
	kind := "other"
	for {
		f, more := frames.Next()
		fn := f.Function
		if isRuntime(fn) {
			if k := allocKind(fn); k != "" {
				kind = k
			}
			if !more {
				break
			}
			continue
		}
		typ, field := typeAndField(f)
		return site{typ: typ, field: field, kind: kind}
	}
	return site{typ: "runtime", kind: kind}
}

func isRuntime(fn string) bool {
	return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/runtime/") || strings.HasPrefix(fn, "internal/bytealg")
}

func allocKind(fn string) string {
	switch {
	case strings.Contains(fn, "slicebytetostring") || strings.Contains(fn, "concatstring") || strings.Contains(fn, "rawstring"):
		return "string"
	case strings.Contains(fn, "growslice"):
		return "slice growth"
	case strings.Contains(fn, "makeslice"):
		return "slice"
	case strings.Contains(fn, "newobject"):
		return "new"
	case strings.Contains(fn, "makemap") || strings.Contains(fn, "mapassign") || strings.Contains(fn, "maps."):
		return "map"
	case strings.Contains(fn, "convT") || strings.Contains(fn, "convI"):
		return "interface boxing"
	case strings.Contains(fn, "mallocgc"):
		return ""
	}
	return ""
}

// typeAndField names the frame's function's receiver type (for generated
// Unmarshal methods) or the function, and the field whose case of the
// generated code the line is in.
func typeAndField(f runtime.Frame) (string, string) {
	fn := f.Function
	name := fn
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		name = fn[i+1:]
	}
	if strings.HasSuffix(name, ".Unmarshal") && strings.Contains(name, "(*") {
		typ := strings.TrimSuffix(strings.Replace(strings.Replace(name, "(*", "", 1), ")", "", 1), ".Unmarshal")
		return typ, generatedField(f.File, f.Line)
	}
	return name, ""
}

var sourceCache = map[string][]string{}

// generatedField finds the field a line of gogo-generated Unmarshal code
// decodes: the nearest "case N:" above it, whose wire-type check names the
// field ("... for field Name").
func generatedField(file string, line int) string {
	lines, ok := sourceCache[file]
	if !ok {
		b, err := os.ReadFile(file)
		if err == nil {
			lines = strings.Split(string(b), "\n")
		}
		sourceCache[file] = lines
	}
	if line <= 0 || line > len(lines) {
		return ""
	}
	for i := line - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "func ") {
			return "(message)"
		}
		if strings.HasPrefix(l, "case ") && strings.HasSuffix(l, ":") {
			for j := i; j < len(lines) && j < i+6; j++ {
				if k := strings.Index(lines[j], "for field "); k >= 0 {
					rest := lines[j][k+len("for field "):]
					if e := strings.IndexAny(rest, "\"\\ "); e >= 0 {
						rest = rest[:e]
					}
					return rest
				}
			}
			return l
		}
	}
	return ""
}

func writeSites(w io.Writer, sites map[site]amount, pods int) {
	type row struct {
		site
		amount
	}
	var rows []row
	var total amount
	byKind := map[string]amount{}
	for s, a := range sites {
		rows = append(rows, row{s, a})
		total.objects += a.objects
		total.bytes += a.bytes
		k := byKind[s.kind]
		k.objects += a.objects
		k.bytes += a.bytes
		byKind[s.kind] = k
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].objects != rows[j].objects {
			return rows[i].objects > rows[j].objects
		}
		return fmt.Sprint(rows[i].site) < fmt.Sprint(rows[j].site)
	})
	p := float64(pods)
	fmt.Fprintf(w, "### Allocations by kind (memory profile at rate 1, one run)\n\n")
	fmt.Fprintf(w, "%.1f allocations and %.0f bytes per pod in all. The profile records each allocation of the tiny allocator's 16-byte blocks rather than each tiny object (pointer-free values under 16 bytes: short strings, `*bool`, `*int64`), so it counts fewer allocations than the totals above; the bytes agree.\n\n", float64(total.objects)/p, float64(total.bytes)/p)
	fmt.Fprintf(w, "| kind | allocations per pod | bytes per pod | share of allocations |\n| --- | ---: | ---: | ---: |\n")
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return byKind[kinds[i]].objects > byKind[kinds[j]].objects })
	for _, k := range kinds {
		a := byKind[k]
		fmt.Fprintf(w, "| %s | %.1f | %.0f | %.0f %% |\n", k, float64(a.objects)/p, float64(a.bytes)/p, 100*float64(a.objects)/float64(total.objects))
	}
	fmt.Fprintf(w, "\n### Allocations by type and field (sites with at least 0.5 allocations or 64 bytes per pod)\n\n")
	fmt.Fprintf(w, "| type | field | kind | allocations per pod | bytes per pod |\n| --- | --- | --- | ---: | ---: |\n")
	var rest amount
	for _, r := range rows {
		if float64(r.objects)/p < 0.5 && float64(r.bytes)/p < 64 {
			rest.objects += r.objects
			rest.bytes += r.bytes
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.1f | %.0f |\n", r.typ, r.field, r.kind, float64(r.objects)/p, float64(r.bytes)/p)
	}
	fmt.Fprintf(w, "| (other sites) | | | %.1f | %.0f |\n\n", float64(rest.objects)/p, float64(rest.bytes)/p)
}

// processCPU returns the CPU time (user and system, every thread) the
// process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
