package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// knobSweep is six tasks run at the columns given, 3 repeats each,
// passing where pass says.
func knobSweep(t *testing.T, cols []string, pass func(col string, task int) bool) (*store.Manifest, []model.Ratio, []model.TrialResult) {
	t.Helper()
	spec := model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB, PidsLimit: 1024}
	var ratios []model.Ratio
	for _, c := range cols {
		r, err := model.ParseColumn(c)
		if err != nil {
			t.Fatal(err)
		}
		ratios = append(ratios, r)
	}
	m := &store.Manifest{ID: "20261202-010000-kn0b", Created: t0, Status: "finished", Seed: 7, Repeats: 3, Concurrency: 1, Ratios: ratios}
	var trials []model.TrialResult
	for task := 0; task < 6; task++ {
		name := fmt.Sprintf("my/task%d", task)
		m.Tasks = append(m.Tasks, store.NewTaskEntry(model.Task{Name: name, Source: "x.toml", Image: "img", Resources: spec, Agents: []model.Agent{{Name: "oracle"}}}, ratios, 2))
		for ci, r := range ratios {
			for rep := 1; rep <= 3; rep++ {
				o := model.Failed
				if pass(cols[ci], task) {
					o = model.Passed
				}
				trials = append(trials, model.TrialResult{Trial: model.Trial{ID: fmt.Sprintf("t%d%d%d", task, ci, rep), Task: name, Agent: "oracle", Ratio: r, Repeat: rep, Seed: uint64(rep), Policy: model.NewPolicy(spec, r, 2)},
					Outcome: o, Start: t0, End: t0.Add(3 * time.Second)})
			}
		}
	}
	return m, ratios, trials
}

// A time-limit sweep without the plain column (--time-limits 0.5x,0.75x)
// still says what the tighter limit costs: 0.5x against 0.75x, paired by
// task, with its interval (it said "run at least two ratios to compare").
func TestKnobSweepWithoutThePlainColumnCompares(t *testing.T) {
	cols := []string{"1x time=0.5x", "1x time=0.75x"}
	m, ratios, trials := knobSweep(t, cols, func(col string, task int) bool { return col == "1x time=0.75x" || task < 2 })
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	c, ok := rep.Analysis.Comparison(model.Success, ratios[0])
	if !ok || c.Base != ratios[1] {
		t.Fatalf("comparisons %+v: want 1x time=0.5x against 1x time=0.75x", rep.Analysis.Comparisons)
	}
	if d := c.Diff; d > -0.66 || d < -0.67 {
		t.Errorf("tighter time costs %.2f, want −4/6", d)
	}
	var b bytes.Buffer
	if err := rep.Write(&b, "markdown"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1x time=0.5x vs 1x time=0.75x | -67pp", "against its mildest one run"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "run at least two ratios") {
		t.Errorf("report says there is nothing to compare:\n%s", out)
	}
}

// A knob's column can be the baseline (report --baseline "1x time=2x",
// as the console's b allows): its knob's other columns are compared
// with it.
func TestKnobColumnAsBaseline(t *testing.T) {
	cols := []string{"1x", "1x time=0.5x", "1x time=2x"}
	m, ratios, trials := knobSweep(t, cols, func(col string, task int) bool { return col != "1x time=0.5x" || task < 3 })
	o := DefaultOptions()
	o.Baseline = ratios[2]
	rep := New(m.ID, m, ratios, trials, o)
	c, ok := rep.Analysis.Comparison(model.Success, ratios[1])
	if !ok || c.Base != ratios[2] || c.Diff != -0.5 {
		t.Fatalf("comparison of 0.5x: %+v (ok %v), want −50pp against 1x time=2x", c, ok)
	}
}

