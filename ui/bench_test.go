package ui

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// busyModel is the console mid-sweep: 8 trials running with a minute of
// 20 Hz samples and pip output each, over a 20-task × 6-ratio matrix.
func busyModel(b testing.TB, w, h, tasks int) Model {
	return busyModelRunning(b, w, h, tasks, 8)
}

// busyModelRunning is busyModel with running trials running.
func busyModelRunning(b testing.TB, w, h, tasks, running int) Model {
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
	sw, err := l.Launch(LaunchSpec{Tasks: ts, Ratios: model.StandardRatios, Repeats: 3, Concurrency: running, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	m = update(b, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	plan := sw.Plan()
	var evs []event.Event
	now := t0.Add(3 * time.Second)
	for i, tr := range plan.Trials {
		base := event.Base{Trial: tr.ID, Time: now}
		if i < running {
			evs = append(evs, event.TrialStarted{Base: base, ContainerID: "c", SampleSource: "cgroup-v1"},
				event.StepStarted{Base: base, Phase: "agent", Step: model.Step{Name: "install", Show: "pip install pandas"}})
			for s := 0; s < 1200; s++ {
				at := now.Add(time.Duration(s-1200) * 50 * time.Millisecond)
				evs = append(evs, event.MemorySample{Base: event.Base{Trial: tr.ID, Time: at}, Sample: event.Sample{Time: at, WorkingSetBytes: int64(s%100+20) << 20}})
			}
			for s := 0; s < 50; s++ {
				evs = append(evs, event.OutputLine{Base: base, Step: "install", Text: fmt.Sprintf("Collecting package-%d", s)})
			}
			continue
		}
		o := model.Outcomes[i%5]
		evs = append(evs, event.TrialEnded{Base: base, Result: model.TrialResult{Trial: tr, Outcome: o, Start: t0, End: now}})
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

// Cards beyond the screen cost nothing: the live frame with 32 trials
// running (160×50 shows 16 cards) against the same frame with only as
// many running as the screen shows, drawn alternately so that drift on a
// shared machine hits both (ns/op is the pair).
func BenchmarkViewLive32(b *testing.B) {
	m32 := busyModelRunning(b, 160, 50, 20, 32)
	shown := len(liveCards(m32.common(), m32.live.w, m32.live.h).cards())
	mShown := busyModelRunning(b, 160, 50, 20, shown)
	var t32, tShown time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		_ = m32.View()
		mid := time.Now()
		_ = mShown.View()
		t32 += mid.Sub(start)
		tShown += time.Since(mid)
	}
	b.ReportMetric(float64(t32.Microseconds())/1000/float64(b.N), "ms/frame-32-running")
	b.ReportMetric(float64(tShown.Microseconds())/1000/float64(b.N), "ms/frame-only-shown-running")
	b.ReportMetric(float64(t32)/float64(tShown), "ratio")
	b.ReportMetric(float64(shown), "cards-shown")
}

// One second of the console's work with n trials live at 20 Hz: the
// samples and output lines arriving in the batches the console takes
// (one per batchWindow), each folded in and drawn. ns/op over 1e9 is the
// share of a core the live screen costs.
func BenchmarkLiveSecond8(b *testing.B)  { benchLiveSecond(b, 8) }
func BenchmarkLiveSecond32(b *testing.B) { benchLiveSecond(b, 32) }

func benchLiveSecond(b *testing.B, n int) {
	m := busyModelRunning(b, 160, 50, 20, n)
	var ids []string
	for _, id := range m.state.Order {
		if m.state.Trials[id].Phase == Running {
			ids = append(ids, id)
		}
	}
	if len(ids) != n {
		b.Fatalf("%d trials running, want %d", len(ids), n)
	}
	perBatch := int(batchWindow / (50 * time.Millisecond))
	batches := int(time.Second / batchWindow)
	b.ReportAllocs()
	b.ResetTimer()
	at := t0.Add(3 * time.Second)
	for i := 0; i < b.N; i++ {
		for k := 0; k < batches; k++ {
			var evs []event.Event
			for _, id := range ids {
				for s := 0; s < perBatch; s++ {
					at := at.Add(time.Duration(s) * 50 * time.Millisecond)
					evs = append(evs, event.MemorySample{Base: event.Base{Trial: id, Time: at}, Sample: event.Sample{Time: at, WorkingSetBytes: int64(s%100+20) << 20}})
				}
				evs = append(evs, event.OutputLine{Base: event.Base{Trial: id, Time: at}, Step: "install", Text: "Collecting numpy"})
			}
			at = at.Add(batchWindow)
			m = update(b, m, eventsMsg{events: evs})
			_ = m.View()
		}
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
	var burst []event.Event
	for i := 0; i < 1000; i++ {
		burst = append(burst, event.OutputLine{Base: event.Base{Trial: "t0001", Time: t0}, Step: "install", Text: "Collecting pandas"})
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

// From the runner's OOM event to a screen that shows the banner: one
// Update with the event and one View, with 8 cards live.
func BenchmarkOOMToScreen(b *testing.B) {
	m := busyModel(b, 160, 50, 20)
	tr := m.state.Trials["t0001"].Trial
	kill := event.OOMKill{Base: event.Base{Trial: tr.ID, Time: t0}, OOM: model.OOMEvent{At: t0, Step: "install", Source: "events", WorkingSetBytes: 127 << 20}, LimitBytes: tr.Policy.HardLimitBytes}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next := update(b, m, eventsMsg{events: []event.Event{kill}})
		if v := next.View(); !strings.Contains(v, "OOM KILL") {
			b.Fatal("no banner")
		}
	}
}

// A 10,000-trial experiment loaded for browsing: every trial browsable,
// and the heap it holds (measured from before the records were made, so
// records it kept count too) under heldBound.
func TestMemoryOf10kTrialExperiment(t *testing.T) {
	const heldBound = 48 << 20 // about 5 KiB a trial; 27.7 MiB measured (docs/PERFORMANCE.md)
	task := heavyOnly(t)
	plan, _ := model.NewPlan(model.PlanSpec{Tasks: []model.Task{task}, Ratios: model.StandardRatios, Repeats: 10000 / 6, Seed: 1})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var results []model.TrialResult
	for _, tr := range plan.Trials {
		results = append(results, model.TrialResult{Trial: tr, Outcome: model.Passed, Start: t0, End: t0.Add(time.Second),
			Steps: []model.StepResult{{Name: "install", Show: "pip install pandas", Output: strings.Repeat("Collecting x\n", 20)}, {Name: "verify"}}})
	}
	s := FromResults(plan, results)
	results = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d trials held for browsing: %.1f MiB of heap", len(s.Order), float64(held)/(1<<20))
	if len(s.Order) != len(plan.Trials) {
		t.Errorf("%d of %d trials held for browsing", len(s.Order), len(plan.Trials))
	}
	if held > heldBound {
		t.Errorf("a 10,000-trial experiment holds %.1f MiB of heap, over %d MiB", float64(held)/(1<<20), heldBound>>20)
	}
	runtime.KeepAlive(s)
}
