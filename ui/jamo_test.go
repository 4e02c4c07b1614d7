package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/mattn/go-runewidth"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// drawnWidth is how many columns a terminal that draws each code point
// by its own width (wcwidth: xterm, VTE, most) gives line: Hangul
// conjoining jamo each on their own, where the layout (lipgloss,
// ansi.StringWidth) counts a run of them as one two-column syllable.
func drawnWidth(line string) int {
	n := 0
	for _, r := range ansi.Strip(line) {
		n += runewidth.RuneWidth(r)
	}
	return n
}

// A step's output in Hangul conjoining jamo keeps the card's borders
// straight: every line of the card is as wide as the card, as the
// layout measures it and as a terminal draws it. Modern syllables spelt
// in jamo are composed (각), jamo that compose into none escaped.
func TestCardBordersHoldWithConjoiningJamo(t *testing.T) {
	tr := model.Trial{ID: "t1", Task: "x", Agent: "a", Ratio: model.Ratio{K: 1}, Policy: model.ResourcePolicy{GuaranteeBytes: 256 * model.MiB, HardLimitBytes: 256 * model.MiB}}
	s := NewSweepState(model.Plan{Trials: []model.Trial{tr}}, time.Now())
	t0 := time.Now()
	b := event.Base{Trial: "t1", Time: t0}
	s.Apply(event.TrialStarted{Base: b})
	s.Apply(event.StepStarted{Base: b, Phase: "agent", Step: model.Step{Name: "echo", Show: "echo \u1100\u1100\u1100"}})
	for _, text := range []string{
		strings.Repeat("\u1100", 30),            // leading consonants: one cluster to the layout, 60 columns drawn
		"\u1100\u1161\u11a8 \u1112\u1161\u11ab", // 각 한, spelt in jamo
		"\ua960\ud7b0\u1161\u11a8 tail",         // old and extended jamo
		strings.Repeat("\u1161", 20) + "|",      // vowels standing alone
	} {
		s.Apply(event.OutputLine{Base: b, Step: "echo", Stream: "stdout", Text: text})
	}
	st := themes.Plain().Styles
	for _, h := range []int{cardHeight, cardHeight + 6} {
		c := cardCtx{st: st, p: newPaints(st), now: t0.Add(2 * time.Second), height: h}
		card := renderCard(c, s.Trials["t1"], 60)
		for i, line := range strings.Split(card, "\n") {
			if got, drawn := ansi.StringWidth(line), drawnWidth(line); got != 60 || drawn != 60 {
				t.Errorf("height %d, line %d is %d columns to the layout and %d drawn, want 60:\n%s", h, i+1, got, drawn, card)
			}
		}
	}
	if tail := s.Trials["t1"].Tail; len(tail) != 4 || !strings.Contains(tail[1], "각 한") {
		t.Errorf("the jamo spelling 각 한 is not composed: %q", tail)
	}
}
