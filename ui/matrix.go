package ui

import (
	"cmp"
	"fmt"
	"github.com/headroom-eval/headroom/printable"
	"maps"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// matrixScreen is the outcome matrix: tasks × ratios, with the cursor
// cell's statistics; enter lists a cell's trials.
type matrixScreen struct {
	keys     MatrixKeys
	cellKeys CellKeys
	w, h     int
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
	s.index()
	return slices.Clip(s.rows)
}

func newMatrix(km KeyMap) matrixScreen { return matrixScreen{keys: km.Matrix, cellKeys: km.Cell} }

// ShortHelp and FullHelp are the matrix's keys, or the cell list's while
// it is open.
func (mm *matrixScreen) ShortHelp() []key.Binding {
	if mm.list {
		return mm.cellKeys.ShortHelp()
	}
	return mm.keys.ShortHelp()
}

func (mm *matrixScreen) FullHelp() [][]key.Binding {
	if mm.list {
		return mm.cellKeys.FullHelp()
	}
	return mm.keys.FullHelp()
}

func (mm *matrixScreen) SetSize(w, h int) { mm.w, mm.h = w, h }

// terms are the words its statistics lines use, glossed in its help.
func (mm *matrixScreen) terms() []model.Term { return model.Terms }

func (mm *matrixScreen) title() string {
	if mm.list {
		return "Matrix · a cell's trials"
	}
	return ""
}

func (mm *matrixScreen) Update(c *Common, msg tea.Msg) tea.Cmd {
	if msg, ok := msg.(tea.KeyMsg); ok {
		return mm.updateKey(c, msg)
	}
	return nil
}

func (mm *matrixScreen) updateKey(c *Common, msg tea.KeyMsg) tea.Cmd {
	if c.State == nil {
		return nil
	}
	k := mm.keys
	rows, ratios := c.State.matrixRows(), c.State.Matrix.Ratios
	if mm.list {
		ck := mm.cellKeys
		cell := c.State.Cell(rows[mm.row], ratios[mm.col])
		switch {
		case key.Matches(msg, ck.Back):
			mm.list = false
		case mm.listCursor.update(msg, ck.List, len(cell), 5):
		case key.Matches(msg, ck.Open):
			if cur := mm.listCursor.at(len(cell)); cur < len(cell) {
				c.send(openTrialMsg{cell[cur]})
			}
		}
		return nil
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
			// The cell's own scale: what its trials ran under.
			scale := c.Spec.Scale
			for _, v := range c.State.Cell(rows[mm.row], ratios[mm.col]) {
				scale = cmp.Or(v.Trial.Policy.Scale, scale)
			}
			if t, ok := c.Opts.task(rows[mm.row].Task); ok {
				c.send(focusMsg{task: t, agent: rows[mm.row].Agent, ratio: ratios[mm.col], scale: scale})
			}
		}
	}
	return nil
}

func (mm *matrixScreen) View(c *Common) string {
	st := c.Styles()
	w, h := mm.w, mm.h
	if c.State == nil {
		return st.Muted.Render("No results yet: the matrix fills in as trials finish. Start a sweep on the setup screen (1), or open a past one in history (5).")
	}
	rows, ratios := c.State.matrixRows(), c.State.Matrix.Ratios
	stats := mm.statsLines(c, rows, ratios, w)
	// The table leaves room under it: for a few lines of the cursor
	// cell's statistics, or for the cell's list when it is open (its
	// title, header and a few trials, after a blank line); the rows of
	// cells that do not fit then are counted, not dropped.
	under := min(len(stats), 4)
	listH := 0
	if mm.list && len(rows) > 0 {
		listH = min(len(c.State.Cell(rows[mm.row], ratios[mm.col])), 4) + 3
		under = listH + 1
	}
	out := mm.table(c, w, h-under)
	if mm.list && len(rows) > 0 {
		// The statistics under the table give way first.
		stats = stats[:min(len(stats), max(h-len(out)-listH, 0))]
	}
	out = append(out, stats...)
	if mm.list && len(rows) > 0 {
		out = append(out, "")
		out = append(out, mm.cellList(c, rows[mm.row], ratios[mm.col], w, h-len(out))...)
	}
	return fit(strings.Join(out, "\n"), w, h)
}

