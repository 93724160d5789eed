package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/internal/bench"
)

// probeLine is one run's line as compare.sh records it: rep=N run=LABEL
// followed by the fields a run prints.
type probeLine struct {
	rep, pods     int
	run, side     string
	list          string
	synced        float64
	handled       float64
	heap          float64 // beyond-objects-MB, or live-heap-MB with in-listfunc
	heapMeasured  bool
	commitOfLabel string // the part of run after "@", or "same"
}

// summarize reads compare.sh's output from r and writes, per pods, list and
// kinformer commit, the medians and ranges of the per-rep ratios kinformer
// over client-go of the same rep, pods and list, as a Markdown table, each
// line starting with "# " so that the table can follow the raw lines in one
// file.
func summarize(r io.Reader, w io.Writer) error {
	var lines []probeLine
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "rep=") {
			continue
		}
		l, err := parseProbeLine(text)
		if err != nil {
			return err
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	type group struct {
		pods   int
		list   string
		commit string
	}
	baseline := map[[2]string]probeLine{} // rep, pods/list -> client-go's run
	bkey := func(l probeLine) [2]string {
		return [2]string{strconv.Itoa(l.rep), fmt.Sprintf("%d/%s", l.pods, l.list)}
	}
	for _, l := range lines {
		if l.side == "client-go" {
			baseline[bkey(l)] = l
		}
	}
	type ratios struct{ synced, handled, heap, kMs, cMs []float64 }
	byGroup := map[group]*ratios{}
	var order []group
	for _, l := range lines {
		if l.side != "kinformer" {
			continue
		}
		c, ok := baseline[bkey(l)]
		if !ok {
			return fmt.Errorf("rep %d, %d pods, list %s: kinformer@%s has no client-go run to pair with", l.rep, l.pods, l.list, l.commitOfLabel)
		}
		g := group{l.pods, l.list, l.commitOfLabel}
		rs := byGroup[g]
		if rs == nil {
			rs = &ratios{}
			byGroup[g] = rs
			order = append(order, g)
		}
		rs.synced = append(rs.synced, l.synced/c.synced)
		rs.handled = append(rs.handled, l.handled/c.handled)
		if l.heapMeasured && c.heapMeasured && c.heap != 0 {
			rs.heap = append(rs.heap, l.heap/c.heap)
		}
		rs.kMs = append(rs.kMs, l.synced)
		rs.cMs = append(rs.cMs, c.synced)
	}
	slices.SortStableFunc(order, func(a, b group) int {
		if a.list != b.list {
			return strings.Compare(a.list, b.list)
		}
		if a.pods != b.pods {
			return b.pods - a.pods
		}
		return strings.Compare(a.commit, b.commit)
	})
	fmt.Fprintln(w, "# summary (syncprobe -summarize): per pair, kinformer's figure over client-go's of the same rep")
	fmt.Fprintln(w, "# | pods | list | kinformer at | pairs | synced ratio median (range) | handled ratio median (range) | heap beyond objects (in-listfunc: live heap) ratio median | kinformer synced ms median | client-go synced ms median |")
	fmt.Fprintln(w, "# |---:|---|---|---:|---|---|---|---:|---:|")
	for _, g := range order {
		rs := byGroup[g]
		heap := "–"
		if len(rs.heap) > 0 {
			heap = fmt.Sprintf("%.2f", bench.Median(rs.heap))
		}
		fmt.Fprintf(w, "# | %d | %s | %s | %d | %s | %s | %s | %.1f | %.1f |\n", g.pods, g.list, g.commit, len(rs.synced),
			spread(rs.synced), spread(rs.handled), heap, bench.Median(rs.kMs), bench.Median(rs.cMs))
	}
	return nil
}

// parseProbeLine parses one of compare.sh's lines.
func parseProbeLine(text string) (probeLine, error) {
	var l probeLine
	fields := map[string]string{}
	for _, f := range strings.Fields(text) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return l, fmt.Errorf("line %q: field %q is not key=value", text, f)
		}
		fields[k] = v
	}
	var err error
	num := func(k string) float64 {
		if err != nil {
			return 0
		}
		var v float64
		v, err = strconv.ParseFloat(fields[k], 64)
		if err != nil {
			err = fmt.Errorf("line %q: %s: %w", text, k, err)
		}
		return v
	}
	l.rep = int(num("rep"))
	l.pods = int(num("pods"))
	l.synced = num("synced-ms")
	l.handled = num("handled-ms")
	if _, ok := fields["beyond-objects-MB"]; ok {
		l.heap, l.heapMeasured = num("beyond-objects-MB"), true
	} else if _, ok := fields["live-heap-MB"]; ok {
		l.heap, l.heapMeasured = num("live-heap-MB"), true
	}
	if err != nil {
		return l, err
	}
	l.run, l.side, l.list = fields["run"], fields["side"], fields["list"]
	if l.side != "kinformer" && l.side != "client-go" {
		return l, fmt.Errorf("line %q: side %q", text, l.side)
	}
	l.commitOfLabel = "same"
	if _, c, ok := strings.Cut(l.run, "@"); ok && l.side == "kinformer" {
		l.commitOfLabel = c
	}
	return l, nil
}

// spread formats the median of vs with its range.
func spread(vs []float64) string {
	return fmt.Sprintf("%.2f (%.2f–%.2f)", bench.Median(vs), slices.Min(vs), slices.Max(vs))
}
