package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// RowKey names one row of the matrix: a task run by one agent.
type RowKey struct {
	Task  string `json:"task"`
	Agent string `json:"agent"`
}

// Cell is one (row, ratio) of the matrix.
type Cell struct {
	Outcomes []Outcome `json:"outcomes"` // in repeat order
	Causes   []Cause   `json:"causes"`   // each outcome's cause, same order
	Rates    Rates     `json:"-"`
	// repeats are each outcome's repeat, same order: where a trial
	// finishing out of order (a resume, concurrency) goes.
	repeats []int
}

// Matrix is the outcome matrix: rows × ratios with per-ratio totals.
type Matrix struct {
	Rows    []RowKey
	Ratios  []Ratio
	Cells   map[RowKey]map[Ratio]*Cell
	ByRatio map[Ratio]*Rates
	Total   Rates
	// NotRun holds the rows whose task could not run (TaskNotRun), with
	// why; their trials are not in Cells nor in any rate.
	NotRun map[RowKey]string
}

// NewMatrix builds a matrix with the given ratios (and any ratio found in
// the results) from finished trials.
func NewMatrix(ratios []Ratio, results []TrialResult) *Matrix {
	m := &Matrix{Cells: map[RowKey]map[Ratio]*Cell{}, ByRatio: map[Ratio]*Rates{}, NotRun: map[RowKey]string{}}
	for _, r := range ratios {
		m.addRatio(r)
	}
	// In repeat order, stably: the trials' places sorted, not the trials
	// (a trial is ~1 KB; moving them was a sweep's largest sort).
	order := make([]int, len(results))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return results[order[i]].Repeat < results[order[j]].Repeat })
	for _, i := range order {
		m.Add(results[i])
	}
	return m
}

func (m *Matrix) addRatio(r Ratio) {
	if _, ok := m.ByRatio[r]; ok {
		return
	}
	m.ByRatio[r] = &Rates{}
	m.Ratios = SortRatios(append(m.Ratios, r))
}

// Add records one finished trial.
func (m *Matrix) Add(res TrialResult) {
	m.addRatio(res.Ratio)
	key := RowKey{res.Task, res.Agent}
	if res.TaskNotRun {
		m.NotRun[key] = res.Reason
		return
	}
	row, ok := m.Cells[key]
	if !ok {
		row = map[Ratio]*Cell{}
		m.Cells[key] = row
		// Into its place among the sorted rows (sorting them all again
		// at each new row was quadratic in a sweep's tasks).
		at := sort.Search(len(m.Rows), func(i int) bool {
			r := m.Rows[i]
			return r.Task > key.Task || (r.Task == key.Task && r.Agent > key.Agent)
		})
		m.Rows = slices.Insert(m.Rows, at, key)
	}
	c, ok := row[res.Ratio]
	if !ok {
		c = &Cell{}
		row[res.Ratio] = c
	}
	// In repeat order whatever order trials finish in: after a resume
	// the console drew completion order and the report repeat order.
	at := len(c.repeats)
	for at > 0 && c.repeats[at-1] > res.Repeat {
		at--
	}
	c.repeats = slices.Insert(c.repeats, at, res.Repeat)
	c.Outcomes = slices.Insert(c.Outcomes, at, res.Outcome)
	c.Causes = slices.Insert(c.Causes, at, res.Cause)
	c.Rates.AddCause(res.Outcome, res.Cause)
	m.ByRatio[res.Ratio].AddCause(res.Outcome, res.Cause)
	m.Total.AddCause(res.Outcome, res.Cause)
}

// Glyphs are the cell's trials' marks in repeat order (TrialGlyph).
func (c *Cell) Glyphs() []string {
	out := make([]string, len(c.Outcomes))
	for i, o := range c.Outcomes {
		var cause Cause
		if i < len(c.Causes) {
			cause = c.Causes[i]
		}
		out[i] = TrialGlyph(o, cause)
	}
	return out
}

// Marks is how a cell's trials are written: the glyphs of the trials
// that finished other than cancelled, in repeat order, then " n-" for n
// cancelled trials, counted apart so that their dashes never hide a
// result (an interrupted sweep's cell read "KK" and 48 dashes).
func (c *Cell) Marks() string {
	var b strings.Builder
	cancelled := 0
	for i, g := range c.Glyphs() {
		if c.Outcomes[i] == Cancelled {
			cancelled++
			continue
		}
		b.WriteString(g)
	}
	if cancelled > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d%s", cancelled, Cancelled.Glyph())
	}
	return b.String()
}

// CancelledLegend explains the count of cancelled trials in a cell, with
// a count for an example, said to be one: "n- n cancelled" read as
// garbled text, and "2- 2 cancelled" under a matrix with none cancelled
// as if 2 had been. A legend shows it only where a cell has some
// (HasCancelled).
func CancelledLegend() string {
	return "2" + Cancelled.Glyph() + " e.g.: 2 of the cell's trials cancelled, in no rate"
}

// HasCancelled says whether any cell holds a cancelled trial (the
// legend explains the count only then).
func (m *Matrix) HasCancelled() bool {
	for _, row := range m.Cells {
		for _, c := range row {
			if slices.Contains(c.Outcomes, Cancelled) {
				return true
			}
		}
	}
	return false
}

// RowsLegend says which of the matrix's rows under the cells holds what:
// an OOM kill at the task's own limit is in the infra-error rate (the
// study's definition) and again in "at its own limit", which is part of
// it, not a third outcome; "own failures" are the row "failed, the
// task's own" (x, T).
const RowsLegend = "success + infra errors + own failures = all counted · an indented row is part of the one above"

// OutcomesShown lists the outcomes (cancelled aside: its count has a
// legend of its own) that some cell shows, in display order; passed and
// failed always, so a legend reads the same from a sweep's first trial.
func (m *Matrix) OutcomesShown() []Outcome {
	seen := map[Outcome]bool{Passed: true, Failed: true}
	for _, row := range m.Cells {
		for _, c := range row {
			for _, o := range c.Outcomes {
				seen[o] = true
			}
		}
	}
	var out []Outcome
	for _, o := range Outcomes {
		if seen[o] && o != Cancelled {
			out = append(out, o)
		}
	}
	return out
}

// CausesShown lists the causes with a glyph of their own that some cell
// shows, in display order: the legend names only those.
func (m *Matrix) CausesShown() []Cause {
	seen := map[Cause]bool{}
	for _, row := range m.Cells {
		for _, c := range row {
			for i, cause := range c.Causes {
				if cause.Glyph() != "" && c.Outcomes[i] != Cancelled {
					seen[cause] = true
				}
			}
		}
	}
	var out []Cause
	for _, c := range Causes {
		if seen[c] {
			out = append(out, c)
		}
	}
	return out
}

// Cell returns the cell, or nil when nothing finished there yet.
func (m *Matrix) Cell(row RowKey, r Ratio) *Cell { return m.Cells[row][r] }

// EmptyCellGlyph marks a cell where no trial finished (nothing run there
// yet), distinct from a cancelled trial's Glyph.
const EmptyCellGlyph = "·"