// table is the matrix's cells, the rows under them and their legends, in
// h lines at most (the rows of cells scroll to the cursor's).
func (mm *matrixScreen) table(c *Common, w, h int) []string {
	st := c.Styles()
	s := c.State
	rows, ratios := s.matrixRows(), s.Matrix.Ratios
	// The columns are as wide as the widest cell's text, and cells with
	// many trials count their outcomes instead of listing them when the
	// glyphs would not fit.
	widest := s.widestCells(rows, ratios)
	// A knob's column is headed by its values under its group's title.
	headW := 0
	for _, r := range ratios {
		headW = max(headW, width(r.Heading())+2)
	}
	widest[0], widest[1] = max(widest[0], headW-2), max(widest[1], headW-2)
	// At least a rate and its interval, " 100% [21–100]", and a gap.
	colW := max(15, widest[0]+2)
	compact := false
	if colW > 29 || 24+len(ratios)*colW > w {
		compact = true
		colW = max(15, widest[1]+2)
	}
	cellsOf := func(i int) []cellView {
		out := make([]cellView, len(ratios))
		for j, r := range ratios {
			out[j] = s.cellView(rows[i], r)
		}
		return out
	}
	nameW := min(max(w-len(ratios)*colW-1, 12), 44)
	var out []string
	if groups := model.ColumnGroups(ratios); groups != nil {
		line := pad("", nameW)
		for _, g := range groups {
			line += pad(" "+g, colW)
		}
		out = append(out, st.Muted.Render(clip(line, w)))
	}
	head := pad("task · agent", nameW)
	for _, r := range ratios {
		head += pad(" "+r.Heading(), colW)
	}
	out = append(out, st.Bold.Render(clip(head, w)))
	var tail []string
	succ, infra := pad("success rate [95%]", nameW), pad("infra-error rate [95%]", nameW)
	var byRatio map[model.Ratio]model.RatioStats
	var ratioStats []model.RatioStats
	if s.Done > 0 {
		byRatio = map[model.Ratio]model.RatioStats{}
		ratioStats = s.Analysis(mm.baselineOf(ratios)).ByRatio
		for _, rs := range ratioStats {
			byRatio[rs.Ratio] = rs
		}
	}
	for _, r := range ratios {
		rs, ok := byRatio[r]
		if !ok || rs.Success.Trials == 0 {
			succ += pad(" -", colW)
			infra += pad(" -", colW)
			continue
		}
		succ += pad(" "+rs.Success.RateText(), colW)
		// Red only where there were infra errors: a 0% cell is good news.
		cell := st.Muted
		if rs.Infra.Mean > 0 {
			cell = st.OOM
		}
		infra += cell.Render(pad(" "+rs.Infra.RateText(), colW))
	}
	// The rows add up: success, infra error and the task's own failures
	// are every counted trial; an indented row is a part of the row above
	// it, shown only when there are any (but the memory failures, the
	// count focus, report and calibrate give too).
	count := func(label string, always bool, n func(*model.Rates) string) {
		line, any := pad(label, nameW), always
		for _, r := range ratios {
			text := " -"
			if rt := s.Matrix.ByRatio[r]; rt != nil && rt.Counted > 0 {
				text = " " + n(rt)
				any = any || text != fmt.Sprintf(" 0/%d", rt.Counted)
			}
			line += pad(text, colW)
		}
		if any {
			tail = append(tail, st.Muted.Render(clip(line, w)))
		}
	}
	of := func(k func(*model.Rates) int) func(*model.Rates) string {
		return func(rt *model.Rates) string { return fmt.Sprintf("%d/%d", k(rt), rt.Counted) }
	}
	tail = append(tail, st.Bold.Render(clip(succ, w)))
	count("  of which passed after a timeout", false, of(func(rt *model.Rates) int { return rt.AfterTimeout }))
	tail = append(tail, clip(infra, w))
	count("  of which failed at the limit", true, func(rt *model.Rates) string { return rt.Memory.Compact() })
	count("  of which from outside", false, of(func(rt *model.Rates) int { return rt.OutsideErrs }))
	count("failed, the task's own", true, of((*model.Rates).OwnFailures))
	var legend []string
	for _, o := range s.Matrix.OutcomesShown() {
		legend = append(legend, outcomeStyle(st, o).Render(o.Glyph())+st.Muted.Render(" "+o.Spec().Legend))
	}
	// Cancelled trials are counted apart ("3-"), said where some are; an
	// empty cell is not run (report's glyph).
	if s.Matrix.HasCancelled() {
		legend = append(legend, st.Muted.Render(model.CancelledLegend()))
	}
	legend = append(legend, st.Muted.Render(model.EmptyCellGlyph+" not run"))
	for _, cause := range s.Matrix.CausesShown() {
		legend = append(legend, st.Muted.Render(cause.Glyph()+" "+cause.DescribeOn(c.Opts.Backend)))
	}
	// Wrapped at its entries, not cut: an entry cut at the width left a
	// glyph unexplained.
	tail = append(tail, wrapJoined(legend, "  ", w, "  ")...)
	for _, l := range wrapPhrases(model.RowsLegend, w, "  ") {
		tail = append(tail, st.Muted.Render(l))
	}
	if note := model.FewRowsNote(ratioStats); note != "" {
		for _, l := range wrapPhrases(note, w, "  ") {
			tail = append(tail, st.Muted.Render(l))
		}
	}
	// A misspelt memory_mb ran every column from the default: the row
	// says so, and why under the table (the run's warning scrolled away
	// above the console).
	typos := c.typoNotes()
	for _, name := range slices.Sorted(maps.Keys(typos)) {
		for _, l := range wrapPhrases("(typo) "+strings.TrimPrefix(name, "builtin/")+": "+typos[name], w, "  ") {
			tail = append(tail, st.Warn.Render(l))
		}
	}
	// The rows of cells get the lines the rest leaves them, scrolled to
	// the cursor's; rows that do not fit are counted on a line of their
	// own (a cell's list cut a five-task matrix to three rows, silently,
	// under rates of all five).
	bodyH := max(h-len(out)-len(tail), 1)
	hidden := ""
	if bodyH < len(rows) {
		bodyH = max(bodyH-1, 1)
	}
	first := 0
	if mm.row >= bodyH {
		first = mm.row - bodyH + 1
	}
	if bodyH < len(rows) {
		shown := fmt.Sprintf("rows %d–%d", first+1, first+bodyH)
		if bodyH == 1 {
			shown = fmt.Sprintf("row %d", first+1)
		}
		how := "↑/↓ scroll to them"
		if mm.list {
			how = "esc, then ↑/↓ to them"
		}
		hidden = fmt.Sprintf("  %s of %d shown: %d hidden (%s)", shown, len(rows), len(rows)-bodyH, how)
	}
	for i := first; i < len(rows) && i < first+bodyH; i++ {
		name := shortName(rows[i])
		if _, ok := typos[rows[i].Task]; ok {
			name += " (typo)"
		}
		line := pad(name, nameW)
		if why, ok := s.Matrix.NotRun[rows[i]]; ok && s.Matrix.Cells[rows[i]] == nil {
			// The task could not run: say why across its cells.
			text := st.Danger.Render("could not run: ") + st.Muted.Render(why)
			if i == mm.row {
				text = st.Cursor.Render("could not run: " + why)
			}
			out = append(out, clip(line+text, w))
			continue
		}
		for j, cv := range cellsOf(i) {
			if i == mm.row && j == mm.col {
				line += st.Cursor.Render(pad("▸"+cv.plain(compact), colW-1)) + " "
				continue
			}
			line += pad(" "+cv.styled(st, compact), colW)
		}
		out = append(out, clip(line, w))
	}
	if hidden != "" {
		out = append(out, st.Muted.Render(clip(hidden, w)))
	}
	return append(out, tail...)
}

