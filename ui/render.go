package ui

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// width is the display width of one line: counted directly when every
// rune is one the console draws at one column (ASCII, box drawing, blocks,
// braille, a few marks) and escapes are colour sequences, which take none;
// anything else goes to ansi.StringWidth. The live screen measures every
// line of every card each frame, and grapheme segmentation was a third of
// its cost.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			// CSI as colours write it: ESC [, parameter bytes (0x30–0x3f),
			// a final byte (0x40–0x7e). Anything else (intermediate
			// bytes included): ask.
			if i+1 >= len(s) || s[i+1] != '[' {
				return ansi.StringWidth(s)
			}
			j := i + 2
			for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
				j++
			}
			if j == len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return ansi.StringWidth(s)
			}
			i = j + 1
		case c < 0x20 || c == 0x7f:
			return ansi.StringWidth(s)
		case c < 0x80:
			n++
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !oneColumn(r) {
				return ansi.StringWidth(s)
			}
			n++
			i += size
		}
	}
	return n
}

// oneColumn says whether the console can count r as one column without
// asking: box drawing, block elements, braille, and punctuation it uses.
// A rune that could join a grapheme cluster is never one of these.
func oneColumn(r rune) bool {
	switch {
	case r >= 0x2500 && r <= 0x259f, r >= 0x2800 && r <= 0x28ff:
		return true
	}
	switch r {
	case '…', '·', '±', '–', '—', '→', '←', '↑', '↓', '•', '×', '≥', '≤', '✓', '✗', '°', '▸', '◂':
		return true
	}
	return false
}

