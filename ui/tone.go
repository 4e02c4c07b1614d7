package ui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// outcomeStyle is the style of an outcome, with fixed meanings in every
// theme: its tone's (model.OutcomeTable).
func outcomeStyle(st themes.Styles, o model.Outcome) lipgloss.Style {
	return st.Tone(string(o.Tone()))
}

// resultStyle is the style of a trial's outcome and cause: a memory
// failure (killed at its own limit, or stalled at it) in the OOM colour,
// so a stall never reads as a slow agent; else its outcome's.
func resultStyle(st themes.Styles, o model.Outcome, c model.Cause) lipgloss.Style {
	if model.MemoryFailureOf(o, c).Failed() {
		return st.OOM
	}
	return outcomeStyle(st, o)
}
