package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// Each sweep started from the setup screen draws new runs: the next
// one's seed moves on from the last's (the same seed repeated every run
// of a sweep started again for more data: heavy at 3x, repeat 2, failed
// in all three of a new user's sweeps). The first keeps the default.
func TestEachSweepFromSetupDrawsNewRuns(t *testing.T) {
	tasks := builtinTasks(t)
	s := newSetup(Options{Tasks: tasks, Seed: 3, Repeats: 1, Concurrency: 1, Preselect: []string{tasks[0].Name}}, DefaultKeys().Setup)
	s.pane, s.ratioCursor = paneRatios, 0
	var seeds []uint64
	for range 2 {
		c := &Common{Opts: &Options{}}
		s.Update(c, tea.KeyMsg{Type: tea.KeyEnter})
		for _, m := range c.outbox {
			if l, ok := m.(launchMsg); ok {
				seeds = append(seeds, l.spec.Seed)
			}
		}
	}
	if len(seeds) != 2 || seeds[0] != 3 || seeds[1] == seeds[0] {
		t.Errorf("the two sweeps' seeds %v, want 3 and another", seeds)
	}
}