// baseline is the chosen ratio, else 1x, else the tightest one run.
func (mm *matrixScreen) baselineOf(ratios []model.Ratio) model.Ratio {
	want := model.Ratio{K: 1}
	if mm.hasBaseline {
		want = mm.baseline
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
func (mm *matrixScreen) statsLines(c *Common, rows []model.RowKey, ratios []model.Ratio, w int) []string {
	st := c.Styles()
	if len(rows) == 0 || len(ratios) == 0 || c.State.Done == 0 {
		return nil
	}
	base := mm.baselineOf(ratios)
	a := c.State.Analysis(base)
	var out []string
	if cs, ok := a.Cell(rows[min(mm.row, len(rows)-1)], ratios[min(mm.col, len(ratios)-1)]); ok && cs.Success.N > 0 {
		line := fmt.Sprintf("%s at %s: %d/%d passed, 95%% [%.0f–%.0f%%]", shortName(cs.RowKey), cs.Ratio, cs.Success.K, cs.Success.N, 100*cs.SuccCI.Lo, 100*cs.SuccCI.Hi)
		if own := a.BaseOf(cs.Ratio); cs.Ratio != own {
			line += fmt.Sprintf(", %s %s p=%.2f vs %s: %s", model.PPText(cs.VsBaseline.Diff), model.PPInterval(cs.VsBaseline.CI), cs.VsBaseline.P, own, cs.Label)
		}
		// A wide interval says what would narrow it, on a line of its own
		// where the line has no room.
		parts := []string{line}
		if n := model.RepeatsToNarrow(cs.Success.K, cs.Success.N, model.WideInterval); n > 0 {
			parts = append(parts, fmt.Sprintf("~%s a cell would narrow it to %.0f points", model.Quantity(n, "repeat"), 100*model.WideInterval))
		}
		out = append(out, wrapJoined(parts, " · ", w, "  ")...)
		// What the knobs did, as the cell's trials measured it.
		var results []model.TrialResult
		for _, v := range c.State.Cell(cs.RowKey, cs.Ratio) {
			if v.Result != nil {
				results = append(results, *v.Result)
			}
		}
		if m := model.MeasuredText(results); m != "" {
			out = append(out, st.Muted.Render(clip("  measured in the container: "+m, w)))
		}
	}
	if wi := c.State.whatIfLine(rows[min(mm.row, len(rows)-1)], ratios[min(mm.col, len(ratios)-1)]); wi != "" {
		// Wrapped at its phrases, not cut at the width; two lines at
		// most, so the cell's list keeps its room: the phrases left out
		// are said to be (the ratios not run are the last).
		lines := wrapPhrases(wi, w, "  ")
		if len(lines) > 2 {
			lines = lines[:2]
			if width(lines[1]+" · …") <= w {
				lines[1] += " · …"
			}
		}
		for _, l := range lines {
			out = append(out, st.Muted.Render(l))
		}
	}
	// Which question each p answers, wrapped rather than cut.
	for _, l := range wrapPhrases(fmt.Sprintf("against %s (b sets the baseline, ? explains the terms) · p by task: would tasks like these change? · pooled p: did this suite's score change?", base), w, "  ") {
		out = append(out, st.Bold.Render(l))
	}
	for _, r := range ratios {
		own := a.BaseOf(r)
		if r == own {
			continue
		}
		var parts []string
		for _, metric := range []string{"success", "infra-error"} {
			c, ok := a.Comparison(metric, r)
			if !ok {
				continue
			}
			text := fmt.Sprintf("%s %s %s %s, p %s by task, %s pooled", metric, model.PPText(c.Diff), model.PPInterval(c.CI), c.Label, model.PText(c.P), model.PText(c.PooledP))
			style := st.Text
			if !c.Noise {
				style = st.Bold
			}
			parts = append(parts, style.Render(text))
		}
		// Both metrics on one line where they fit, else one a line: a cut
		// line would lose the pooled p.
		label := r.String()
		if own != base {
			label += " vs " + own.String() // within its knob
		}
		head := fmt.Sprintf("  %-8s ", label)
		if line := head + strings.Join(parts, " · "); width(line) <= w || len(parts) < 2 {
			out = append(out, clip(line, w))
			continue
		}
		for i, p := range parts {
			if i > 0 {
				head = strings.Repeat(" ", width(head))
			}
			out = append(out, clip(head+p, w))
		}
	}
	if splits := c.State.Regimes(c.regimeTasks()); len(splits) > 0 {
		var parts []string
		for _, sp := range splits {
			parts = append(parts, sp.Compact())
		}
		for i, l := range wrapPhrases("rescued (infra → pass) or made easier (clean failure → pass), paired by trial: "+strings.Join(parts, " · "), w, "  ") {
			if i == 0 {
				l = st.Bold.Render(l)
			}
			out = append(out, l)
		}
	}
	if p := a.Power; p.ExactNote(true) != "" {
		out = append(out, st.Muted.Render(clip(fmt.Sprintf("power: %s × %s detect none: %s", model.Quantity(p.Tasks, "row"), model.Quantity(p.Repeats, "repeat"), p.ExactNote(true)), w)))
	} else if p.MinDetectable > 0 {
		line := fmt.Sprintf("power: %s × %s detect %s (80%%, α=0.05)", model.Quantity(p.Tasks, "row"), model.Quantity(p.Repeats, "repeat"), model.DetectableText(p.MinDetectable))
		if p.RepeatsNeeded > 0 {
			line += fmt.Sprintf("; to detect 3pp: ~%s", model.Quantity(p.RepeatsNeeded, "repeat"))
		} else {
			// As the report says it: no count of repeats gets there.
			line += "; to detect 3pp: more tasks, not more repeats"
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
	causes    []model.Cause // each outcome's
	cancelled int
	empty     bool
	// widths are width(plain(false)) and width(plain(true)), measured
	// once when the view is made: the matrix sizes its columns from
	// every cell on every frame.
	widths [2]int
}

func (s *SweepState) cellView(row model.RowKey, r model.Ratio) cellView {
	s.freshViews()
	k := cellKey{row, r}
	if cv, ok := s.views[k]; ok {
		return cv
	}
	cv := s.newCellView(row, r)
	cv.widths = [2]int{width(cv.plain(false)), width(cv.plain(true))}
	s.views[k] = cv
	return cv
}

// freshViews drops the cells' views (and the widest) when an event has
// come since they were made.
func (s *SweepState) freshViews() {
	asOf := [3]int{s.version, s.Done, len(s.Order)}
	if s.viewsAsOf != asOf || s.views == nil {
		s.views, s.viewsAsOf, s.widestOK = map[cellKey]cellView{}, asOf, false
	}
}

// widestCells is the widest cell text, in full and compact, of the
// matrix (kept with the cells' views until the next event).
func (s *SweepState) widestCells(rows []model.RowKey, ratios []model.Ratio) [2]int {
	s.freshViews()
	if s.widestOK && len(rows) == s.widestRows && len(ratios) == s.widestRatios {
		return s.widest
	}
	var w [2]int
	for _, row := range rows {
		for _, r := range ratios {
			cv := s.cellView(row, r)
			w = [2]int{max(w[0], cv.widths[0]), max(w[1], cv.widths[1])}
		}
	}
	s.widest, s.widestOK, s.widestRows, s.widestRatios = w, true, len(rows), len(ratios)
	return w
}

func (s *SweepState) newCellView(row model.RowKey, r model.Ratio) cellView {
	cv := cellView{empty: true}
	if c := s.Matrix.Cell(row, r); c != nil {
		cv.rates, cv.empty = c.Rates, false
	}
	s.index()
	for _, id := range s.cells[cellKey{row, r}] { // as Cell lists them, without the list
		v := s.Trials[id]
		if v.Phase != Finished || v.Result == nil {
			continue
		}
		if v.Result.Outcome == model.Cancelled {
			cv.cancelled++
			continue
		}
		cv.outcomes = append(cv.outcomes, v.Result.Outcome)
		cv.causes = append(cv.causes, v.Result.Cause)
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
		return outcomeStyle(*st, o).Render(s)
	}
	var b strings.Builder
	if !compact && len(cv.outcomes) <= maxGlyphs {
		for i, o := range cv.outcomes {
			b.WriteString(paint(o, model.TrialGlyph(o, cv.causes[i])))
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

func (cv cellView) styled(st themes.Styles, compact bool) string {
	if cv.empty && cv.cancelled == 0 {
		return model.EmptyCellGlyph
	}
	g := cv.glyphs(&st, compact)
	if g != "" {
		g = " " + g
	}
	return heat(st, cv.rates).Render(fmt.Sprintf("%d/%d", cv.rates.Successes, cv.rates.Counted)) + g + st.Muted.Render(cv.tail())
}

// heat colours a cell by its success rate: the heatmap.
func heat(st themes.Styles, r model.Rates) interface{ Render(...string) string } {
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
	return printable.RowPart(strings.TrimPrefix(r.Task, "builtin/")) + " · " + printable.RowPart(r.Agent)
}

func (mm *matrixScreen) cellList(c *Common, row model.RowKey, r model.Ratio, w, h int) []string {
	st := c.Styles()
	cell := c.State.Cell(row, r)
	// The seed is the least useful column: shown only where it fits,
	// before the reason, which has the rest of the line (after it, the
	// reason was cut at 28 columns on a 200-column screen: a new user's).
	seed := w >= 2+6+1+4+1+16+1+7+1+7+1+20+2+28
	header := noMark + fmt.Sprintf("%-6s %-4s %-16s %7s %7s  %-28s", "trial", "run", "outcome", "time", "peak", "why")
	if seed {
		header = noMark + fmt.Sprintf("%-6s %-4s %-16s %7s %7s %20s  %s", "trial", "run", "outcome", "time", "peak", "seed", "why")
	}
	out := []string{st.Title.Render(clip(fmt.Sprintf("%s at %s · %d trial(s), in repeat order", shortName(row), r, len(cell)), w)),
		st.Bold.Render(clip(header, w))}
	cur := mm.listCursor.at(len(cell))
	first, last := mm.listCursor.window(len(cell), h-len(out))
	for i := first; i < last; i++ {
		v := cell[i]
		line := fmt.Sprintf("%-6s r%-3d %s %7s %7s  %s", v.Trial.ID, v.Trial.Repeat, pad(phaseText(st, v), 16), trialTime(v, c.Now), listPeak(v), resultReason(v))
		if seed {
			line = fmt.Sprintf("%-6s r%-3d %s %7s %7s %20d  %s", v.Trial.ID, v.Trial.Repeat, pad(phaseText(st, v), 16), trialTime(v, c.Now), listPeak(v), v.Trial.Seed, resultReason(v))
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
