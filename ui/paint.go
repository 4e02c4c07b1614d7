package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/headroom-eval/headroom/themes"
)

// painter colours one line as a style would, without lipgloss's per-call
// layout work: the style is rendered once around two markers of
// different widths to learn what it puts before and after; a style that
// does more than colour (padding, width, borders) shows a different
// prefix or suffix for them and is left to lipgloss.
type painter struct {
	st        lipgloss.Style
	pre, post string
	ok        bool
}

func newPainter(st lipgloss.Style) painter {
	p := painter{st: st}
	const one, three = "§", "§§§" // printable, one column each
	a, b := st.Render(one), st.Render(three)
	i, j := strings.Index(a, one), strings.Index(b, three)
	if i < 0 || j < 0 || strings.Count(a, one) != 1 || strings.Count(b, one) != 3 {
		return p
	}
	pre, post := a[:i], a[i+len(one):]
	if b[:j] != pre || b[j+len(three):] != post {
		return p
	}
	p.pre, p.post, p.ok = pre, post, true
	return p
}

// Render is st.Render(s) for one line.
func (p painter) Render(s string) string {
	if !p.ok || strings.ContainsAny(s, "\n\t\r") {
		return p.st.Render(s)
	}
	if s == "" {
		return p.st.Render(s)
	}
	return p.pre + s + p.post
}

// paints are the painters of the styles every card uses, made once a frame.
type paints struct {
	text, muted, bold, ok, warn, oom, danger painter
	workingSet, cache, free, guarantee       painter
}

func newPaints(st themes.Styles) *paints {
	return &paints{
		text: newPainter(st.Text), muted: newPainter(st.Muted), bold: newPainter(st.Bold),
		ok: newPainter(st.OK), warn: newPainter(st.Warn), oom: newPainter(st.OOM), danger: newPainter(st.Danger),
		workingSet: newPainter(st.WorkingSet), cache: newPainter(st.Cache), free: newPainter(st.GaugeFree), guarantee: newPainter(st.Guaranteed),
	}
}
