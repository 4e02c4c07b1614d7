package model

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseColumnRoundTrip(t *testing.T) {
	for _, in := range []string{
		"1x", "uncapped", "1.5x",
		"1x time=0.5x", "3x time=uncapped",
		"1x latency=200ms", "1x latency=200ms jitter=10ms loss=1%",
		"uncapped bandwidth=1mbit", "1x bandwidth=1.5mbit",
		"1x disk-bps=1MiB disk-iops=50",
		"1x neighbours=4:cpu@100%", "2x neighbours=2:disk@50%",
		"1x time=2x latency=50ms",
	} {
		r, err := ParseColumn(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := r.String(); got != in {
			t.Errorf("%q reads back as %q", in, got)
		}
		b, _ := json.Marshal(r)
		var back Ratio
		if err := json.Unmarshal(b, &back); err != nil || back != r {
			t.Errorf("%q: JSON %s reads back as %v (%v)", in, b, back, err)
		}
	}
}

// An experiment written before knobs has plain ratios: they read as
// columns with no knobs, equal to the ratios the code compares with.
func TestOldRatiosReadAsPlainColumns(t *testing.T) {
	var tr Trial
	if err := json.Unmarshal([]byte(`{"id":"t0001","ratio":"1.5x","policy":{"ratio":"1.5x"}}`), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Ratio != (Ratio{K: 1.5}) || !tr.Ratio.Knobs.IsZero() || tr.Policy.Ratio != tr.Ratio {
		t.Fatalf("old record read as %#v", tr.Ratio)
	}
}

func TestKnobBaselinesAreThePlainColumn(t *testing.T) {
	// 1x time, no latency, unlimited bandwidth, no neighbours: each is
	// the knob's baseline, so the column is the plain ratio.
	for _, in := range []string{"1x time=1x", "1x latency=0", "1x bandwidth=unlimited", "1x neighbours=0:disk@50%", "1x disk-iops=unlimited"} {
		r, err := ParseColumn(in)
		if err != nil {
			t.Fatal(err)
		}
		if r != (Ratio{K: 1}) {
			t.Errorf("%q = %#v, want the plain 1x", in, r)
		}
	}
}

func TestParseAxisErrors(t *testing.T) {
	for _, c := range []struct{ name, list, want string }{
		{"time", "0.5x,abc", "not a multiple"},
		{"time", "1x,1", "listed twice"},
		{"latency", "-5ms", "not a duration"},
		{"latency", "2m", "more than a minute"},
		{"bandwidth", "10", "needs a unit"},
		{"bandwidth", "1bit", "from 8kbit"},
		{"loss", "100%", "under 100"},
		{"disk-iops", "many", "not a count"},
		{"disk-bps", "fast", "not a rate"},
		{"neighbours", "2:gpu", "cpu, membw or disk"},
		{"neighbours", "", "no neighbours values"},
	} {
		_, err := ParseAxis(c.name, c.list)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want %q", c.name, c.list, err, c.want)
		}
	}
}

func TestColumnsCrossRatiosAndKnobs(t *testing.T) {
	lat, _ := ParseAxis("latency", "0,200ms")
	tl, _ := ParseAxis("time", "0.5x,1x")
	cols := Columns([]Ratio{{K: 1}, Uncapped}, []Axis{lat, tl})
	var got []string
	for _, c := range cols {
		got = append(got, c.String())
	}
	want := "1x time=0.5x|1x|1x time=0.5x latency=200ms|1x latency=200ms|uncapped time=0.5x|uncapped|uncapped time=0.5x latency=200ms|uncapped latency=200ms"
	if strings.Join(got, "|") != want {
		t.Fatalf("columns\n %s\nwant\n %s", strings.Join(got, "|"), want)
	}
	// A resume plans from the recorded columns with no axes: the same.
	again := Columns(cols, nil)
	if len(again) != len(cols) {
		t.Fatalf("replanned %d columns from %d", len(again), len(cols))
	}
	for i := range cols {
		if again[i] != cols[i] {
			t.Fatalf("column %d replans as %v, was %v", i, again[i], cols[i])
		}
	}
}

func TestPlanCrossesKnobsWithSameSeeds(t *testing.T) {
	nb, _ := ParseAxis("neighbours", "0,4")
	p, err := NewPlan(PlanSpec{Tasks: []Task{{Name: "a", Agents: []Agent{{Name: "x"}}, Resources: Resources{CPUs: 1, MemoryBytes: 64 * MiB}}},
		Ratios: []Ratio{{K: 1}}, Axes: []Axis{nb.WithNeighbourLoad(LoadCPU, 100)}, Repeats: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Trials) != 4 || len(p.Ratios) != 2 {
		t.Fatalf("%d trials, %d columns; want 4, 2", len(p.Trials), len(p.Ratios))
	}
	if p.Trials[0].Seed != p.Trials[1].Seed || p.Trials[1].Ratio.Knobs.Neighbours != 4 || p.Trials[1].Policy.Ratio != p.Trials[1].Ratio {
		t.Fatalf("trials %+v", p.Trials[:2])
	}
}

func TestColumnOrderGroupsKnobsHarshFirst(t *testing.T) {
	parse := func(s string) Ratio {
		r, err := ParseColumn(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	m := NewMatrix(nil, nil)
	for _, s := range []string{"1x neighbours=2:cpu@100%", "1x latency=50ms", "uncapped", "1x time=uncapped", "1x latency=200ms", "1x", "1x time=0.5x", "1x disk-iops=50", "3x latency=200ms"} {
		m.Add(TrialResult{Trial: Trial{Task: "t", Ratio: parse(s)}, Outcome: Passed})
	}
	var got []string
	for _, r := range m.Ratios {
		got = append(got, r.String())
	}
	want := "1x|uncapped|1x time=0.5x|1x time=uncapped|1x latency=200ms|3x latency=200ms|1x latency=50ms|1x disk-iops=50|1x neighbours=2:cpu@100%"
	if strings.Join(got, "|") != want {
		t.Fatalf("order\n %s\nwant\n %s", strings.Join(got, "|"), want)
	}
}

// A knob's column is compared with the same ratio without knobs, not
// with the sweep's baseline ratio: 3x at latency 200ms against 3x.
func TestAnalyzeComparesWithinKnob(t *testing.T) {
	lat := Ratio{K: 3, Knobs: Knobs{Latency: 200 * time.Millisecond}}
	var res []TrialResult
	add := func(r Ratio, task string, o Outcome, n int) {
		for i := 0; i < n; i++ {
			res = append(res, TrialResult{Trial: Trial{Task: task, Agent: "a", Ratio: r, Repeat: i + 1}, Outcome: o})
		}
	}
	for _, task := range []string{"t1", "t2", "t3"} {
		add(Ratio{K: 1}, task, Failed, 3)
		add(Ratio{K: 3}, task, Passed, 3)
		add(lat, task, Failed, 3)
	}
	a := Analyze(NewMatrix(nil, res), Ratio{K: 1}, DefaultNoisePP, DefaultNoisePP)
	c, ok := a.Comparison(Success, lat)
	if !ok {
		t.Fatal("no comparison for the latency column")
	}
	if c.Base != (Ratio{K: 3}) || c.Diff != -1 {
		t.Fatalf("latency column compared with %v, diff %v; want 3x, -1", c.Base, c.Diff)
	}
	plain, _ := a.Comparison(Success, Ratio{K: 3})
	if plain.Base != (Ratio{K: 1}) || plain.Diff != 1 {
		t.Fatalf("3x compared with %v, diff %v; want 1x, +1", plain.Base, plain.Diff)
	}
	cs, _ := a.Cell(RowKey{"t1", "a"}, lat)
	if cs.VsBaseline.Diff != -1 {
		t.Fatalf("cell vs its baseline %v, want -1", cs.VsBaseline.Diff)
	}
}

func TestScaleTimeLimits(t *testing.T) {
	task := Task{AgentTimeout: 10 * time.Second, VerifierTimeout: 4 * time.Second,
		Agents:  []Agent{{Name: "a", Timeout: 6 * time.Second, InstallTimeout: 2 * time.Second}},
		Phases:  []Phase{{AgentTimeout: 8 * time.Second}},
		Network: "none"}
	half := ScaleTimeLimits(task, TimeScale{K: 0.5})
	if half.AgentTimeout != 5*time.Second || half.VerifierTimeout != 2*time.Second || half.Agents[0].Timeout != 3*time.Second ||
		half.Agents[0].InstallTimeout != time.Second || half.Phases[0].AgentTimeout != 4*time.Second || half.Phases[0].VerifierTimeout != 0 {
		t.Fatalf("0.5x: %+v", half)
	}
	if task.Agents[0].Timeout != 6*time.Second {
		t.Fatal("scaling changed the original task's agents")
	}
	free := ScaleTimeLimits(task, TimeScale{Uncapped: true})
	if free.AgentTimeout != NoTimeLimit || free.Agents[0].Timeout != NoTimeLimit {
		t.Fatalf("uncapped: %+v", free)
	}
}

func FuzzParseColumn(f *testing.F) {
	for _, s := range []string{"1x", "1x latency=200ms jitter=5ms", "uncapped neighbours=3:membw@40%", "2x time=0.5x disk-bps=10MiB", "1x bandwidth=1mbit loss=0.5%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseColumn(s)
		if err != nil {
			return
		}
		back, err := ParseColumn(r.String())
		if err != nil {
			t.Fatalf("%q wrote %q, which does not read: %v", s, r.String(), err)
		}
		if back != r {
			t.Fatalf("%q: %q reads back as %#v, was %#v", s, r.String(), back, r)
		}
	})
}

func TestAxisJSON(t *testing.T) {
	a, _ := ParseAxis("neighbours", "0,4")
	a = a.WithNeighbourLoad(LoadDisk, 50)
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"name":"neighbours","values":["","neighbours=4:disk@50%"]}` {
		t.Fatalf("axis JSON %s", b)
	}
	var back Axis
	if err := json.Unmarshal(b, &back); err != nil || len(back.Values) != 2 || back.Values[1] != a.Values[1] {
		t.Fatalf("read back %+v (%v)", back, err)
	}
}

func TestMeasureString(t *testing.T) {
	for _, c := range []struct {
		m    Measure
		want string
	}{
		{Measure{Name: "rtt", Value: 200.73, Unit: "ms"}, "rtt 201ms"},
		{Measure{Name: "rtt", Value: 0.30051, Unit: "ms"}, "rtt 0.301ms"},
		{Measure{Name: "cpu_wait", Value: 8034.4, Unit: "ms"}, "cpu_wait 8034ms"},
		{Measure{Name: "transfer_rate", Value: 7645868, Unit: "bit/s"}, "transfer_rate 7.65Mbit/s"},
		{Measure{Name: "write_rate", Value: 2050000, Unit: "B/s"}, "write_rate 1.96MiB/s"},
	} {
		if got := c.m.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.m, got, c.want)
		}
	}
	m, ok := ParseMeasure(FormatMeasure("model_rtt", 51.8, "ms"))
	if !ok || m.Name != "model_rtt" || m.Value != 51.8 || m.Unit != "ms" || m.Where != "container" {
		t.Fatalf("round trip: %+v %v", m, ok)
	}
	for _, bad := range []string{"headroom-measure: rtt", "headroom-measure: rtt NaN ms", "rtt 5 ms", "headroom-measure: a 1 b c"} {
		if _, ok := ParseMeasure(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A task's measure lines are kept up to MaxMeasures and counted past it.
func TestTaskMeasuresAreBounded(t *testing.T) {
	var k KnobRecord
	for i := 0; i < MaxMeasures+10; i++ {
		k.AddTaskMeasure(Measure{Name: "m", Value: 1, Unit: "s"})
	}
	if len(k.Measured) != MaxMeasures || k.MeasuresDropped != 10 {
		t.Errorf("kept %d, dropped %d; want %d and 10", len(k.Measured), k.MeasuresDropped, MaxMeasures)
	}
}

// A task's measure line named as one of headroom's own (agent_time) is
// counted, not kept; and a record that kept one (written before) shows
// headroom's figure, not the task's, whichever came last.
func TestTaskCannotGiveOwnMeasures(t *testing.T) {
	var k KnobRecord
	for _, line := range []string{"headroom-measure: agent_time 0.001 s", "headroom-measure: neighbour_cores 0 cores", "headroom-measure: rtt 5 ms"} {
		m, ok := ParseMeasure(line)
		if !ok {
			t.Fatalf("%q did not parse", line)
		}
		k.AddTaskMeasure(m)
	}
	if len(k.Measured) != 1 || k.Measured[0].Name != "rtt" || k.MeasuresDropped != 2 {
		t.Errorf("kept %+v, dropped %d; want rtt only, 2 dropped", k.Measured, k.MeasuresDropped)
	}
	own := Measure{Name: "agent_time", Value: 3.096, Unit: "s", Where: "runner"}
	planted := Measure{Name: "agent_time", Value: 0.001, Unit: "s", Where: "container"}
	for _, order := range [][]Measure{{own, planted}, {planted, own}} {
		trials := []TrialResult{{Knobs: &KnobRecord{Measured: order}}}
		if got := MeasuredText(trials); got != "agent_time 3.1s" {
			t.Errorf("%+v: %q, want headroom's own agent_time 3.1s", order, got)
		}
		if m, ok := MeasureOf(trials, "agent_time"); !ok || m.Value != 3.096 {
			t.Errorf("%+v: MeasureOf %+v %v, want 3.096", order, m, ok)
		}
	}
	if got := MeasuredText([]TrialResult{{Knobs: &KnobRecord{Measured: []Measure{planted}}}}); got != "" {
		t.Errorf("only a planted agent_time: %q, want none", got)
	}
}

// A sweep's neighbours are at most MaxNeighbours: --neighbours
// 1000000000000 (ParseCount allows 2^40) created containers for 142 s.
// A column already recorded with more still reads.
func TestNeighboursAreBounded(t *testing.T) {
	if a, err := ParseAxis("neighbours", "0,64"); err != nil || len(a.Values) != 2 || a.Values[1].Neighbours != 64 {
		t.Errorf("0,64: %+v, %v", a, err)
	}
	for _, v := range []string{"65", "1000000000000", "2,100:disk@50%"} {
		_, err := ParseAxis("neighbours", v)
		if err == nil || !strings.Contains(err.Error(), "is more than 64") || !strings.Contains(err.Error(), "use at most 64") {
			t.Errorf("neighbours %s: %v, want it refused with the bound", v, err)
		}
	}
	var k Knobs
	if err := k.UnmarshalText([]byte("neighbours=100:cpu@100%")); err != nil || k.Neighbours != 100 {
		t.Errorf("a recorded column of 100 neighbours: %+v, %v", k, err)
	}
}
