package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/store/storegen"
)

// loadedScale is the console with a generated experiment of n trials
// read (store.Browse, as history's Load does) and the message that opens
// it, at 160×50.
func loadedScale(b *testing.B, n int) (Model, loadedMsg) {
	b.Helper()
	dir, err := storegen.Cached(storegen.Realistic(n))
	if err != nil {
		b.Fatal(err)
	}
	m, err := store.ReadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	plan, results, err := store.Browse(dir, m)
	if err != nil {
		b.Fatal(err)
	}
	console := update(b, New(testOptions(b, &fakeLauncher{})), tea.WindowSizeMsg{Width: 160, Height: 50})
	exp := Experiment{ID: m.ID, Dir: dir, Status: m.Status, Trials: m.Trials, Ratios: m.Ratios, Repeats: m.Repeats}
	return console, loadedMsg{exp: exp, plan: plan, results: results}
}

// Opening a read experiment: the state built from its records and the
// first frame of its matrix. (Reading it is BenchmarkScaleConsoleLoad in
// ./cli.) go test -run '^$' -bench Scale -benchmem ./ui
func BenchmarkScaleOpenExperiment(b *testing.B) {
	for _, n := range storegen.Sizes() {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			m, msg := loadedScale(b, n)
			storegen.Bench(b, func() any {
				opened := update(b, m, msg)
				if v := opened.View(); !strings.Contains(v, "opened") {
					b.Fatal("not opened")
				}
				return opened
			})
		})
	}
}

// One frame of the opened experiment's matrix, after the first.
func BenchmarkScaleViewMatrix(b *testing.B) {
	for _, n := range storegen.Sizes() {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			m, msg := loadedScale(b, n)
			opened := update(b, m, msg)
			opened.View() // the first frame builds the cells' views
			storegen.Bench(b, func() any { return opened.View() })
		})
	}
}
