// Package report renders an experiment's outcome matrix for people (a
// table) and programs (JSON).
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
)

// Table writes the matrix: per row and ratio the passes over counted
// trials and one glyph per trial, then per-ratio success and infra-error
// rates, then the glyph legend.
func Table(w io.Writer, m *model.Matrix) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"task · agent"}
	for _, r := range m.Ratios {
		head = append(head, r.String())
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range m.Rows {
		cols := []string{row.Task + " · " + row.Agent}
		for _, r := range m.Ratios {
			c := m.Cell(row, r)
			if c == nil {
				cols = append(cols, "-")
				continue
			}
			var g strings.Builder
			for _, o := range c.Outcomes {
				g.WriteString(o.Glyph())
			}
			cols = append(cols, fmt.Sprintf("%d/%d %s", c.Rates.Successes, c.Rates.Counted, g.String()))
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	succ, infra := []string{"success rate"}, []string{"infra-error rate"}
	for _, r := range m.Ratios {
		rt := m.ByRatio[r]
		succ = append(succ, pct(rt.Successes, rt.Counted))
		infra = append(infra, pct(rt.InfraErrs, rt.Counted))
	}
	fmt.Fprintln(tw, strings.Join(succ, "\t"))
	fmt.Fprintln(tw, strings.Join(infra, "\t"))
	if err := tw.Flush(); err != nil {
		return err
	}
	var legend []string
	for _, o := range model.Outcomes {
		legend = append(legend, o.Glyph()+" "+string(o))
	}
	_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(legend, "  "))
	return err
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(a)/float64(b), a, b)
}

// JSONCell is one cell in the JSON form.
type JSONCell struct {
	Task           string          `json:"task"`
	Agent          string          `json:"agent"`
	Ratio          model.Ratio     `json:"ratio"`
	Outcomes       []model.Outcome `json:"outcomes"`
	Counted        int             `json:"counted"`
	Successes      int             `json:"successes"`
	InfraErrors    int             `json:"infra_errors"`
	SuccessRate    float64         `json:"success_rate"`
	InfraErrorRate float64         `json:"infra_error_rate"`
}

// JSONRatio is one ratio's totals in the JSON form.
type JSONRatio struct {
	Ratio          model.Ratio `json:"ratio"`
	Counted        int         `json:"counted"`
	SuccessRate    float64     `json:"success_rate"`
	InfraErrorRate float64     `json:"infra_error_rate"`
}

// JSON writes the matrix as one JSON document.
func JSON(w io.Writer, experiment string, m *model.Matrix) error {
	doc := struct {
		Experiment string      `json:"experiment"`
		Cells      []JSONCell  `json:"cells"`
		Ratios     []JSONRatio `json:"ratios"`
	}{Experiment: experiment, Cells: []JSONCell{}}
	for _, row := range m.Rows {
		for _, r := range m.Ratios {
			c := m.Cell(row, r)
			if c == nil {
				continue
			}
			doc.Cells = append(doc.Cells, JSONCell{Task: row.Task, Agent: row.Agent, Ratio: r, Outcomes: c.Outcomes,
				Counted: c.Rates.Counted, Successes: c.Rates.Successes, InfraErrors: c.Rates.InfraErrs,
				SuccessRate: c.Rates.SuccessRate(), InfraErrorRate: c.Rates.InfraErrorRate()})
		}
	}
	for _, r := range m.Ratios {
		rt := m.ByRatio[r]
		doc.Ratios = append(doc.Ratios, JSONRatio{Ratio: r, Counted: rt.Counted, SuccessRate: rt.SuccessRate(), InfraErrorRate: rt.InfraErrorRate()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
