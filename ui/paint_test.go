package ui

import (
	"io"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// A painter is only a shortcut: what it draws is what the style draws.
func TestPainterDrawsWhatTheStyleDraws(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	base := r.NewStyle().Foreground(lipgloss.Color("#ff5f00")).Bold(true)
	styles := map[string]lipgloss.Style{
		"colour":      base,
		"background":  r.NewStyle().Background(lipgloss.Color("#202020")).Faint(true),
		"plain":       r.NewStyle(),
		"padded":      base.Padding(0, 1),
		"wide":        base.Width(12),
		"transformed": base.Transform(func(s string) string { return "[" + s + "]" }),
	}
	for name, st := range styles {
		p := newPainter(st)
		for _, s := range []string{"x", "█▒░ 128M", "", "a\tb", "two\nlines", "\x1b[31mred\x1b[0m inside"} {
			if got, want := p.Render(s), st.Render(s); got != want {
				t.Errorf("%s %q: painter %q, style %q", name, s, got, want)
			}
		}
	}
	if !newPainter(base).ok {
		t.Error("a colour-only style should be painted without lipgloss")
	}
}
