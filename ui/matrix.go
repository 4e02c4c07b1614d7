package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
)

type matrixModel struct {
	row, col int
	// baseline is the ratio the others are compared with (b sets it).
	baseline    model.Ratio
	hasBaseline bool
	// list is open when a cell's trials are shown.
	list       bool
	listCursor int
}

// matrixRows are the rows to show: every task·agent of the plan, so the
// matrix has its full shape before results arrive.
func (s *SweepState) matrixRows() []model.RowKey {
	seen := map[model.RowKey]bool{}
	var rows []model.RowKey
	for _, id := range s.Order {
		tr := s.Trials[id].Trial
		k := model.RowKey{Task: tr.Task, Agent: tr.Agent}
		if !seen[k] {
			seen[k] = true
			rows = append(rows, k)
		}
	}
	return rows
}

func (m Model) updateMatrix(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if m.state == nil {
		return m, nil
	}
	k := m.keys
	mm := &m.matrix
	rows, ratios := m.state.matrixRows(), m.state.Matrix.Ratios
	if mm.list {
		cell := m.state.Cell(rows[mm.row], ratios[mm.col])
		switch {
		case key.Matches(msg, k.Back):
			mm.list = false
		case key.Matches(msg, k.Up):
			mm.listCursor = max(mm.listCursor-1, 0)
		case key.Matches(msg, k.Down):
			mm.listCursor = min(mm.listCursor+1, max(len(cell)-1, 0))
		case key.Matches(msg, k.Enter):
			if mm.listCursor < len(cell) {
				m.openDetail(cell[mm.listCursor])
			}
		}
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Up):
		mm.row = max(mm.row-1, 0)
	case key.Matches(msg, k.Down):
		mm.row = min(mm.row+1, max(len(rows)-1, 0))
	case key.Matches(msg, k.Left):
		mm.col = max(mm.col-1, 0)
	case key.Matches(msg, k.Right):
		mm.col = min(mm.col+1, max(len(ratios)-1, 0))
	case key.Matches(msg, k.Top):
		mm.row = 0
	case key.Matches(msg, k.Bottom):
		mm.row = max(len(rows)-1, 0)
	case key.Matches(msg, k.Enter):
		if len(rows) > 0 && len(ratios) > 0 {
			mm.list, mm.listCursor = true, 0
		}
	case key.Matches(msg, k.Baseline):
		if len(ratios) > 0 {
			mm.baseline, mm.hasBaseline = ratios[mm.col], true
		}
	case key.Matches(msg, k.Focus):
		if len(rows) > 0 && len(ratios) > 0 {
			for _, t := range m.opts.Tasks {
				if t.Name == rows[mm.row].Task {
					return m.startFocus(t, rows[mm.row].Agent, ratios[mm.col])
				}
			}
		}
	}
	return m, nil
}

func (m Model) viewMatrix(w, h int) string {
	st := m.theme.Styles
	if m.state == nil {
		return st.Muted.Render("No results yet: the matrix fills in as trials finish. Start a sweep on the setup screen (1), or open a past one in history (5).")
	}
	s := m.state
	rows, ratios := s.matrixRows(), s.Matrix.Ratios
	mm := m.matrix
	maxGlyphs := max(s.Plan.Repeats, 1)
	for _, row := range rows {
		for _, r := range ratios {
			if c := s.Matrix.Cell(row, r); c != nil {
				maxGlyphs = max(maxGlyphs, len(c.Outcomes))
			}
		}
	}
	colW := max(len(fmt.Sprintf("%d/%d ", maxGlyphs, maxGlyphs))+min(maxGlyphs, 20)+1, 13)
	nameW := min(max(w-len(ratios)*colW-1, 12), 44)
	var out []string
	head := pad("task · agent", nameW)
	for _, r := range ratios {
		head += pad(r.String(), colW)
	}
	out = append(out, st.Bold.Render(clip(head, w)))
	bodyH := h - 5
	first := 0
	if mm.row >= bodyH {
		first = mm.row - bodyH + 1
	}
	for i := first; i < len(rows) && i < first+bodyH; i++ {
		row := rows[i]
		line := pad(shortName(row), nameW)
		for j, r := range ratios {
			c := s.Matrix.Cell(row, r)
			text, plain := "·", "·"
			if c != nil {
				glyphs := c.Outcomes
				if len(glyphs) > 20 {
					glyphs = glyphs[len(glyphs)-20:]
				}
				plain = fmt.Sprintf("%d/%d ", c.Rates.Successes, c.Rates.Counted)
				text = heat(m, c.Rates).Render(plain) + outcomeGlyphs(st, glyphs)
				plain += strings.Repeat("x", len(glyphs))
			}
			cell := text + strings.Repeat(" ", max(colW-len([]rune(plain)), 0))
			if i == mm.row && j == mm.col {
				cell = st.Cursor.Render(pad(plainCell(c), colW))
			}
			line += cell
		}
		out = append(out, clip(line, w))
	}
	succ, infra := pad("success rate ±95%", nameW), pad("infra-error rate ±95%", nameW)
	var byRatio map[model.Ratio]model.RatioStats
	if s.Done > 0 {
		byRatio = map[model.Ratio]model.RatioStats{}
		for _, rs := range s.Analysis(m.baseline(ratios)).ByRatio {
			byRatio[rs.Ratio] = rs
		}
	}
	for _, r := range ratios {
		rs, ok := byRatio[r]
		if !ok || rs.Success.Trials == 0 {
			succ += pad("-", colW)
			infra += pad("-", colW)
			continue
		}
		succ += pad(fmt.Sprintf("%.0f%% ±%.0f", 100*rs.Success.Mean, 100*rs.Success.HalfWidth), colW)
		infra += pad(fmt.Sprintf("%.0f%% ±%.0f", 100*rs.Infra.Mean, 100*rs.Infra.HalfWidth), colW)
	}
	out = append(out, st.Bold.Render(clip(succ, w)), st.OOM.Render(clip(infra, w)))
	var legend []string
	for _, o := range model.Outcomes {
		legend = append(legend, st.Outcome(o).Render(o.Glyph())+" "+string(o))
	}
	out = append(out, st.Muted.Render(clip(strings.Join(legend, "  "), w)))
	out = append(out, m.statsLines(rows, ratios, w)...)
	if mm.list && len(rows) > 0 {
		out = append(out, m.cellList(rows[mm.row], ratios[mm.col], w)...)
	}
	return fit(strings.Join(out, "\n"), w, h)
}

