package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// The matrix's what-if line predicts the ratios not run from the row's
// uncapped trial: a 230MiB build under a 100MiB spec dies at 1.5x and 2x.
func TestWhatIfLinePredictsFromUncapped(t *testing.T) {
	t0 := time.Unix(0, 0)
	spec := model.Resources{MemoryBytes: 100 * model.MiB, CPUs: 1}
	mk := func(id string, r model.Ratio, o model.Outcome) *TrialView {
		tr := model.Trial{ID: id, Task: "x", Agent: "a", Ratio: r, Repeat: 1, Policy: model.NewPolicy(spec, r, 2)}
		res := model.TrialResult{Trial: tr, Outcome: o, Start: t0,
			Steps: []model.StepResult{{Name: "build", Start: t0, End: t0.Add(time.Second), PeakWorkingSetBytes: 230 * model.MiB}},
			Noise: &model.HostNoise{Contended: r.Uncapped, Why: "load 3.0 on 2 CPUs"}}
		return &TrialView{Trial: tr, Phase: Finished, Result: &res}
	}
	s := &SweepState{Order: []string{"t1", "t2"}, Trials: map[string]*TrialView{
		"t1": mk("t1", model.Ratio{K: 3}, model.Passed), "t2": mk("t2", model.Uncapped, model.Passed)}}
	row := model.RowKey{Task: "x", Agent: "a"}
	got := s.whatIfLine(row, model.Uncapped)
	for _, want := range []string{"1x killed ≈1/1 [21–100%]", "2x killed ≈1/1 [21–100%]", "5x killed ≈0/1 [0–79%]", "1 of 1 at uncapped ran contended"} {
		if !strings.Contains(got, want) {
			t.Errorf("what-if line %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "3x") {
		t.Errorf("3x was run, not predicted: %q", got)
	}
	// On the measured 3x cell the line follows the cursor: that cell's
	// prediction against what it measured, first (it ignored the cell).
	got = s.whatIfLine(row, model.Ratio{K: 3})
	if !strings.HasPrefix(got, "what-if at 3x, from uncapped: killed ≈0/1 [0–79%], measured 0/1 failed at the limit: consistent") || !strings.Contains(got, "not run: 1x killed") || strings.Contains(got, "contended") {
		t.Errorf("what-if line at 3x: %q", got)
	}
}

// Wrapped lines break between phrases, not inside one: the matrix's
// what-if line broke "not run:" from the ratios it names.
func TestWrapPhrasesKeepsPhrasesWhole(t *testing.T) {
	text := "what-if at 1x, from uncapped: killed ≈3/3 [44–100%], measured 3/3 (3 killed) failed at the limit: consistent · not run: 1.5x killed ≈0/3 [0–56%] · 2x killed ≈0/3 [0–56%]"
	got := wrapPhrases(text, 120, "  ")
	want := []string{"what-if at 1x, from uncapped: killed ≈3/3 [44–100%], measured 3/3 (3 killed) failed at the limit: consistent", "  not run: 1.5x killed ≈0/3 [0–56%] · 2x killed ≈0/3 [0–56%]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("wrapped:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A phrase longer than a line is wrapped at its words.
	for _, l := range wrapPhrases(text, 40, "  ") {
		if width(l) > 40 {
			t.Errorf("line %q is wider than 40", l)
		}
	}
}
