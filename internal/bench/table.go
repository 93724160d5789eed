package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Side prefixes of the figures the benchmarks report: "k-sync-ms" is
// kinformer's time to sync, "c-sync-ms" client-go's, "f-sync-ms" the floor's.
const (
	SideKinformer = "k"
	SideClientGo  = "c"
	SideFloor     = "f"
)

// The keys of a raw results file's header lines, "# <key>: <value>", which
// `make bench` writes around the benchmarks' output (benchtable -header
// writes the first ones).
const (
	HeaderCommit    = "commit"
	HeaderStarted   = "started"
	HeaderMachine   = "machine"
	HeaderLoadStart = "load average at start"
	HeaderSizes     = "sizes"
	HeaderCommand   = "command"
	// HeaderRun precedes each `go test` invocation's output with its
	// command line; it may repeat.
	HeaderRun     = "run"
	HeaderWall    = "wall time"
	HeaderLoadEnd = "load average at end"
)

// Results holds what ParseBench read from `go test -bench` output: for
// every benchmark (name without the GOMAXPROCS suffix) and unit, the values
// of all result lines, in order; the lines that say a benchmark or the
// test binary failed; and the header lines of a raw results file.
type Results struct {
	// Names lists the benchmarks in order of first appearance.
	Names []string
	// Values maps benchmark name, then unit, to the values of each result
	// line. With one pair per benchmark op (-benchtime 1x), the i-th value
	// of "k-<figure>" and of "c-<figure>" come from the same pair.
	Values map[string]map[string][]float64
	// Lines counts the result lines of each benchmark.
	Lines map[string]int
	// Failures holds the lines that report a failure: "--- FAIL", "FAIL",
	// "panic:", "fatal error:", or a benchmark line that says FAIL.
	Failures []string
	// Header maps the keys of the raw file's header lines ("# key: value",
	// see RunHeader) to their values; Runs lists the values of the "# run:"
	// lines (the commands that produced the output), in order.
	Header map[string]string
	Runs   []string
	// AA holds the A/A controls that Rows judges readings and targets
	// against (ParseBench of `make bench-aa`'s raw output, see
	// AASpreads); nil for none.
	AA *Results
}

// ParseBench reads `go test -bench` output, as a raw results file of `make
// bench` holds it: it collects the figures of every benchmark result line,
// the lines that report a failure, and the "# key: value" header lines;
// other lines are ignored. It fails only when r does.
func ParseBench(r io.Reader) (*Results, error) {
	res := &Results{Values: map[string]map[string][]float64{}, Lines: map[string]int{}, Header: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if reportsFailure(trimmed) {
			res.Failures = append(res.Failures, trimmed)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			if key, value, ok := strings.Cut(rest, ": "); ok {
				if key == HeaderRun {
					res.Runs = append(res.Runs, value)
				} else {
					res.Header[key] = value
				}
			}
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		units, ok := res.Values[name]
		if !ok {
			units = map[string][]float64{}
			res.Values[name] = units
			res.Names = append(res.Names, name)
		}
		res.Lines[name]++
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			units[fields[i+1]] = append(units[fields[i+1]], v)
		}
	}
	return res, sc.Err()
}

// reportsFailure tells whether a line (trimmed) of `go test` output says
// that a benchmark, a test or the binary failed.
func reportsFailure(line string) bool {
	switch {
	case strings.HasPrefix(line, "--- FAIL"), line == "FAIL", strings.HasPrefix(line, "FAIL\t"), strings.HasPrefix(line, "FAIL "),
		strings.HasPrefix(line, "panic:"), strings.HasPrefix(line, "fatal error:"):
		return true
	case strings.HasPrefix(line, "Benchmark"):
		return slices.Contains(strings.Fields(line), "FAIL") || strings.Contains(line, "--- FAIL")
	}
	return false
}