// fit cuts a block to w columns and exactly h lines, so nothing a pane
// draws can overflow or wrap into its neighbours.
func fit(s string, w, h int) string {
	if w < 1 || h < 1 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if width(l) > w {
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// clip cuts one line to w columns.
func clip(s string, w int) string {
	if w < 1 {
		return ""
	}
	if width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// pad right-pads s to w columns.
func pad(s string, w int) string {
	if d := w - width(s); d > 0 {
		return s + strings.Repeat(" ", d)
	}
	return clip(s, w)
}

// padLeft right-aligns s in w columns (colour codes take none).
func padLeft(s string, w int) string {
	if d := w - width(s); d > 0 {
		return strings.Repeat(" ", d) + s
	}
	return s
}

// mib prints bytes compactly for tight spaces ("118M", "1.2G").
// stepMiB is a step's memory n as mib says it, or "—" for a step run in
// a container other than the trial's (a separate verifier's, whose
// memory is its own row beside the trial's).
func stepMiB(s model.StepResult, n int64) string {
	if s.Container != "" {
		return "—"
	}
	return mib(n)
}

func mib(n int64) string {
	switch {
	case n <= 0:
		return "0"
	case n >= 10<<30:
		return fmt.Sprintf("%.0fG", float64(n)/(1<<30))
	case n >= 1<<30:
		return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
	case n >= 10<<20:
		return fmt.Sprintf("%.0fM", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	}
}

// secs prints a duration in seconds, tenths below a minute.
func secs(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// gauge draws memory to scale: working set, cache lighter, free space,
// a marker at the guarantee and the end at scale (the hard limit, or for
// an uncapped trial the largest limit on screen). Near the limit the
// working set turns to the warning colour, then to the OOM colour.
func gauge(p *paints, ws, cache, guarantee, limit, scale int64, width int) string {
	if width < 3 || scale <= 0 {
		return ""
	}
	cell := func(b int64) int {
		c := int(float64(b) / float64(scale) * float64(width))
		return min(max(c, 0), width)
	}
	wsC := cell(ws)
	if ws > 0 && wsC == 0 {
		wsC = 1
	}
	cacheC := min(cell(ws+cache)-wsC, width-wsC)
	cacheC = max(cacheC, 0)
	g := cell(guarantee)
	if g >= width {
		g = width - 1
	}
	fill := p.workingSet
	switch {
	case limit > 0 && ws >= limit*nearLimitPct/100:
		fill = p.oom
	case limit > 0 && ws >= limit*approachPct/100:
		fill = p.warn
	}
	// One Render per run of equal cells: a gauge is drawn for every card
	// on every frame.
	var b strings.Builder
	run := func(style painter, glyph string, n int) {
		if n > 0 {
			b.WriteString(style.Render(strings.Repeat(glyph, n)))
		}
	}
	free := width - wsC - cacheC
	run(fill, "█", wsC)
	run(p.cache, "▒", cacheC)
	if g >= wsC+cacheC && free > 0 {
		// The guarantee marker sits in the free part.
		before := g - wsC - cacheC
		run(p.free, "░", before)
		run(p.guarantee, "┆", 1)
		run(p.free, "░", free-before-1)
	} else {
		run(p.free, "░", free)
	}
	return b.String()
}

// A gauge warns from approachPct of the hard limit and shows danger from
// nearLimitPct.
const (
	approachPct  = 75
	nearLimitPct = 90
)

// spark draws the last window of working-set samples as a chart of rows
// lines of block glyphs, scaled so the top is max (the gauge's scale).
func spark(p *paints, samples []event.Sample, now time.Time, window time.Duration, maxBytes int64, width, rows int) []string {
	if width < 2 || rows < 1 {
		return nil
	}
	// One column per width-th of the window: the column's maximum, so a
	// spike between two columns still shows.
	cols := make([]float64, width)
	from := now.Add(-window)
	// Samples are in time order: skip straight to the window.
	first := sort.Search(len(samples), func(i int) bool { return !samples[i].Time.Before(from) })
	for _, s := range samples[first:] {
		if s.Time.Before(from) || s.Time.After(now) {
			continue
		}
		i := int(float64(s.Time.Sub(from)) / float64(window) * float64(width))
		i = min(max(i, 0), width-1)
		cols[i] = max(cols[i], float64(s.WorkingSetBytes))
	}
	// Block glyphs in eighths, one Render per line: it is drawn for every
	// card on every frame.
	levels := []rune(" ▁▂▃▄▅▆▇█")
	eighths := make([]int, width)
	for i, v := range cols {
		eighths[i] = min(max(int(math.Round(v/float64(max(maxBytes, 1))*float64(8*rows))), 0), 8*rows)
	}
	out := make([]string, rows)
	for r := 0; r < rows; r++ {
		floor := 8 * (rows - 1 - r)
		var line strings.Builder
		for _, e := range eighths {
			line.WriteRune(levels[min(max(e-floor, 0), 8)])
		}
		out[r] = p.workingSet.Render(line.String())
	}
	return out
}

// box draws a titled border around a block of exactly w×h outside size.
func box(style lipgloss.Style, title string, body string, w, h int) string {
	if w < 4 || h < 2 {
		return fit(body, w, h)
	}
	// Drawn by hand, with lipgloss only colouring the border (through a
	// painter: learnt once, then no lipgloss layout per edge): a box is
	// drawn for every card on every frame.
	border := style.GetBorderStyle()
	edge := newPainter(lipgloss.NewStyle().Foreground(style.GetBorderTopForeground()))
	var b strings.Builder
	top := border.TopLeft + border.Top
	if title != "" {
		t := " " + clip(title, w-6) + " "
		b.WriteString(edge.Render(top) + t + edge.Render(strings.Repeat(border.Top, max(w-3-width(t), 0))+border.TopRight))
	} else {
		b.WriteString(edge.Render(border.TopLeft + strings.Repeat(border.Top, w-2) + border.TopRight))
	}
	left, right := edge.Render(border.Left), edge.Render(border.Right)
	for _, l := range strings.Split(fit(body, w-2, h-2), "\n") {
		b.WriteString("\n" + left + pad(l, w-2) + right)
	}
	b.WriteString("\n" + edge.Render(border.BottomLeft+strings.Repeat(border.Bottom, w-2)+border.BottomRight))
	return b.String()
}
