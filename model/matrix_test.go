package model

import "testing"

func TestMatrixCellsAndTotals(t *testing.T) {
	res := func(task, agent string, r Ratio, rep int, o Outcome) TrialResult {
		return TrialResult{Trial: Trial{Task: task, Agent: agent, Ratio: r, Repeat: rep}, Outcome: o}
	}
	one := Ratio{K: 1}
	results := []TrialResult{
		res("b", "x", one, 2, OOMKilled),
		res("b", "x", one, 1, Passed),
		res("a", "x", Uncapped, 1, Passed),
		res("a", "x", one, 1, Cancelled),
		res("a", "x", Ratio{K: 3}, 1, Failed), // a ratio not asked for still shows
	}
	m := NewMatrix([]Ratio{Uncapped, one}, results)
	if len(m.Ratios) != 3 || m.Ratios[0] != one || m.Ratios[1] != (Ratio{K: 3}) || !m.Ratios[2].Uncapped {
		t.Fatalf("ratios %v, want 1x 3x uncapped", m.Ratios)
	}
	if len(m.Rows) != 2 || m.Rows[0].Task != "a" {
		t.Fatalf("rows %v", m.Rows)
	}
	c := m.Cell(RowKey{"b", "x"}, one)
	if len(c.Outcomes) != 2 || c.Outcomes[0] != Passed || c.Rates.Successes != 1 || c.Rates.InfraErrs != 1 {
		t.Errorf("cell b·x 1x = %+v (outcomes must be in repeat order)", c)
	}
	if m.Cell(RowKey{"b", "x"}, Uncapped) != nil {
		t.Error("missing cell must be nil")
	}
	if r := m.ByRatio[one]; r.Counted != 2 || r.Successes != 1 {
		t.Errorf("1x totals %+v (the cancelled trial must not count)", r)
	}
	if m.Total.Counted != 4 {
		t.Errorf("total counted %d, want 4", m.Total.Counted)
	}
}

// A task that could not run is a row of its own kind: not in the cells,
// not in any rate, with why.
func TestMatrixKeepsNotRunTasksOutOfTheRates(t *testing.T) {
	one := Ratio{K: 1}
	results := []TrialResult{
		{Trial: Trial{Task: "good", Agent: "oracle", Ratio: one, Repeat: 1}, Outcome: Passed},
		{Trial: Trial{Task: "broken", Agent: "oracle", Ratio: one, Repeat: 1}, Outcome: InfraError, TaskNotRun: true, Reason: "task broken: the build failed"},
		{Trial: Trial{Task: "broken", Agent: "oracle", Ratio: Uncapped, Repeat: 1}, Outcome: InfraError, TaskNotRun: true, Reason: "task broken: the build failed"},
	}
	m := NewMatrix([]Ratio{one}, results)
	if len(m.Rows) != 1 || m.Rows[0].Task != "good" {
		t.Errorf("rows %v, want only the task that ran", m.Rows)
	}
	if why := m.NotRun[RowKey{"broken", "oracle"}]; why != "task broken: the build failed" {
		t.Errorf("not run %v", m.NotRun)
	}
	if m.Total.Counted != 1 || m.Total.InfraErrs != 0 || m.ByRatio[one].SuccessRate() != 1 {
		t.Errorf("totals %+v, 1x %+v: the task that could not run must stay out", m.Total, m.ByRatio[one])
	}
}

// A cell's cancelled trials are counted apart after the others' glyphs,
// so an interrupted sweep's cell is "KK 48-", not KK and 48 dashes.
func TestCellMarksCountCancelledApart(t *testing.T) {
	c := &Cell{Outcomes: []Outcome{OOMKilled, Cancelled, OOMKilled, Cancelled, Cancelled}}
	if got, want := c.Marks(), "KK 3-"; got != want {
		t.Errorf("Marks() = %q, want %q", got, want)
	}
	if got := (&Cell{Outcomes: []Outcome{Cancelled}}).Marks(); got != "1-" {
		t.Errorf("all cancelled: %q", got)
	}
	if got := (&Cell{Outcomes: []Outcome{Passed, Failed}}).Marks(); got != "+x" {
		t.Errorf("none cancelled: %q", got)
	}
}

// A cell's glyphs are in repeat order whatever order its trials finished
// in: after a resume the console (which adds trials as they end) drew
// them in completion order, the report in repeat order.
func TestCellGlyphsAreInRepeatOrderWhateverTheFinish(t *testing.T) {
	one := Ratio{K: 1}
	tr := func(rep int, o Outcome, c Cause) TrialResult {
		return TrialResult{Trial: Trial{Task: "x", Agent: "a", Ratio: one, Repeat: rep}, Outcome: o, Cause: c}
	}
	done := []TrialResult{tr(3, Timeout, CauseStalled), tr(1, Passed, ""), tr(4, OOMKilled, CauseOwnLimit), tr(2, Failed, "")}
	live := NewMatrix([]Ratio{one}, nil)
	for _, r := range done {
		live.Add(r)
	}
	report := NewMatrix([]Ratio{one}, done)
	key := RowKey{"x", "a"}
	if got, want := live.Cells[key][one].Marks(), report.Cells[key][one].Marks(); got != want || got != "+xLK" {
		t.Errorf("added as they finished %q, the report's %q, want +xLK", got, want)
	}
}
