package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// phase names, in the order the report lists them.
var phaseOrder = []string{
	"framing and envelope",
	"field decoding",
	"first pass (sizing, counting)",
	"JSON scanning and value building",
	"Quantity parsing",
	"Time conversion",
	"allocation",
	"map inserts",
	"copying",
	"garbage collection",
	"other",
}

// cpuPhases profiles repeated decodes of s for about d and sums the CPU
// samples by phase, each sample booked to the first phase its stack shows
// (garbage collection first, wherever it is on the stack, then allocation,
// then the leaf's own phase).
func cpuPhases(s scenario, d time.Duration) (map[string]time.Duration, time.Duration, error) {
	var buf bytes.Buffer
	runtime.GC()
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, 0, err
	}
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		if _, err = s.decode(); err != nil {
			break
		}
	}
	pprof.StopCPUProfile()
	if err != nil {
		return nil, 0, err
	}
	stacks, err := parseCPUProfile(buf.Bytes())
	if err != nil {
		return nil, 0, fmt.Errorf("reading the CPU profile: %w", err)
	}
	phases := map[string]time.Duration{}
	var total time.Duration
	for _, st := range stacks {
		p := phaseOf(st.frames)
		phases[p] += st.cpu
		total += st.cpu
	}
	return phases, total, nil
}

func phaseOf(frames []string) string {
	for _, f := range frames {
		switch {
		case strings.HasPrefix(f, "runtime.gcBgMarkWorker"), strings.HasPrefix(f, "runtime.gcAssistAlloc"),
			strings.HasPrefix(f, "runtime.gcDrain"), strings.HasPrefix(f, "runtime.bgsweep"),
			strings.HasPrefix(f, "runtime.bgscavenge"), strings.HasPrefix(f, "runtime.markroot"),
			f == "runtime.GC", strings.HasPrefix(f, "runtime.gcStart"):
			return "garbage collection"
		}
	}
	for _, f := range frames {
		if strings.HasPrefix(f, "runtime.mallocgc") || strings.HasPrefix(f, "runtime.(*mcache)") ||
			strings.HasPrefix(f, "runtime.(*mcentral)") || strings.HasPrefix(f, "runtime.(*mheap)") {
			return "allocation"
		}
	}
	if len(frames) == 0 {
		return "other"
	}
	// The leaf's phase, looking through runtime helpers to their caller
	// for the decoding phases.
	leaf := frames[0]
	switch {
	case strings.Contains(leaf, "mapassign") || strings.HasPrefix(leaf, "internal/runtime/maps."):
		return "map inserts"
	case strings.Contains(leaf, "memmove") || strings.Contains(leaf, "growslice") || strings.Contains(leaf, "memclr"):
		return "copying"
	}
	for _, f := range frames {
		if isRuntime(f) {
			continue
		}
		switch {
		case strings.Contains(f, "pbdecode.(*sizer).size") || strings.HasSuffix(f, "pbdecode.count"):
			return "first pass (sizing, counting)"
		case strings.Contains(f, "internal/pbdecode.unknownRaw") || strings.HasSuffix(f, "decodecost.unknownRaw"):
			return "framing and envelope"
		case strings.Contains(f, "internal/pbdecode."):
			return "field decoding"
		case strings.Contains(f, "internal/unstructuredjson."):
			return "JSON scanning and value building"
		case strings.Contains(f, "resource.") && (strings.Contains(f, "Quantity") || strings.Contains(f, "parseQuantity") || strings.Contains(f, "inf.")):
			return "Quantity parsing"
		case strings.Contains(f, "v1.(*Time).") || strings.Contains(f, "v1.(*Timestamp).") || strings.HasPrefix(f, "time."):
			return "Time conversion"
		case strings.Contains(f, "runtime.(*Unknown).Unmarshal") || strings.Contains(f, "serializer/protobuf") ||
			strings.Contains(f, "framer") || strings.Contains(f, "serializer/streaming") || strings.Contains(f, "rest/watch") ||
			strings.Contains(f, "(*RawExtension).Unmarshal") || strings.Contains(f, "(*WatchEvent).Unmarshal"):
			return "framing and envelope"
		case strings.HasSuffix(f, ".Unmarshal") || strings.Contains(f, "sovGenerated") || strings.Contains(f, "skipGenerated"):
			return "field decoding"
		case strings.HasPrefix(f, "encoding/json") || strings.Contains(f, "sigs.k8s.io/json") || strings.Contains(f, "json-iterator") ||
			strings.Contains(f, "unstructured") || strings.HasPrefix(f, "strconv.") || strings.Contains(f, "serializer/json"):
			return "JSON scanning and value building"
		}
		return "other"
	}
	return "other"
}