// Check reports what makes res unfit for a table: failures in the output,
// no benchmark results at all, and a figure not reported on every result
// line of its benchmark (the pairs are matched by line). With full it also
// requires every benchmark of the protocol (ProtocolBenchmarks) with its
// figures, so that a skipped scenario fails the run. It returns nil when
// res is fit, else all the problems joined.
func (res *Results) Check(full bool) error {
	var errs []error
	for _, line := range res.Failures {
		errs = append(errs, fmt.Errorf("the output reports a failure: %s", line))
	}
	if len(res.Names) == 0 {
		errs = append(errs, errors.New("no benchmark results in the input"))
	}
	for _, name := range res.Names {
		units := res.Values[name]
		var sided []string
		for unit := range units {
			if side, _, ok := strings.Cut(unit, "-"); ok && (side == SideKinformer || side == SideClientGo || side == SideFloor) {
				sided = append(sided, unit)
			}
		}
		slices.Sort(sided)
		for _, unit := range sided {
			if n := len(units[unit]); n != res.Lines[name] {
				errs = append(errs, fmt.Errorf("Benchmark%s: %s is on %d of its %d result lines; every line must report every figure, since pairs are matched by line", name, unit, n, res.Lines[name]))
			}
		}
	}
	if full {
		for _, p := range ProtocolBenchmarks() {
			units, ok := res.Values[p.Name]
			if !ok {
				errs = append(errs, fmt.Errorf("Benchmark%s: missing from the full run", p.Name))
				continue
			}
			for _, f := range p.Figures {
				sides := []string{SideKinformer, SideClientGo}
				if p.Floor {
					sides = append(sides, SideFloor)
				}
				for _, side := range sides {
					if _, ok := units[side+"-"+f]; !ok {
						errs = append(errs, fmt.Errorf("Benchmark%s: figure %s-%s missing from the full run", p.Name, side, f))
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}

// ProtocolBenchmark is one benchmark `make bench` must produce, with the
// figures each side (kinformer, client-go, and the floor when Floor) must
// report.
type ProtocolBenchmark struct {
	Name    string
	Figures []string
	Floor   bool
}

// ProtocolBenchmarks returns the benchmarks and figures of a full run of
// `make bench` (KINFORMER_BENCH_FULL=1 and the real API server), as the
// benchmark protocol lists them; all of internal/bench's, and the
// controller-runtime manager of the nested module interop/controllerruntime.
func ProtocolBenchmarks() []ProtocolBenchmark {
	sync := []string{"sync-ms", "peaklive-MB", "retained-MB", "allocs/pod"}
	events := []string{"events/s", "allocs/event", "B/event"}
	overHTTP := []string{"sync-ms", "peaklive-MB", "allocs/pod", "cpu-us/pod"}
	projected := []string{"sync-ms", "peaklive-MB", "retained-MB", "B/pod", "cpu-us/pod"}
	blocked := []string{"others-events/s", "sent-events/s", "others/sent", "backlog-MB", "after-release"}
	storeOps := []string{"add-ms", "update-ms", "list-ms", "delete-ms"}
	indexerOps := append(slices.Clone(storeOps), "byindex-ms")
	return []ProtocolBenchmark{
		{Name: "Sync/pods=1000", Figures: sync, Floor: true},
		{Name: "Sync/pods=10000", Figures: sync, Floor: true},
		{Name: "Sync/pods=50000", Figures: sync, Floor: true},
		{Name: "Sync/pods=100000", Figures: sync, Floor: true},
		{Name: "Events/handlers=1", Figures: events, Floor: true},
		{Name: "Events/handlers=10", Figures: events, Floor: true},
		{Name: "Events/handlers=50", Figures: events, Floor: true},
		{Name: "Events/work=1us/handlers=1", Figures: events, Floor: true},
		{Name: "Events/work=1us/handlers=10", Figures: events, Floor: true},
		{Name: "Relist/pods=50000", Figures: []string{"relist-ms", "peaklive-MB", "retained-MB", "steady-MB", "peaklive/steady", "retained/steady"}},
		{Name: "Relist/pagewise/pods=50000", Figures: []string{"relist-ms", "peaklive-MB", "retained-MB", "steady-MB", "peaklive/steady", "retained/steady"}},
		{Name: "HTTP/json/pods=20000", Figures: overHTTP},
		{Name: "HTTP/default/pods=20000", Figures: overHTTP},
		{Name: "Lean/typed/pods=10000", Figures: []string{"B/pod"}},
		{Name: "Lean/metadata/pods=10000", Figures: []string{"B/pod"}},
		{Name: "BlockedHandler/buffer=unbounded", Figures: blocked},
		{Name: "BlockedHandler/buffer=coalesce", Figures: blocked},
		{Name: "Projection/typed/baseline=same-fields/pods=50000", Figures: projected},
		{Name: "Projection/typed/baseline=managedfields-only/pods=50000", Figures: projected},
		{Name: "Projection/dynamic/baseline=same-fields/pods=20000", Figures: projected},
		{Name: "Projection/dynamic/baseline=managedfields-only/pods=20000", Figures: projected},
		{Name: "Store/store/objects=10000", Figures: storeOps},
		{Name: "Store/store/objects=1000000", Figures: storeOps},
		{Name: "Store/indexer/objects=10000", Figures: indexerOps},
		{Name: "Store/indexer/objects=1000000", Figures: indexerOps},
		{Name: "APIServer/default/pods=10000", Figures: overHTTP},
		{Name: "APIServer/json/pods=10000", Figures: overHTTP},
		{Name: "APIServer/projection/baseline=same-fields/pods=10000", Figures: projected},
		// BenchmarkManagerSync of the nested module interop/controllerruntime:
		// a controller-runtime manager on its default engine (c) and on
		// kinformer's (k).
		{Name: "ManagerSync/pods=10000", Figures: []string{"sync-ms", "peaklive-MB", "retained-MB"}},
	}
}

// BehaviourDifference names benchmarks whose sides do different work by
// design, so that no ratio of theirs says which is better.
type BehaviourDifference struct {
	// Bench matches as a Target's Bench does.
	Bench, Reason string
}

// BehaviourDifferences returns the benchmarks whose rows get no ratio and
// no reading, with the reason the table prints.
func BehaviourDifferences() []BehaviourDifference {
	return []BehaviourDifference{
		{Bench: "BlockedHandler/buffer=coalesce", Reason: "not compared: kinformer coalesces the blocked handler's notifications per key by design, client-go delivers every one"},
		{Bench: "Relist/pagewise", Reason: "not compared: kinformer applies the relist page by page (opt-in WithRelistPageByPage), so listers see partial states; client-go applies it whole"},
	}
}

func behaviourDifference(bench string) (BehaviourDifference, bool) {
	for _, d := range BehaviourDifferences() {
		if benchMatches(bench, d.Bench) {
			return d, true
		}
	}
	return BehaviourDifference{}, false
}

// Direction says which way a figure is better.
type Direction int

const (
	// NoDirection is a figure that is neither better higher nor lower (a
	// count of notifications, the offered load).
	NoDirection Direction = iota
	// HigherIsBetter is a rate, such as events/s.
	HigherIsBetter
	// LowerIsBetter is a time, a heap size, allocations or bytes.
	LowerIsBetter
)

// FigureDirection returns the direction of a figure by its name: rates
// (events/s, others-events/s) and others/sent are higher-is-better except
// sent-events/s, the offered load; times (-ms), heaps (-MB, /steady),
// allocations (allocs/) and bytes (B/, as in B/pod or meta-B/pod) are
// lower-is-better; anything else has no direction.
func FigureDirection(figure string) Direction {
	switch {
	case figure == "sent-events/s":
		return NoDirection
	case strings.HasSuffix(figure, "/s"), figure == "others/sent":
		return HigherIsBetter
	case strings.HasSuffix(figure, "-ms"), strings.HasSuffix(figure, "-MB"), strings.HasSuffix(figure, "/steady"),
		strings.HasPrefix(figure, "allocs/"), strings.HasPrefix(figure, "B/"), strings.Contains(figure, "-B/"),
		strings.HasPrefix(figure, "cpu-"):
		return LowerIsBetter
	}
	return NoDirection
}

// MinPairs is the fewest pairs a row needs, on its own run and on its A/A
// control alike, to get a reading and a target verdict.
const MinPairs = 10

// Readings of a row besides "kinformer better", "kinformer worse",
// "kinformer lower" and "kinformer higher".
const (
	// ReadingLevel: the median ratio lies within the A/A spread.
	ReadingLevel = "level"
	// ReadingNotJudged: no A/A control, fewer than MinPairs pairs, or no
	// finite ratio; the row's note says which.
	ReadingNotJudged = "not judged"
	// ReadingAAControl: the row is an A/A control itself.
	ReadingAAControl = "A/A control"
)

// reading returns the reading of a paired figure by its direction, its
// median ratio judged against the A/A spread factor s (≥ 1): kinformer
// lower when the ratio is below 1/s, higher when above s, level between.
func reading(f PairedFigure, d Direction, s float64) string {
	lower, higher := "kinformer lower", "kinformer higher"
	switch d {
	case HigherIsBetter:
		lower, higher = "kinformer worse", "kinformer better"
	case LowerIsBetter:
		lower, higher = "kinformer better", "kinformer worse"
	}
	switch {
	case math.IsNaN(f.Ratio) || math.IsNaN(s):
		return ReadingNotJudged
	case f.Ratio < 1/s:
		return lower
	case f.Ratio > s:
		return higher
	}
	return ReadingLevel
}

// aaPrefix starts the name element that marks an A/A control row of a
// benchmark that names its controls ("ManagerSync/aa=kinformer/pods=10000",
// interop/controllerruntime's KINFORMER_CTRLRT_BENCH_AA).
const aaPrefix = "aa="

// ScenarioOf returns the scenario a benchmark name measures: the name
// without its A/A element ("aa=<engine>/"), if any, so that an A/A
// control and the row it controls share one scenario.
func ScenarioOf(name string) string {
	parts := strings.Split(name, "/")
	kept := parts[:0]
	for _, p := range parts {
		if !strings.HasPrefix(p, aaPrefix) {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "/")
}

// isAAControl tells whether a benchmark name is an A/A control row (it has
// an "aa=<engine>" element).
func isAAControl(name string) bool {
	return ScenarioOf(name) != name
}

// AASpread is the run-to-run spread of one figure of one scenario measured
// on identical code: both sides of every pair of an A/A control run the
// same implementation (kinformer, `make bench-aa`), so every per-pair
// ratio r = k/c differs from 1 by noise alone.
type AASpread struct {
	// Factor is the largest of max(r, 1/r) over the control's per-pair
	// ratios (≥ 1; NaN without a finite ratio): a median ratio of the
	// compared run within [1/Factor, Factor] is what identical code can
	// show, and reads level.
	Factor float64
	// Pairs is the number of the control's pairs.
	Pairs int
}

// AASpreads returns the A/A spread of every scenario (ScenarioOf) and
// figure that has a control: in res.AA (every row) and among res's own
// rows named as A/A controls. Controls of one scenario and figure from
// several rows pool their pairs.
func (res *Results) AASpreads() map[string]map[string]AASpread {
	out := map[string]map[string]AASpread{}
	add := func(r *Results, name string) {
		units := r.Values[name]
		scenario := ScenarioOf(name)
		for unit, k := range units {
			f, ok := strings.CutPrefix(unit, SideKinformer+"-")
			if !ok {
				continue
			}
			c := units[SideClientGo+"-"+f]
			n := min(len(k), len(c))
			if n == 0 {
				continue
			}
			figs := out[scenario]
			if figs == nil {
				figs = map[string]AASpread{}
				out[scenario] = figs
			}
			sp, seen := figs[f]
			if !seen {
				sp.Factor = 1
			}
			for i := range n {
				r := k[i] / c[i]
				if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
					sp.Factor = math.NaN()
				} else if !math.IsNaN(sp.Factor) {
					sp.Factor = max(sp.Factor, r, 1/r)
				}
			}
			sp.Pairs += n
			figs[f] = sp
		}
	}
	if res.AA != nil {
		for _, name := range res.AA.Names {
			add(res.AA, name)
		}
	}
	for _, name := range res.Names {
		if isAAControl(name) {
			add(res, name)
		}
	}
	return out
}

// Target is a goal for a figure of the benchmarks whose name starts with
// Bench.
type Target struct {
	Bench, Figure string
	// OfRatio applies the bound to the median of the per-pair ratios
	// kinformer / client-go; otherwise to kinformer's median.
	OfRatio bool
	// AtLeast makes Value a lower bound; otherwise it is an upper bound.
	AtLeast bool
	Value   float64
}

// String renders the target as in the table, e.g. "≤ 0.7×".
func (t Target) String() string {
	op := "≤"
	if t.AtLeast {
		op = "≥"
	}
	if t.OfRatio {
		return fmt.Sprintf("%s %g×", op, t.Value)
	}
	return fmt.Sprintf("k %s %g", op, t.Value)
}

// TargetVerdict is how a row stands against its target, judged on its
// median against the A/A spread (Target.judge).
type TargetVerdict string

// The verdicts of a target.
const (
	// TargetMet: the median meets the bound even when moved against it by
	// the A/A spread.
	TargetMet TargetVerdict = "yes"
	// TargetMissed: the median misses the bound even when moved towards it
	// by the A/A spread.
	TargetMissed TargetVerdict = "no"
	// TargetWithinSpread: the bound lies within the A/A spread of the
	// median, so identical code could land on either side of it.
	TargetWithinSpread TargetVerdict = "within A/A spread"
	// TargetNotJudged: the row has no A/A control, fewer than MinPairs
	// pairs (on its run or on its control), or no median.
	TargetNotJudged TargetVerdict = "not judged"
)

// judge returns how kinformer's median k (or, for a ratio target, the
// median ratio k/c) stands against t, given the A/A spread factor s (≥ 1):
// met when v moved by s against the bound still meets it, missed when v
// moved by s towards it still misses it, within the spread otherwise.
func (t Target) judge(k, ratio, s float64) TargetVerdict {
	v := k
	if t.OfRatio {
		v = ratio
	}
	if math.IsNaN(v) || math.IsNaN(s) {
		return TargetNotJudged
	}
	worst, best := v*s, v/s // for an upper bound
	if t.AtLeast {
		worst, best = v/s, v*s
	}
	meets := func(x float64) bool {
		if t.AtLeast {
			return x >= t.Value
		}
		return x <= t.Value
	}
	switch {
	case meets(worst):
		return TargetMet
	case !meets(best):
		return TargetMissed
	}
	return TargetWithinSpread
}

// Targets returns the issues' goals (mostly ratios kinformer / client-go,
// same pair). The memory-lean goals (heap per pod ≤ 0.5× client-go's
// default informer) have no row any more: the Lean rows compare with
// client-go's best configuration instead. The projection goals are judged
// on the rows with the fair baseline (client-go keeping the same fields,
// "baseline=same-fields"); the rows against client-go dropping only
// managedFields have none. The event goals are the counting handlers'
// (Events/handlers=N, dispatch overhead).
func Targets() []Target {
	return []Target{
		{Bench: "Events/handlers=10", Figure: "events/s", OfRatio: true, AtLeast: true, Value: 2},
		{Bench: "Events/handlers=1", Figure: "events/s", OfRatio: true, AtLeast: true, Value: 1.5},
		{Bench: "Events/", Figure: "allocs/event", OfRatio: true, Value: 0.5},
		{Bench: "Sync/", Figure: "sync-ms", OfRatio: true, Value: 0.7},
		{Bench: "Sync/", Figure: "peaklive-MB", OfRatio: true, Value: 0.8},
		{Bench: "Sync/", Figure: "allocs/pod", OfRatio: true, Value: 1},
		{Bench: "Relist/", Figure: "peaklive/steady", Value: 1.1},
		{Bench: "Relist/", Figure: "retained/steady", Value: 1.1},
		{Bench: "HTTP/json", Figure: "sync-ms", OfRatio: true, Value: 0.33},
		{Bench: "Projection/typed/baseline=same-fields", Figure: "B/pod", OfRatio: true, Value: 0.3},
		{Bench: "Projection/dynamic/baseline=same-fields", Figure: "B/pod", OfRatio: true, Value: 0.3},
		{Bench: "Projection/typed/baseline=same-fields", Figure: "peaklive-MB", OfRatio: true, Value: 0.5},
		{Bench: "Projection/typed/baseline=same-fields", Figure: "sync-ms", OfRatio: true, Value: 0.8},
		{Bench: "APIServer/projection/baseline=same-fields", Figure: "cpu-us/pod", OfRatio: true, Value: 0.6},
		{Bench: "Store/", Figure: "add-ms", OfRatio: true, Value: 1.05},
		{Bench: "Store/", Figure: "update-ms", OfRatio: true, Value: 1.05},
		{Bench: "Store/", Figure: "delete-ms", OfRatio: true, Value: 1.05},
		{Bench: "Store/", Figure: "list-ms", OfRatio: true, Value: 1.05},
		{Bench: "Store/", Figure: "byindex-ms", OfRatio: true, Value: 1.05},
	}
}

// benchMatches tells whether bench is pattern, or under it: pattern ends in
// "/" and bench starts with it, or bench continues pattern with "/".
func benchMatches(bench, pattern string) bool {
	return bench == pattern || strings.HasPrefix(bench, pattern) && (strings.HasSuffix(pattern, "/") || strings.HasPrefix(bench[len(pattern):], "/"))
}

// targetFor returns the target of a benchmark's figure, if any.
func targetFor(bench, figure string) (Target, bool) {
	for _, t := range Targets() {
		if t.Figure == figure && benchMatches(bench, t.Bench) {
			return t, true
		}
	}
	return Target{}, false
}

// Median returns the median of vs (NaN when empty).
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Row is one line of the comparison table: one figure of one benchmark.
type Row struct {
	Bench, Figure string
	// Paired holds both sides' medians and the median and range of the
	// per-pair ratios kinformer / client-go (NaN ratios when the row is
	// not compared or client-go does not report the figure).
	Paired PairedFigure
	// Floor is the floor's median and OverFloor the median of the per-pair
	// ratios kinformer / floor (NaN without a floor).
	Floor, OverFloor float64
	// Pairs is the number of pairs (result lines with both sides).
	Pairs int
	// AA is the A/A spread of the row's scenario and figure (Pairs 0 when
	// it has no control).
	AA AASpread
	// Reading is "kinformer better" or "kinformer worse" (for a figure
	// without a direction "kinformer lower" or "higher") when the median
	// ratio lies beyond the A/A spread, ReadingLevel within it,
	// ReadingNotJudged without a control or with fewer than MinPairs pairs
	// (on the run or the control), ReadingAAControl on a control row;
	// empty on a row that is not compared.
	Reading string
	// Target is the figure's goal (nil when it has none) and Met how the
	// row stands against it, judged against the A/A spread as the
	// reading is (Target.judge).
	Target *Target
	Met    TargetVerdict
	// Note says why a row is not compared, or not judged.
	Note string
}

// Rows turns results into table rows, one per benchmark and figure reported
// by kinformer's side, in benchmark order and then by figure name.
//
// Readings and targets are judged against the A/A spread of the row's
// scenario and figure (AASpreads): a row reads kinformer better or worse
// only when its median ratio lies outside [1/s, s], s the spread factor,
// and only with at least MinPairs pairs on its run and on its control.
func (res *Results) Rows() []Row {
	spreads := res.AASpreads()
	var rows []Row
	for _, name := range res.Names {
		units := res.Values[name]
		var figures []string
		for unit := range units {
			if f, ok := strings.CutPrefix(unit, SideKinformer+"-"); ok {
				figures = append(figures, f)
			}
		}
		slices.Sort(figures)
		diff, differs := behaviourDifference(name)
		control := isAAControl(name)
		for _, f := range figures {
			k := units[SideKinformer+"-"+f]
			c := units[SideClientGo+"-"+f]
			p := pairFigure(k, c)
			if len(c) == 0 {
				p.Kinformer, p.Pairs = Median(k), len(k)
			}
			floor := units[SideFloor+"-"+f]
			r := Row{
				Bench: name, Figure: f, Paired: p,
				Floor: Median(floor), OverFloor: pairFigure(k, floor).Ratio,
				Pairs: p.Pairs,
			}
			spread, hasAA := spreads[ScenarioOf(name)][f]
			if hasAA {
				r.AA = spread
			}
			switch {
			case differs:
				r.Paired.Ratio, r.Paired.Min, r.Paired.Max = math.NaN(), math.NaN(), math.NaN()
				r.Note = diff.Reason
			case control:
				r.Reading = ReadingAAControl
			default:
				s := math.NaN()
				switch {
				case !hasAA:
					r.Note = "not judged: no A/A control of this scenario and figure"
				case p.Pairs < MinPairs || spread.Pairs < MinPairs:
					r.Note = fmt.Sprintf("not judged: %d pairs, %d in the A/A control; %d needed in each", p.Pairs, spread.Pairs, MinPairs)
				default:
					s = spread.Factor
				}
				r.Reading = reading(r.Paired, FigureDirection(f), s)
				if t, ok := targetFor(name, f); ok {
					r.Target = &t
					r.Met = t.judge(p.Kinformer, p.Ratio, s)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// TableLegend explains the columns of WriteTable's table.
const TableLegend = `kinformer, client-go, floor: medians over the pairs (one pair per benchmark op, its sides run in an order that alternates from op to op). ` +
	`ratio k/c: the median of the per-pair ratios kinformer / client-go; range: their min–max. ` +
	`A/A spread: s − 1 as a percentage, s being the largest max(r, 1/r) over the per-pair ratios r of the scenario's A/A control ` +
	"(`make bench-aa`: the same scenario with kinformer on both sides, so that r differs from 1 by run-to-run noise alone), with the control's pairs. " +
	`reading: kinformer better or worse, by the figure's direction, only when the median ratio lies outside [1/s, s], else "level"; ` +
	`"not judged" without an A/A control or with fewer than 10 pairs on the run or on its control ` +
	`(higher is better for rates such as events/s and others-events/s, and for others/sent; lower is better for times, heaps, allocations and bytes; ` +
	`a figure without a direction reads kinformer higher or lower). ` +
	`met: the target judged the same way, on the median ratio (on kinformer's median for a "k ≤" target): "yes" when it meets the bound even moved against it by s, ` +
	`"no" when it misses it even moved towards it by s, "within A/A spread" between. ` +
	`k/floor: the median of the per-pair ratios kinformer / floor. ` +
	`Events/handlers=N: every handler only counts its notifications (the rows measure dispatch overhead); ` +
	`Events/work=1us/handlers=N: every handler call also does about 1 µs of computation over the object, the same on every side. ` +
	`Projection rows: baseline=same-fields is client-go with a transform keeping the fields the projection keeps (the fair baseline, which the targets judge); ` +
	`baseline=managedfields-only is client-go dropping only managedFields. ` +
	`A row with a note is not compared (its sides do different work by design) or not judged (the note says why).`

// WriteTable writes rows as one Markdown table, followed by TableLegend:
// scenario, figure, kinformer, client-go, the median ratio, its range, the
// A/A spread, the reading, the target, the verdict on it, the floor,
// kinformer over the floor, the pairs and a note. It fails only when w
// does.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| scenario | figure | kinformer | client-go | ratio k/c | range k/c | A/A spread | reading | target | met | floor | k/floor | pairs | note |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---|---|---|---|---:|---:|---:|---|\n")
	for _, r := range rows {
		target := ""
		if r.Target != nil {
			target = r.Target.String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n",
			r.Bench, r.Figure, fmtFigure(r.Paired.Kinformer), fmtFigure(r.Paired.ClientGo), fmtRatio(r.Paired.Ratio), fmtRange(r.Paired),
			fmtAASpread(r.AA), r.Reading, target, r.Met, fmtFigure(r.Floor), fmtRatio(r.OverFloor), r.Pairs, r.Note)
	}
	b.WriteString("\n" + TableLegend + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtFigure(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// fmtAASpread renders an A/A spread as "±4.2 % (10)": the spread factor
// less one, in percent, and the control's pairs; "–" without a control.
func fmtAASpread(a AASpread) string {
	switch {
	case a.Pairs == 0:
		return "–"
	case math.IsNaN(a.Factor):
		return fmt.Sprintf("– (%d)", a.Pairs)
	}
	return fmt.Sprintf("±%.1f %% (%d)", (a.Factor-1)*100, a.Pairs)
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', ratioDecimals(v), 64) + "×"
}

// ratioDecimals is how many decimals a ratio is printed with: three within
// 2 % of 1, where two would print 1.00 for a difference that the range
// shows (a heap 0.4 % larger in every pair), two otherwise.
func ratioDecimals(vs ...float64) int {
	for _, v := range vs {
		if v < 0.98 || v > 1.02 {
			return 2
		}
	}
	return 3
}
