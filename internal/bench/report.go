package bench

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// The lines that delimit the generated block of BENCHMARKS.md.
const (
	BlockBegin = "<!-- bench:begin -->"
	BlockEnd   = "<!-- bench:end -->"
)

// ReportOptions says where a report's links point, relative to the
// Markdown file that holds the report.
type ReportOptions struct {
	// Raw is the raw results file.
	Raw string
	// Assets is the folder of the tables and plots; empty for the folder of
	// the Markdown file itself.
	Assets string
	// AARaw is the raw results file of the A/A controls (res.AA); empty
	// without.
	AARaw string
}

// WriteReport writes the report of a run from its raw results: the commit,
// start, wall time, machine and load from the header, the command and the
// `go test` invocations, the table of all figures (WriteTable), the scaling
// tables (WriteScalingTables) and a Markdown image link per scaling plot
// (PlotFileName in opts.Assets); it names the A/A controls the readings
// were judged against (res.AA, opts.AARaw), or says there were none. It
// fails when the header names no commit, or when w fails.
func WriteReport(w io.Writer, res *Results, opts ReportOptions) error {
	h := func(key string) string {
		if v := res.Header[key]; v != "" {
			return v
		}
		return "unknown"
	}
	commit := res.Header[HeaderCommit]
	if commit == "" {
		return errors.New("the raw results have no \"# commit:\" header line")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Commit `%s`, started %s, wall time %s (compilation included).\n", commit, h(HeaderStarted), h(HeaderWall))
	fmt.Fprintf(&b, "Machine: %s; load average (1/5/15 min) %s at the start, %s at the end.\n", h(HeaderMachine), h(HeaderLoadStart), h(HeaderLoadEnd))
	fmt.Fprintf(&b, "Raw output: [`%s`](%s).\n", opts.Raw, opts.Raw)
	if res.AA != nil {
		aa := func(key string) string {
			if v := res.AA.Header[key]; v != "" {
				return v
			}
			return "unknown"
		}
		fmt.Fprintf(&b, "Readings and targets judged against the A/A controls of [`%s`](%s): commit `%s`, started %s, command `%s`.\n",
			opts.AARaw, opts.AARaw, aa(HeaderCommit), aa(HeaderStarted), aa(HeaderCommand))
	} else {
		b.WriteString("No A/A controls: no row is judged.\n")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Command: `%s` (sizes: %s), which ran:\n\n```\n", h(HeaderCommand), h(HeaderSizes))
	for _, run := range res.Runs {
		b.WriteString(run + "\n")
	}
	b.WriteString("```\n\nAll figures:\n\n")
	if err := WriteTable(&b, res.Rows()); err != nil {
		return err
	}
	series := res.Scaling()
	if len(series) > 0 {
		b.WriteString("\nHow cost grows:\n\n")
		if err := WriteScalingTables(&b, series); err != nil {
			return err
		}
		for _, s := range series {
			fmt.Fprintf(&b, "\n![%s](%s)\n", PlotTitle(s, commit), path.Join(opts.Assets, PlotFileName(s)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ReplaceBlock returns doc with the lines between the lines BlockBegin and
// BlockEnd replaced by block (the marker lines are kept). It fails unless
// each marker is on a line of its own exactly once, the begin before the
// end.
func ReplaceBlock(doc, block string) (string, error) {
	lines := strings.SplitAfter(doc, "\n")
	begin, end := -1, -1
	for i, line := range lines {
		switch strings.TrimSpace(line) {
		case BlockBegin:
			if begin >= 0 {
				return "", fmt.Errorf("the marker line %s is there twice", BlockBegin)
			}
			begin = i
		case BlockEnd:
			if end >= 0 {
				return "", fmt.Errorf("the marker line %s is there twice", BlockEnd)
			}
			end = i
		}
	}
	switch {
	case begin < 0:
		return "", fmt.Errorf("no marker line %s", BlockBegin)
	case end < 0:
		return "", fmt.Errorf("no marker line %s", BlockEnd)
	case end < begin:
		return "", fmt.Errorf("the marker line %s comes before %s", BlockEnd, BlockBegin)
	}
	if block != "" && !strings.HasSuffix(block, "\n") {
		block += "\n"
	}
	return strings.Join(lines[:begin+1], "") + block + strings.Join(lines[end:], ""), nil
}