func writePhases(w io.Writer, phases map[string]time.Duration, total time.Duration) {
	fmt.Fprintf(w, "### CPU by phase (CPU profile, %s of samples)\n\n", total.Round(time.Millisecond))
	fmt.Fprintf(w, "| phase | share of CPU |\n| --- | ---: |\n")
	order := append([]string(nil), phaseOrder...)
	sort.SliceStable(order, func(i, j int) bool { return phases[order[i]] > phases[order[j]] })
	for _, p := range order {
		if phases[p] == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %.1f %% |\n", p, 100*float64(phases[p])/float64(total))
	}
	fmt.Fprintln(w)
}

// cpuStack is one sample of a CPU profile: its frames, leaf first, and the
// CPU time it stands for.
type cpuStack struct {
	frames []string
	cpu    time.Duration
}

// parseCPUProfile reads the samples of a gzipped pprof CPU profile (the
// profile.proto messages Profile, Sample, Location, Line and Function).
func parseCPUProfile(gz []byte) ([]cpuStack, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var (
		strs      []string
		functions = map[uint64]int64{}    // function id -> name's string index
		locations = map[uint64][]uint64{} // location id -> function ids, innermost first
		samples   []struct {
			locs   []uint64
			values []int64
		}
		valueIndex = -1
		sampleType int
	)
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1: // sample_type
			sampleType++
			valueIndex = sampleType - 1 // the last sample type: CPU nanoseconds
		case 2: // sample
			var s struct {
				locs   []uint64
				values []int64
			}
			if err := fields(v, func(n protowire.Number, t protowire.Type, vb []byte, x uint64) error {
				vals, err := varints(t, vb, x)
				if err != nil {
					return err
				}
				switch n {
				case 1:
					s.locs = append(s.locs, vals...)
				case 2:
					for _, x := range vals {
						s.values = append(s.values, int64(x))
					}
				}
				return nil
			}); err != nil {
				return err
			}
			samples = append(samples, s)
		case 4: // location
			var id uint64
			var fns []uint64
			if err := fields(v, func(n protowire.Number, _ protowire.Type, vb []byte, x uint64) error {
				switch n {
				case 1:
					id = x
				case 4:
					return fields(vb, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
						if n == 1 {
							fns = append(fns, x)
						}
						return nil
					})
				}
				return nil
			}); err != nil {
				return err
			}
			locations[id] = fns
		case 5: // function
			var id uint64
			var name int64
			if err := fields(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
				switch n {
				case 1:
					id = x
				case 2:
					name = int64(x)
				}
				return nil
			}); err != nil {
				return err
			}
			functions[id] = name
		case 6: // string_table
			strs = append(strs, string(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if valueIndex < 0 {
		return nil, errors.New("no sample type")
	}
	out := make([]cpuStack, 0, len(samples))
	for _, s := range samples {
		if valueIndex >= len(s.values) {
			continue
		}
		var frames []string
		for _, loc := range s.locs {
			for _, fn := range locations[loc] {
				if idx := functions[fn]; idx >= 0 && int(idx) < len(strs) {
					frames = append(frames, strs[idx])
				}
			}
		}
		out = append(out, cpuStack{frames: frames, cpu: time.Duration(s.values[valueIndex])})
	}
	return out, nil
}

// fields calls f for every field of the protobuf message b: v is a
// length-delimited field's bytes, x a varint's value.
func fields(b []byte, f func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// varints returns a repeated varint field's values, packed or not.
func varints(t protowire.Type, v []byte, x uint64) ([]uint64, error) {
	if t == protowire.VarintType {
		return []uint64{x}, nil
	}
	var out []uint64
	for len(v) > 0 {
		y, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		out = append(out, y)
		v = v[n:]
	}
	return out, nil
}
