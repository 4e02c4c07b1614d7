package ui

import (
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// busyModel is the console mid-sweep: 8 trials running with a minute of
// 20 Hz samples and pip output each, over a 20-task × 6-ratio matrix.
func busyModel(b testing.TB, w, h, tasks int) Model {
	var ts []model.Task
	base := heavyOnly(b)
	for i := 0; i < tasks; i++ {
		t := base
		t.Name = fmt.Sprintf("bench/task-%02d", i)
		ts = append(ts, t)
	}
	l := &fakeLauncher{}
	opts := testOptions(b, l)
	opts.Tasks = ts
	m := New(opts)
	m = update(b, m, tea.WindowSizeMsg{Width: w, Height: h})
	sw, err := l.Launch(LaunchSpec{Tasks: ts, Ratios: model.StandardRatios, Repeats: 3, Concurrency: 8, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	m = update(b, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	plan := sw.Plan()
	var evs []runner.Event
	now := t0.Add(3 * time.Second)
	for i, tr := range plan.Trials {
		base := runner.Base{Trial: tr.ID, Time: now}
		if i < 8 {
			evs = append(evs, runner.TrialStarted{Base: base, ContainerID: "c", SampleSource: "cgroup-v1"},
				runner.StepStarted{Base: base, Phase: "agent", Step: model.Step{Name: "install", Show: "pip install pandas"}})
			for s := 0; s < 1200; s++ {
				at := now.Add(time.Duration(s-1200) * 50 * time.Millisecond)
				evs = append(evs, runner.MemorySample{Base: runner.Base{Trial: tr.ID, Time: at}, Sample: runner.Sample{Time: at, WorkingSetBytes: int64(s%100+20) << 20}})
			}
			for s := 0; s < 50; s++ {
				evs = append(evs, runner.OutputLine{Base: base, Step: "install", Text: fmt.Sprintf("Collecting package-%d", s)})
			}
			continue
		}
		o := model.Outcomes[i%5]
		evs = append(evs, runner.TrialEnded{Base: base, Result: model.TrialResult{Trial: tr, Outcome: o, Start: t0, End: now}})
	}
	return update(b, m, eventsMsg{events: evs})
}

// go test -run '^$' -bench View ./ui
func BenchmarkViewLive(b *testing.B) {
	m := busyModel(b, 160, 50, 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

func BenchmarkViewMatrix20(b *testing.B) {
	m := keys(b, busyModel(b, 160, 50, 20), "3")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

func BenchmarkViewMatrix200(b *testing.B) {
	m := keys(b, busyModel(b, 160, 50, 200), "3")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// Event reduction: one batch of 1,000 pip output lines.
func BenchmarkApplyOutputBurst(b *testing.B) {
	m := busyModel(b, 160, 50, 20)
	var burst []runner.Event
	for i := 0; i < 1000; i++ {
		burst = append(burst, runner.OutputLine{Base: runner.Base{Trial: "t0001", Time: t0}, Step: "install", Text: "Collecting pandas"})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range burst {
			m.state.Apply(e)
		}
	}
}

// Every screen fits every size: nothing overflows or wraps into garbage.
func TestEveryScreenFitsEverySize(t *testing.T) {
	base, _ := withSweep(t, 80, 24)
	for _, w := range []int{80, 81, 99, 100, 137, 200, 260} {
		for _, h := range []int{24, 25, 31, 50, 60} {
			m := update(t, base, tea.WindowSizeMsg{Width: w, Height: h})
			for _, ks := range [][]string{{"1"}, {"2"}, {"3"}, {"3", "enter"}, {"3", "enter", "enter"}, {"4"}, {"5"}, {"?"}} {
				v := keys(t, m, ks...).View()
				checkFits(t, v, w, h)
			}
		}
	}
}
