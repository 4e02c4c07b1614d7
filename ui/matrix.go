package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

type matrixModel struct {
	row, col int
	// baseline is the ratio the others are compared with (b sets it).
	baseline    model.Ratio
	hasBaseline bool
	// list is open when a cell's trials are shown.
	list       bool
	listCursor listCursor
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
	k := m.keys.Matrix
	mm := &m.matrix
	rows, ratios := m.state.matrixRows(), m.state.Matrix.Ratios
	if mm.list {
		ck := m.keys.Cell
		cell := m.state.Cell(rows[mm.row], ratios[mm.col])
		switch {
		case key.Matches(msg, ck.Back):
			mm.list = false
		case mm.listCursor.update(msg, ck.List, len(cell), 5):
		case key.Matches(msg, ck.Open):
			if cur := mm.listCursor.at(len(cell)); cur < len(cell) {
				m.openDetail(cell[cur])
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
	case key.Matches(msg, k.Open):
		if len(rows) > 0 && len(ratios) > 0 {
			mm.list, mm.listCursor = true, listCursor{}
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
	// Every cell's text first: the columns are as wide as the widest, and
	// cells with many trials count their outcomes instead of listing them
	// when the glyphs would not fit.
	cells := make([][]cellView, len(rows))
	colW := 13
	for i, row := range rows {
		for _, r := range ratios {
			cv := s.cellView(row, r)
			cells[i] = append(cells[i], cv)
			colW = max(colW, width(cv.plain(false))+2)
		}
	}
	compact := false
	if colW > 29 || 24+len(ratios)*colW > w {
		compact = true
		colW = 13
		for i := range cells {
			for _, cv := range cells[i] {
				colW = max(colW, width(cv.plain(true))+2)
			}
		}
	}
	nameW := min(max(w-len(ratios)*colW-1, 12), 44)
	var out []string
	head := pad("task · agent", nameW)
	for _, r := range ratios {
		head += pad(" "+r.String(), colW)
	}
	out = append(out, st.Bold.Render(clip(head, w)))
	bodyH := h - 5
	if mm.list {
		bodyH = min(bodyH, 3)
	}
	first := 0
	if mm.row >= bodyH {
		first = mm.row - bodyH + 1
	}
	for i := first; i < len(rows) && i < first+bodyH; i++ {
		line := pad(shortName(rows[i]), nameW)
		for j, cv := range cells[i] {
			if i == mm.row && j == mm.col {
				line += st.Cursor.Render(pad("▸"+cv.plain(compact), colW-1)) + " "
				continue
			}
			line += pad(" "+cv.styled(m, compact), colW)
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
		out = append(out, "")
		out = append(out, m.cellList(rows[mm.row], ratios[mm.col], w, h-len(out))...)
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

// cellView is what a matrix cell shows: the pass count of the trials
// that count, their outcomes in repeat order (report's order), and how
// many were cancelled, counted apart so their dashes never hide a result.
type cellView struct {
	rates     model.Rates
	outcomes  []model.Outcome
	cancelled int
	empty     bool
}

func (s *SweepState) cellView(row model.RowKey, r model.Ratio) cellView {
	cv := cellView{empty: true}
	if c := s.Matrix.Cell(row, r); c != nil {
		cv.rates, cv.empty = c.Rates, false
	}
	for _, v := range s.Cell(row, r) {
		if v.Phase != Finished || v.Result == nil {
			continue
		}
		if v.Result.Outcome == model.Cancelled {
			cv.cancelled++
			continue
		}
		cv.outcomes = append(cv.outcomes, v.Result.Outcome)
	}
	return cv
}

// maxGlyphs is the most outcomes a cell lists one by one.
const maxGlyphs = 20

// glyphs are the outcomes one glyph each, or counted per outcome ("12+
// 3K") when compact or too many.
func (cv cellView) glyphs(st *themes.Styles, compact bool) string {
	paint := func(o model.Outcome, s string) string {
		if st == nil {
			return s
		}
		return st.Outcome(o).Render(s)
	}
	var b strings.Builder
	if !compact && len(cv.outcomes) <= maxGlyphs {
		for _, o := range cv.outcomes {
			b.WriteString(paint(o, o.Glyph()))
		}
		return b.String()
	}
	n := map[model.Outcome]int{}
	for _, o := range cv.outcomes {
		n[o]++
	}
	var parts []string
	for _, o := range model.Outcomes {
		if n[o] > 0 && o != model.Cancelled {
			parts = append(parts, paint(o, fmt.Sprintf("%d%s", n[o], o.Glyph())))
		}
	}
	return strings.Join(parts, " ")
}

func (cv cellView) tail() string {
	if cv.cancelled == 0 {
		return ""
	}
	return fmt.Sprintf(" %d-", cv.cancelled)
}

func (cv cellView) plain(compact bool) string {
	if cv.empty && cv.cancelled == 0 {
		return model.EmptyCellGlyph
	}
	return strings.TrimSpace(fmt.Sprintf("%d/%d %s", cv.rates.Successes, cv.rates.Counted, cv.glyphs(nil, compact)) + cv.tail())
}

func (cv cellView) styled(m Model, compact bool) string {
	if cv.empty && cv.cancelled == 0 {
		return model.EmptyCellGlyph
	}
	st := m.theme.Styles
	g := cv.glyphs(&st, compact)
	if g != "" {
		g = " " + g
	}
	return heat(m, cv.rates).Render(fmt.Sprintf("%d/%d", cv.rates.Successes, cv.rates.Counted)) + g + st.Muted.Render(cv.tail())
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

func (m Model) cellList(row model.RowKey, r model.Ratio, w, h int) []string {
	st := m.theme.Styles
	cell := m.state.Cell(row, r)
	// The seed is the least useful column: shown only where it fits.
	seed := w >= 2+6+1+4+1+16+1+7+1+7+2+28+1+20
	header := noMark + fmt.Sprintf("%-6s %-4s %-16s %7s %7s  %-28s", "trial", "run", "outcome", "time", "peak", "why")
	if seed {
		header += " seed"
	}
	out := []string{st.Title.Render(clip(fmt.Sprintf("%s at %s · %d trial(s), in repeat order", shortName(row), r, len(cell)), w)),
		st.Bold.Render(clip(header, w))}
	cur := m.matrix.listCursor.at(len(cell))
	first, last := m.matrix.listCursor.window(len(cell), h-len(out))
	for i := first; i < last; i++ {
		v := cell[i]
		line := fmt.Sprintf("%-6s r%-3d %s %7s %7s  %s", v.Trial.ID, v.Trial.Repeat, pad(phaseText(st, v), 16), trialTime(v, m.now()), mib(v.Peak), resultReason(v))
		if seed {
			line = fmt.Sprintf("%-6s r%-3d %s %7s %7s  %s %d", v.Trial.ID, v.Trial.Repeat, pad(phaseText(st, v), 16), trialTime(v, m.now()), mib(v.Peak), pad(resultReason(v), 28), v.Trial.Seed)
		}
		out = append(out, cursorRow(st, line, w, i == cur))
	}
	return out
}

func resultReason(v *TrialView) string {
	if v.Result == nil {
		return ""
	}
	return v.Result.Reason
}