// baseline is the chosen ratio, else 1x, else the tightest one run.
func (m Model) baseline(ratios []model.Ratio) model.Ratio {
	want := model.Ratio{K: 1}
	if m.matrix.hasBaseline {
		want = m.matrix.baseline
	}
	for _, r := range ratios {
		if r == want {
			return r
		}
	}
	if len(ratios) > 0 {
		return ratios[0]
	}
	return want
}

// statsLines: the cursor cell's interval and test, the paired differences
// against the baseline with their noise labels, and the power line.
func (m Model) statsLines(rows []model.RowKey, ratios []model.Ratio, w int) []string {
	st := m.theme.Styles
	if len(rows) == 0 || len(ratios) == 0 || m.state.Done == 0 {
		return nil
	}
	base := m.baseline(ratios)
	a := m.state.Analysis(base)
	mm := m.matrix
	var out []string
	if cs, ok := a.Cell(rows[min(mm.row, len(rows)-1)], ratios[min(mm.col, len(ratios)-1)]); ok && cs.Success.N > 0 {
		line := fmt.Sprintf("%s at %s: %d/%d passed, 95%% [%.0f–%.0f%%]", shortName(cs.RowKey), cs.Ratio, cs.Success.K, cs.Success.N, 100*cs.SuccCI.Lo, 100*cs.SuccCI.Hi)
		if cs.Ratio != base {
			line += fmt.Sprintf(", %+.0fpp [%+.0f, %+.0f] p=%.2f vs %s: %s", 100*cs.VsBaseline.Diff, 100*cs.VsBaseline.CI.Lo, 100*cs.VsBaseline.CI.Hi, cs.VsBaseline.P, base, model.Verdict(cs.Noise))
		}
		out = append(out, clip(line, w))
	}
	out = append(out, st.Bold.Render(clip(fmt.Sprintf("against %s, paired by task (b sets the baseline):", base), w)))
	for _, r := range ratios {
		if r == base {
			continue
		}
		var parts []string
		for _, metric := range []string{"success", "infra-error"} {
			c, ok := a.Comparison(metric, r)
			if !ok {
				continue
			}
			text := fmt.Sprintf("%s %+.0fpp [%+.0f, %+.0f] %s", metric, 100*c.Diff, 100*c.CI.Lo, 100*c.CI.Hi, model.Verdict(c.Noise))
			style := st.Text
			if !c.Noise {
				style = st.Bold
			}
			parts = append(parts, style.Render(text))
		}
		if len(parts) > 0 {
			out = append(out, clip(fmt.Sprintf("  %-8s %s", r, strings.Join(parts, " · ")), w))
		}
	}
	if p := a.Power; p.MinDetectable > 0 {
		line := fmt.Sprintf("power: %d rows × %d repeats detect %s (80%%, α=0.05)", p.Tasks, p.Repeats, model.DetectableText(p.MinDetectable))
		if p.RepeatsNeeded > 0 {
			line += fmt.Sprintf("; 3pp needs ~%d repeats", p.RepeatsNeeded)
		} else {
			line += "; 3pp needs more tasks"
		}
		out = append(out, st.Muted.Render(clip(line, w)))
	}
	return out
}

func plainCell(c *model.Cell) string {
	if c == nil {
		return model.EmptyCellGlyph
	}
	var g strings.Builder
	for _, o := range c.Outcomes {
		g.WriteString(o.Glyph())
	}
	return fmt.Sprintf("%d/%d %s", c.Rates.Successes, c.Rates.Counted, g.String())
}

// heat colours a cell by its success rate: the heatmap.
func heat(m Model, r model.Rates) interface{ Render(...string) string } {
	st := m.theme.Styles
	switch {
	case r.Counted == 0:
		return st.Muted
	case r.Successes == r.Counted:
		return st.OK
	case r.Successes == 0:
		return st.Danger
	}
	return st.Warn
}

func percent(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(a)/float64(b), a, b)
}

func shortName(r model.RowKey) string {
	return strings.TrimPrefix(r.Task, "builtin/") + " · " + r.Agent
}

func (m Model) cellList(row model.RowKey, r model.Ratio, w int) []string {
	st := m.theme.Styles
	out := []string{"", st.Title.Render(fmt.Sprintf("%s at %s", shortName(row), r))}
	for i, v := range m.state.Cell(row, r) {
		status := "queued"
		switch v.Phase {
		case Running:
			status = "running"
		case Waiting:
			status = "waiting"
		case Finished:
			status = st.Outcome(v.Result.Outcome).Render(string(v.Result.Outcome))
		}
		line := fmt.Sprintf("%s r%d seed %d  %s  peak %s  %s", v.Trial.ID, v.Trial.Repeat, v.Trial.Seed, status, mib(v.Peak), resultReason(v))
		if i == m.matrix.listCursor {
			line = st.Cursor.Render(clip(line, w))
		}
		out = append(out, clip(line, w))
	}
	return out
}

func resultReason(v *TrialView) string {
	if v.Result == nil {
		return ""
	}
	return v.Result.Reason
}