// A knob's column's failures on a contended host are the knob's, not
// listed as failures "the limit does not explain" (latency and time
// limit timeouts were).
func TestKnobFailuresAreNotTheHosts(t *testing.T) {
	cols := []string{"1x", "1x time=0.5x", "1x latency=200ms"}
	m, ratios, trials := knobSweep(t, cols, func(col string, task int) bool { return col == "1x" || task == 5 })
	for i := range trials {
		trials[i].Noise = &model.HostNoise{Contended: true, Why: "load 17.0 on 2 CPUs"}
		if !trials[i].Outcome.Success() {
			trials[i].Outcome, trials[i].Reason = model.Timeout, "agent timed out"
		}
	}
	var b bytes.Buffer
	if err := New(m.ID, m, ratios, trials, DefaultOptions()).Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "the limit does not explain") {
		t.Errorf("knob columns' timeouts listed as the host's:\n%s", out)
	}
	for _, want := range []string{"15 failure(s) on a contended host were in the columns of a knob (time limit)", "15 failure(s) on a contended host were in the columns of a knob (network)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A neighbours column shows what its neighbours took beside what they
// were asked (its label is the ask), disk neighbours' writes too.
func TestNeighboursTookIsShown(t *testing.T) {
	cols := []string{"1x", "1x neighbours=4:disk@100%"}
	m, ratios, trials := knobSweep(t, cols, func(string, int) bool { return true })
	for i := range trials {
		if !trials[i].Ratio.Knobs.IsZero() {
			trials[i].Knobs = &model.KnobRecord{Measured: []model.Measure{{Name: "neighbour_cores", Value: 0.31, Unit: "cores", Where: "cgroup"}, {Name: "neighbour_write_rate", Value: 12 << 20, Unit: "B/s", Where: "neighbours"}}}
		}
	}
	var b bytes.Buffer
	if err := New(m.ID, m, ratios, trials, DefaultOptions()).Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if want := "1x neighbours=4:disk@100%: asked 4 × 100% of a core (4 cores); the neighbours took 0.31 cores in all and wrote 12MiB/s to disk (median per trial)"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}

// What the trials measured inside is titled the knobs' effect only when a
// column has a knob: agent_time is measured always, and a plain 1x/2x
// report called it "Measured effect of the knobs" (a new user's read).
func TestMeasuredIsTheKnobsOnlyWithAKnob(t *testing.T) {
	for _, c := range []struct {
		cols  []string
		title string
	}{
		{[]string{"1x", "2x"}, "Measured inside the trials"},
		{[]string{"1x", "1x time=2x"}, "Measured effect of the knobs"},
	} {
		m, ratios, trials := knobSweep(t, c.cols, func(string, int) bool { return true })
		for i := range trials {
			trials[i].Knobs = &model.KnobRecord{Measured: []model.Measure{{Name: "agent_time", Value: 0.87, Unit: "s", Where: "steps"}}}
		}
		var b bytes.Buffer
		if err := New(m.ID, m, ratios, trials, DefaultOptions()).Write(&b, "markdown"); err != nil {
			t.Fatal(err)
		}
		other := "Measured effect of the knobs"
		if c.title == other {
			other = "Measured inside the trials"
		}
		if !strings.Contains(b.String(), "## "+c.title) || strings.Contains(b.String(), other) {
			t.Errorf("%v: want the section %q:\n%s", c.cols, c.title, b.String())
		}
	}
}

// Two ratios asked for, one cut short before any counted trial: the
// power line says there is nothing to compare yet, not "run at least two
// ratios" (a new user's interrupted run).
func TestPowerLineOfARunCutShort(t *testing.T) {
	m, ratios, trials := knobSweep(t, []string{"1x", "2x"}, func(string, int) bool { return true })
	for i := range trials {
		if trials[i].Ratio == ratios[1] {
			trials[i].Outcome = model.Cancelled
		}
	}
	line := New(m.ID, m, ratios, trials, DefaultOptions()).PowerLine()
	if !strings.Contains(line, "of the 2 ratios asked for, 1 has counted trials: nothing to compare yet") {
		t.Errorf("power line %q", line)
	}
}
