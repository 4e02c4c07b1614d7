package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fixture is a fixed experiment: four tasks × three ratios × four repeats.
func fixture() (*store.Manifest, []model.Ratio, []model.TrialResult) {
	ratios := []model.Ratio{{K: 1}, {K: 3}, model.Uncapped}
	spec := model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB, PidsLimit: 1024}
	m := &store.Manifest{ID: "20261129-120000-f1x7", Created: t0, Status: "finished", Seed: 7, Repeats: 4, Concurrency: 2, Ratios: ratios,
		Host: store.Host{Hostname: "ci", Kernel: "6.18", CPUs: 2, MemoryBytes: 24 << 30}, Engine: store.Engine{Backend: "docker", Version: "20.10.24", Details: map[string]string{"cgroup_version": "1", "cgroup_driver": "cgroupfs"}, SampleSource: "cgroup-v1"}}
	K, P, F, A := model.OOMKilled, model.Passed, model.Failed, model.PassedAfterOOM
	table := map[string][3][]model.Outcome{
		"builtin/bn-fit-modify":       {{K, K, K, K}, {P, P, F, P}, {P, P, F, P}},
		"builtin/compile-project":     {{K, K, P, K}, {P, P, P, P}, {P, P, P, P}},
		"builtin/memory-hungry-tests": {{K, K, K, K}, {K, K, K, P}, {P, P, P, P}},
		"builtin/swe-edit":            {{P, F, P, P}, {P, F, P, P}, {P, F, P, P}},
		"builtin/verifier-installs":   {{K, K, K, P}, {P, P, P, P}, {P, P, P, P}},
		"builtin/parallel-build":      {{A, A, P, A}, {P, P, P, P}, {P, P, P, P}},
		"builtin/bn-fit-lean":         {{F, P, F, F}, {F, P, F, F}, {F, P, F, F}},
	}
	var trials []model.TrialResult
	id := 0
	names := make([]string, 0, len(table))
	for task := range table {
		names = append(names, task)
	}
	sort.Strings(names)
	for _, task := range names {
		byRatio := table[task]
		m.Tasks = append(m.Tasks, store.NewTaskEntry(model.Task{Name: task, Source: "builtin:x.toml", Image: "img", Resources: spec, Agents: []model.Agent{{Name: "agent"}}}, ratios, 2))
		for ri, outs := range byRatio {
			for rep, o := range outs {
				id++
				r := ratios[ri]
				tr := model.TrialResult{Trial: model.Trial{ID: "t" + string(rune('a'+id%26)) + string(rune('a'+id/26)), Task: task, Agent: "agent", Ratio: r, Repeat: rep + 1, Seed: uint64(rep + 1), Policy: model.NewPolicy(spec, r, 2)},
					Outcome: o, Start: t0, End: t0.Add(3 * time.Second), PeakWorkingSetBytes: int64(60+20*rep) * model.MiB}
				if o == K || o == A {
					tr.OOMs = []model.OOMEvent{{At: t0.Add(time.Second), Step: "install", Source: "events", WorkingSetBytes: tr.Policy.HardLimitBytes}}
					tr.PeakWorkingSetBytes = tr.Policy.HardLimitBytes
				}
				if strings.Contains(task, "hungry") && o != K {
					tr.PeakWorkingSetBytes = 300 * model.MiB
				}
				trials = append(trials, tr)
			}
		}
	}
	return m, ratios, trials
}

func TestGoldenReports(t *testing.T) {
	m, ratios, trials := fixture()
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	for _, f := range Formats {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := rep.Write(&b, f); err != nil {
				t.Fatal(err)
			}
			golden.RequireEqual(t, b.Bytes())
		})
	}
	if err := rep.Write(&bytes.Buffer{}, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestReportLabelsTheRightThings(t *testing.T) {
	m, ratios, trials := fixture()
	a := New(m.ID, m, ratios, trials, DefaultOptions()).Analysis
	if c, _ := a.Comparison("infra-error", model.Uncapped); c.Noise || c.Diff > -0.5 {
		t.Errorf("1x → uncapped infra errors: %+v, want a real drop", c)
	}
	if c, _ := a.Cell(model.RowKey{Task: "builtin/swe-edit", Agent: "agent"}, model.Uncapped); !c.Noise {
		t.Errorf("swe-edit at uncapped vs 1x: %+v, want noise", c)
	}
}

// A task that could not run is listed under the matrix, with why, in
// every format, and is in no rate.
func TestReportListsTasksThatCouldNotRun(t *testing.T) {
	m, ratios, trials := fixture()
	before := New(m.ID, m, ratios, trials, DefaultOptions())
	for _, r := range ratios {
		trials = append(trials, model.TrialResult{Trial: model.Trial{ID: "nr" + r.String(), Task: "tb/broken", Agent: "oracle", Ratio: r, Repeat: 1},
			Outcome: model.InfraError, TaskNotRun: true, Reason: "task tb/broken: building Dockerfile: exit 100; last build output: E: Unable to locate package x"})
	}
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	for _, f := range Formats {
		var b bytes.Buffer
		if err := rep.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "tb/broken") || !strings.Contains(b.String(), "Unable to locate package x") {
			t.Errorf("%s report does not list tb/broken with why:\n%s", f, b.String())
		}
	}
	for i, rs := range rep.Analysis.ByRatio {
		if rs.Success != before.Analysis.ByRatio[i].Success || rs.Infra != before.Analysis.ByRatio[i].Infra {
			t.Errorf("%s: rates moved with a task that did not run: %+v vs %+v", rs.Ratio, rs, before.Analysis.ByRatio[i])
		}
	}
}

func TestPlotsAreWritten(t *testing.T) {
	m, ratios, trials := fixture()
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	dir := t.TempDir()
	if d := os.Getenv("HEADROOM_PLOT_DIR"); d != "" {
		dir = d // to look at the plots
	}
	for _, name := range []string{"shape.png", "shape.svg"} {
		path := filepath.Join(dir, name)
		if err := rep.Plot(path); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if len(data) < 1000 {
			t.Errorf("%s: %d bytes", name, len(data))
		}
	}
	f, _ := os.Open(filepath.Join(dir, "shape.png"))
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 1000 {
		t.Errorf("png: %v", err)
	}
	var samples []event.Sample
	for i := 0; i < 60; i++ {
		samples = append(samples, event.Sample{Time: t0.Add(time.Duration(i) * 50 * time.Millisecond), WorkingSetBytes: int64(i*2) * model.MiB, UsageBytes: int64(i*2+5) * model.MiB})
	}
	killed := trials[0]
	for _, tr := range trials {
		if len(tr.OOMs) > 0 {
			killed = tr
			break
		}
	}
	if err := rep.PlotTrial(killed.ID, samples, filepath.Join(dir, "trial.png")); err != nil {
		t.Fatal(err)
	}
	if err := rep.Plot(filepath.Join(dir, "shape.gif")); err == nil {
		t.Error("a .gif plot name must be refused")
	}
}

// oneTask is one task run at 1x and 3x, 3/7 and 7/7 passed.
func oneTask() (*store.Manifest, []model.Ratio, []model.TrialResult) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB, PidsLimit: 1024}
	ratios := []model.Ratio{{K: 1}, {K: 3}}
	m := &store.Manifest{ID: "20261130-120000-0ne1", Created: t0, Status: "finished", Seed: 7, Repeats: 7, Concurrency: 2, Ratios: ratios}
	m.Tasks = append(m.Tasks, store.NewTaskEntry(model.Task{Name: "my/task", Source: "x.toml", Image: "img", Resources: spec, Agents: []model.Agent{{Name: "oracle"}}}, ratios, 2))
	var trials []model.TrialResult
	for ri, passes := range []int{3, 7} {
		for rep := 1; rep <= 7; rep++ {
			o := model.Passed
			if rep > passes {
				o = model.Failed
			}
			r := ratios[ri]
			trials = append(trials, model.TrialResult{Trial: model.Trial{ID: fmt.Sprintf("t%d%d", ri, rep), Task: "my/task", Agent: "oracle", Ratio: r, Repeat: rep, Seed: uint64(rep), Policy: model.NewPolicy(spec, r, 2)},
				Outcome: o, Start: t0, End: t0.Add(3 * time.Second), PeakWorkingSetBytes: int64(60+10*rep) * model.MiB})
		}
	}
	return m, ratios, trials
}

// A one-task report: the per-ratio rates carry the Wilson interval (not
// ±0), and the comparison's interval and p-value come from one rule
// (3/7 → 7/7 was "+57pp [+14, +100] p 0.070 real").
func TestOneTaskReport(t *testing.T) {
	m, ratios, trials := oneTask()
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	var b bytes.Buffer
	if err := rep.Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "±0 ") {
		t.Errorf("a one-task report shows a zero interval:\n%s", b.String())
	}
	for _, c := range rep.Analysis.Comparisons {
		if !c.CI.Contains(0) != (c.P < 0.05) {
			t.Errorf("%s: CI %v disagrees with p %.3f", c.Metric, c.CI, c.P)
		}
	}
	golden.RequireEqual(t, b.Bytes())
}

// A design too small to detect anything says so instead of printing a
// difference beyond 100 points (it printed "detect 157pp").
func TestPowerLineNeverBeyond100pp(t *testing.T) {
	m, ratios, trials := oneTask()
	var few []model.TrialResult
	for _, tr := range trials {
		if tr.Repeat == 1 {
			few = append(few, tr)
		}
	}
	rep := New(m.ID, m, ratios, few, DefaultOptions())
	if rep.Analysis.Power.MinDetectable <= 1 {
		t.Fatalf("fixture: minimum detectable %.2f, want > 1", rep.Analysis.Power.MinDetectable)
	}
	var b bytes.Buffer
	if err := rep.Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.PowerLine(), "cannot detect any success difference") || regexp.MustCompile(`\b(1\d\d|[2-9]\d\d)pp`).MatchString(b.String()) {
		t.Errorf("a difference beyond 100pp printed:\n%s", b.String())
	}
}

// A one-task plot has error bars (they were zero-height), and one ratio
// sits mid-axis (it was drawn at both edges).
func TestRatePlotOneTaskOneRatio(t *testing.T) {
	m, _, trials := oneTask()
	one := []model.Ratio{{K: 1}}
	var at1 []model.TrialResult
	for _, tr := range trials {
		if tr.Ratio == one[0] {
			at1 = append(at1, tr)
		}
	}
	rep := New(m.ID, m, one, at1, DefaultOptions())
	_, errs := rateSeries(rep.Analysis.ByRatio, func(s model.RatioStats) model.Estimate { return s.Success }, 0)
	if len(errs) != 1 || errs[0].Low <= 0.2 || errs[0].High <= 0.2 {
		t.Errorf("one task, 3/7: error bars %+v, want the Wilson interval's [16–75%%]", errs)
	}
	p, err := rep.ratesPlot()
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != -0.5 || p.X.Max != 0.5 {
		t.Errorf("one ratio: x axis [%v, %v], want it centred on the point", p.X.Min, p.X.Max)
	}
	if err := rep.Plot(filepath.Join(t.TempDir(), "one.png")); err != nil {
		t.Fatal(err)
	}
}

// Step labels that would print over each other go to the next row; with
// no row left they are left out, never drawn on top of another.
func TestLabelRowsNeverOverlap(t *testing.T) {
	marks := []timeMark{{x: 0}, {x: 0.1}, {x: 0.2}, {x: 5}, {x: 0.3}}
	got := labelRows(marks, []float64{1, 1, 1, 1, 1}, 3)
	want := []int{0, 1, 2, 0, -1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if lbl := markLabels([]timeMark{{0, " install"}, {0.01, " build"}, {0.02, " test"}}, 10, 100); lbl == nil || len(lbl.Labels) != 3 || lbl.XYs[0].Y == lbl.XYs[1].Y || lbl.XYs[1].Y == lbl.XYs[2].Y {
		t.Errorf("three steps in the same instant: labels %+v, want three rows", lbl)
	}
}

// An empty cell and a cancelled trial no longer share "-": a cell where
// nothing finished is model.EmptyCellGlyph, and the legend names both.
func TestEmptyCellIsNotCancelled(t *testing.T) {
	m, ratios, trials := oneTask()
	var kept []model.TrialResult
	for _, tr := range trials {
		if tr.Ratio == ratios[1] {
			continue // nothing at 3x: an empty cell
		}
		if tr.Repeat == 7 {
			tr.Outcome = model.Cancelled
		}
		kept = append(kept, tr)
	}
	rep := New(m.ID, m, ratios, kept, DefaultOptions())
	row := model.RowKey{Task: "my/task", Agent: "oracle"}
	if got := rep.cellText(row, ratios[1]); got != model.EmptyCellGlyph {
		t.Errorf("empty cell %q", got)
	}
	// The cancelled trial is counted apart after the others' glyphs ("1-").
	if got := rep.cellText(row, ratios[0]); !strings.Contains(got, " 1"+model.Cancelled.Glyph()+" ") {
		t.Errorf("cell with a cancelled trial %q", got)
	}
	if model.EmptyCellGlyph == model.Cancelled.Glyph() {
		t.Error("the empty cell and a cancelled trial share a glyph")
	}
	var b bytes.Buffer
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), model.CancelledLegend()) || !strings.Contains(b.String(), model.EmptyCellGlyph+" not run") {
		t.Errorf("markdown legend missing:\n%s", b.String())
	}
}

func TestCausesAreShownAndCountedFromOutside(t *testing.T) {
	m, ratios, trials := oneTask()
	var kept []model.TrialResult
	for _, tr := range trials {
		if tr.Ratio == ratios[0] && tr.Repeat == 1 {
			tr.Outcome, tr.Cause = model.InfraError, model.CauseOutsidePressure
		}
		if tr.Ratio == ratios[0] && tr.Repeat == 2 {
			tr.Outcome, tr.Cause = model.InfraError, model.CauseKilledOutside
		}
		kept = append(kept, tr)
	}
	rep := New(m.ID, m, ratios, kept, DefaultOptions())
	row := model.RowKey{Task: "my/task", Agent: "oracle"}
	if got := strings.Fields(rep.cellText(row, ratios[0]))[1]; !strings.HasPrefix(got, "PS") {
		t.Errorf("cell glyphs %q: want the causes' P and S first", got)
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"table":    func(b *bytes.Buffer) error { return rep.Table(b) },
		"markdown": func(b *bytes.Buffer) error { return rep.Markdown(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "from outside") || !strings.Contains(b.String(), "2 of ") ||
			!strings.Contains(b.String(), "P "+model.CauseOutsidePressure.Describe()) {
			t.Errorf("%s: no outside count or cause legend:\n%s", name, b.String())
		}
	}
	var b bytes.Buffer
	if err := rep.JSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"outside_errors": 2`) && !strings.Contains(b.String(), `"outside_errors":2`) {
		t.Error("the JSON report has no outside_errors")
	}
}

// The JSON report streams its trials, each record verbatim on its own
// line (compact, as trials.jsonl has it), and is the one indented
// document it was but for that whitespace: with trials, without, and
// with strings the encoder escapes.
func TestJSONStreamsTheDocumentItWas(t *testing.T) {
	m, ratios, trials := oneTask()
	trials[0].Reason = "<&> \u2028 \"quoted\""
	for _, ts := range [][]model.TrialResult{trials, nil} {
		rep := New(m.ID, m, ratios, ts, DefaultOptions())
		var written bytes.Buffer
		if err := rep.JSON(&written); err != nil {
			t.Fatal(err)
		}
		// Seeds are strings in the report (quoteSeeds); as numbers, the
		// document is the one the Go types encode.
		got := bytes.NewBuffer(regexp.MustCompile(`"seed":( ?)"([0-9]+)"`).ReplaceAll(written.Bytes(), []byte(`"seed":$1$2`)))
		if !bytes.Contains(written.Bytes(), []byte(`"seed": "`)) {
			t.Error("the report's seeds are not strings")
		}
		// The same document as one value, encoded whole as before.
		var whole bytes.Buffer
		enc := json.NewEncoder(&whole)
		enc.SetIndent("", "  ")
		var d JSONReport
		if err := json.Unmarshal(got.Bytes(), &d); err != nil {
			t.Fatalf("the streamed JSON does not parse: %v", err)
		}
		if ts == nil {
			d.Trials = []model.TrialResult{}
		}
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, got.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if indented.String() != whole.String() {
			t.Errorf("%d trials: streamed JSON, indented, differs from the document encoded whole:\n%s\nwant\n%s", len(ts), indented.String(), whole.String())
		}
		for _, tr := range ts {
			line, _ := json.Marshal(tr)
			if !bytes.Contains(got.Bytes(), append(append([]byte("\n    "), line...), ',', '\n')) && !bytes.Contains(got.Bytes(), append(append([]byte("\n    "), line...), '\n')) {
				t.Errorf("trial %s's record is not on a line of its own as written", tr.ID)
			}
		}
		// The records copied as written (store.CopyTrialLines' lines, as
		// store.Append writes them) give the same bytes, nothing decoded.
		copied := New(m.ID, m, ratios, ts, DefaultOptions()).WithRecords(func(each func([]byte) error) error {
			for _, tr := range ts {
				line, err := json.Marshal(tr)
				if err != nil {
					return err
				}
				if err := each(line); err != nil {
					return err
				}
			}
			return nil
		})
		var fromLines bytes.Buffer
		if err := copied.JSON(&fromLines); err != nil {
			t.Fatal(err)
		}
		if fromLines.String() != written.String() {
			t.Errorf("%d trials: the JSON report from the records as written differs from the one encoding the trials:\n%s\nwant\n%s", len(ts), fromLines.String(), written.String())
		}
	}
	// A record source that gives fewer records than the report counts is
	// an error, never a short document that parses.
	short := New(m.ID, m, ratios, trials, DefaultOptions()).WithRecords(func(each func([]byte) error) error { return nil })
	if err := short.JSON(io.Discard); err == nil {
		t.Error("a JSON report missing every trial record was written without an error")
	}
	// Nor one more than it counts.
	long := New(m.ID, m, ratios, trials, DefaultOptions()).WithRecords(func(each func([]byte) error) error {
		for range len(trials) + 1 {
			if err := each([]byte(`{}`)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := long.JSON(io.Discard); err == nil {
		t.Error("a JSON report given more records than trials was written without an error")
	}
}

// On Kubernetes the legend names what is done to a pod from outside, not
// Docker's commands (issue #39: `S killed from outside (docker
// kill/stop/rm)` under a sweep of pods).
func TestCauseLegendIsTheBackends(t *testing.T) {
	m, ratios, trials := oneTask()
	for i := range trials {
		if trials[i].Ratio == ratios[0] && trials[i].Repeat == 1 {
			trials[i].Outcome, trials[i].Cause = model.InfraError, model.CauseKilledOutside
		}
	}
	m.Engine.Backend = "kubernetes"
	legend := New(m.ID, m, ratios, trials, DefaultOptions()).causeLegend()
	if strings.Contains(legend, "docker") || !strings.Contains(legend, "S killed from outside (its pod deleted") {
		t.Errorf("kubernetes legend %q", legend)
	}
	m.Engine.Backend = ""
	if legend := New(m.ID, m, ratios, trials, DefaultOptions()).causeLegend(); !strings.Contains(legend, "docker kill/stop/rm") {
		t.Errorf("docker legend %q", legend)
	}
}

// An experiment recorded before headroom graded a timed-out agent's work
// says how many of its timeouts went unverified; one whose records carry
// the harness's grading says nothing.
func TestOldAgentTimeoutsAreNamedAsUngraded(t *testing.T) {
	m, ratios, trials := oneTask()
	for i := range trials[:3] {
		trials[i].Outcome, trials[i].Cause = model.Timeout, model.CauseAgentTimeout
		trials[i].Steps = []model.StepResult{{Name: "think", Phase: model.PhaseAgent, TimedOut: true}}
	}
	for _, graded := range []bool{false, true} {
		kept := append([]model.TrialResult(nil), trials...)
		if graded {
			for i := range kept {
				kept[i].Grading = model.GradingHarness
			}
		}
		for _, write := range []func(*Report, *bytes.Buffer) error{
			func(r *Report, b *bytes.Buffer) error { return r.Table(b) },
			func(r *Report, b *bytes.Buffer) error { return r.Markdown(b) },
		} {
			var b bytes.Buffer
			if err := write(New(m.ID, m, ratios, kept, DefaultOptions()), &b); err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(b.String(), "3 trials recorded as agent timeouts without running the verifier")
			if said == graded {
				t.Errorf("graded %v: the migration note said %v:\n%s", graded, said, b.String())
			}
		}
	}
}

// The JSON report writes seeds as strings: 64-bit seeds written as
// numbers were rounded by jq 1.6 and JavaScript (17979624318460405210
// read back as 17979624318460406000), so a trial could not be rerun from
// its report. Only seeds change; a "seed" inside a string stays as it is.
func TestJSONReportWritesSeedsAsStrings(t *testing.T) {
	in := []byte(`{"trial":{"id":"t0001","seed":17979624318460405210,"repeat":1},"reason":"said \"seed\":42","manifest":{"seed": 7}}`)
	want := `{"trial":{"id":"t0001","seed":"17979624318460405210","repeat":1},"reason":"said \"seed\":42","manifest":{"seed": "7"}}`
	if got := string(quoteSeeds(in)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var doc struct {
		Trial struct {
			Seed string `json:"seed"`
		} `json:"trial"`
	}
	if err := json.Unmarshal(quoteSeeds(in), &doc); err != nil || doc.Trial.Seed != "17979624318460405210" {
		t.Errorf("seed %q (%v), want it exact", doc.Trial.Seed, err)
	}
}

// A task name holding `|` (a name is any printable text) cannot end a
// markdown cell and forge another: every row of every table has its
// header's cells.
func TestMarkdownEscapesPipesInCells(t *testing.T) {
	m, ratios, trials := oneTask()
	const name = "my|task | forged"
	m.Tasks[0].Name = name
	for i := range trials {
		trials[i].Task = name
	}
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	var b bytes.Buffer
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	cells := func(l string) int { return strings.Count(l, "|") - strings.Count(l, `\|`) }
	want, rows := -1, 0
	for _, l := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		if want < 0 {
			want = cells(l)
			continue
		}
		rows++
		if strings.Contains(l, "forged") && cells(l) != want {
			t.Errorf("row %q has %d cell bars, its table's header %d", l, cells(l), want)
		}
	}
	if !strings.Contains(b.String(), `my\|task \| forged`) {
		t.Errorf("the name is not escaped:\n%s", b.String())
	}
}

// A replayed recording's repeats are the same actions each time: its
// trials pair by repeat as a seeded task's do, where a task that draws its
// need each run is compared unpaired.
func TestReplayedTrialsPairByRepeat(t *testing.T) {
	m, ratios, trials := oneTask()
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	if rep.seeded()["my/task"] {
		t.Fatal("the fixture's task already replays its repeats")
	}
	for i := range trials {
		trials[i].Replay = &model.ReplayRecord{Source: "harbor job/trial", Actions: 3}
	}
	rep = New(m.ID, m, ratios, trials, DefaultOptions())
	if !rep.seeded()["my/task"] {
		t.Error("a replayed recording's trials do not pair by repeat")
	}
}

// The JSON report reads back with its seeds exact (written as strings for
// other tools, numbers again in Go).
func TestJSONReportReadsBackWithExactSeeds(t *testing.T) {
	m, ratios, trials := oneTask()
	m.Seed = 17979624318460405210
	var b bytes.Buffer
	if err := New(m.ID, m, ratios, trials, DefaultOptions()).JSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc JSONReport
	if err := ReadJSON(b.Bytes(), &doc); err != nil || doc.Manifest == nil || doc.Manifest.Seed != m.Seed || len(doc.Trials) != len(trials) || doc.Trials[0].Seed != trials[0].Seed {
		t.Errorf("read back: %v, manifest %+v, %d trials", err, doc.Manifest, len(doc.Trials))
	}
}

// A cell whose trials were all cancelled has no rate: it read "0/0 7-
// [0–100%]", its ratio "success rate 0% [0–100] (0/0)" and the CSV
// success_rate 0.0000 beside counted 0, a measured 0% to anyone reading
// them. Now "—" in the table and markdown, empty CSV fields and JSON
// null (the key kept, so a consumer sees no data rather than no field).
func TestUncountedCellIsNoData(t *testing.T) {
	m, ratios, trials := oneTask()
	for i := range trials {
		if trials[i].Ratio == ratios[1] {
			trials[i].Outcome = model.Cancelled
		}
	}
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	var table, md, csvOut, js bytes.Buffer
	for _, w := range []struct {
		b     *bytes.Buffer
		write func(io.Writer) error
	}{{&table, rep.Table}, {&md, rep.Markdown}, {&csvOut, rep.CSV}, {&js, rep.JSON}} {
		if err := w.write(w.b); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string][]string{
		table.String():  {"3/7 +++xxxx [16–75%]  — 7-\n", "(3/7)     — (0 counted)\n", "— no trial counted: no rate"},
		md.String():     {"| `— 7-` |", "| 43% [16–75] | — (0 counted) |", "| 0% [0–35] | — |"},
		csvOut.String(): {"\ncell,my/task,oracle,3x,0,0,,,,0,,,,,,,7-\n", "\nratio,,,3x,0,0,,,,0,,,,,,,\n"},
	} {
		for _, w := range want {
			if !strings.Contains(name, w) {
				t.Errorf("want %q in:\n%s", w, name)
			}
		}
	}
	for _, bad := range []string{"0/0 7-", "0% [0–100] (0/0)", "3x,0,0,0.0000"} {
		if strings.Contains(table.String()+md.String()+csvOut.String(), bad) {
			t.Errorf("%q still shown", bad)
		}
	}
	var doc JSONReport
	if err := ReadJSON(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Cells {
		if (c.Ratio == ratios[1]) != (c.SuccessRate == nil || c.InfraErrorRate == nil) {
			t.Errorf("cell %s: success %v infra %v, want null only where none counted", c.Ratio, c.SuccessRate, c.InfraErrorRate)
		}
	}
	if r := doc.Ratios[1]; r.Counted != 0 || r.SuccessRate != nil || r.InfraErrorRate != nil || !strings.Contains(js.String(), `"success_rate": null`) {
		t.Errorf("ratio 3x %+v, want counted 0 and null rates", r)
	}
	if r := doc.Ratios[0]; r.SuccessRate == nil || *r.SuccessRate != 3.0/7 {
		t.Errorf("ratio 1x %+v, want 3/7", r)
	}
}

// A recorded pass that fails its verifier here is the task's verdict on
// the same actions, not the machine's; one that fails uncapped too does
// not replay deterministically. The report called every failure of a
// recorded pass a "machine failure by construction", a coin-flip action's
// 4 of 6 uncapped among them (the twenty-fifth attacker's 2).
func TestReplayFailuresAreTheMachinesOnlyWhenKilled(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}
	ratios := []model.Ratio{{K: 1}, model.Uncapped}
	m := &store.Manifest{ID: "20261207-050000-rep1", Created: t0, Status: "finished", Seed: 7, Repeats: 2, Ratios: ratios}
	var trials []model.TrialResult
	add := func(task string, r model.Ratio, rep int, o model.Outcome) {
		trials = append(trials, model.TrialResult{Trial: model.Trial{ID: fmt.Sprintf("%s-%s-%d", task, r, rep), Task: task, Agent: "replay", Ratio: r, Repeat: rep, Policy: model.NewPolicy(spec, r, 2)},
			Outcome: o, Start: t0, End: t0.Add(time.Second), Replay: &model.ReplayRecord{Source: "harbor job/" + task, Actions: 1, Ran: 1, RecordedOutcome: "passed"}})
	}
	for _, task := range []string{"coin__A", "heavy__B"} {
		m.Tasks = append(m.Tasks, store.NewTaskEntry(model.Task{Name: task, Source: "x", Image: "img", Resources: spec, Agents: []model.Agent{{Name: "replay"}}}, ratios, 2))
	}
	add("coin__A", ratios[0], 1, model.Failed)
	add("coin__A", ratios[0], 2, model.Failed)
	add("coin__A", ratios[1], 1, model.Failed)
	add("coin__A", ratios[1], 2, model.Passed)
	add("heavy__B", ratios[0], 1, model.OOMKilled)
	add("heavy__B", ratios[0], 2, model.OOMKilled)
	add("heavy__B", ratios[1], 1, model.Passed)
	add("heavy__B", ratios[1], 2, model.Passed)
	var b bytes.Buffer
	if err := New(m.ID, m, ratios, trials, DefaultOptions()).Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"at 1x: 4 of 4 replays of recorded passes failed here: 2 the machine's by construction (killed, or an infra error), 2 the task's verdict on the same actions (2 failed)",
		"at uncapped: 1 of 4 replays of recorded passes failed here: the task's verdict on the same actions (1 failed), none killed: not the machine's by construction",
		"coin__A: 1 of 2 replays failed uncapped too, with nothing limiting them: its actions do not replay deterministically here, or the task (x) is not the one recorded",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "heavy__B: 0 of") || strings.Contains(b.String(), "heavy__B: 1 of") {
		t.Errorf("heavy__B replays uncapped:\n%s", b.String())
	}
}

// A task whose memory_mb was misspelt ran every column from the 2 GiB
// default: its row says "(typo)" in every format and the table says
// which key and what applied (a new user's: the run's one warning was all).
func TestTypoRowIsMarkedAndSaid(t *testing.T) {
	m, ratios, trials := fixture()
	e := &m.Tasks[0]
	e.Deviations = append(e.Deviations, model.Deviation{What: model.SuspectedTypo, Detail: "line 4: environment.memroy_mb: did you mean memory_mb?" + model.TypoIgnored})
	e.Resources.Defaulted = append(e.Resources.Defaulted, "memory")
	rep := New(m.ID, m, ratios, trials, DefaultOptions())
	for _, f := range []string{"table", "markdown"} {
		var b bytes.Buffer
		if err := rep.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{e.Name + " · agent (typo)", "memroy_mb: did you mean memory_mb?", "every column's limits are scaled from them"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s report lacks %q:\n%s", f, want, b.String())
			}
		}
		if n := strings.Count(b.String(), "(typo)"); n != 2 {
			t.Errorf("%s report says (typo) %d times; want 2: its row and the head of its note, no other row", f, n)
		}
	}
}

// A recorded pass whose think time, as --think-time scaled it, ran past
// the agent's limit times out uncapped too: the think time given, not
// its actions' non-determinism (the twenty-ninth attacker's 4).
func TestReplayTimedOutByItsThinkTimeIsSaidSo(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}
	ratios := []model.Ratio{model.Uncapped}
	m := &store.Manifest{ID: "20261207-090000-rep2", Created: t0, Status: "finished", Seed: 7, Repeats: 1, Ratios: ratios}
	m.Tasks = append(m.Tasks, store.NewTaskEntry(model.Task{Name: "slow__A", Source: "x", Image: "img", Resources: spec, Agents: []model.Agent{{Name: "replay"}}}, ratios, 2))
	past := "its think time with --think-time ×100 is 2m30s in all, longer than the agent's time limit (2m0s): every replay times out"
	trials := []model.TrialResult{{Trial: model.Trial{ID: "t1", Task: "slow__A", Agent: "replay", Ratio: ratios[0], Repeat: 1, Policy: model.NewPolicy(spec, ratios[0], 2)},
		Outcome: model.Timeout, Cause: model.CauseAgentTimeout, Start: t0, End: t0.Add(time.Second), Replay: &model.ReplayRecord{Source: "harbor job/slow__A", Actions: 2, Ran: 1, RecordedOutcome: "passed", ThinkCapped: past}}}
	var b bytes.Buffer
	if err := New(m.ID, m, ratios, trials, DefaultOptions()).Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if want := "slow__A: 1 of 1 replays failed uncapped too: " + past + "; not its actions' doing"; !strings.Contains(b.String(), want) || strings.Contains(b.String(), "with nothing limiting them: its actions") {
		t.Errorf("report lacks %q, or blames the actions:\n%s", want, b.String())
	}
}

// Two rows that differ (one agent always passes, the other never) give a
// rate interval of most of 0–100, clustered by row on 1 degree of
// freedom: the report says why, in text and markdown; a third row or two
// rows alike say nothing (the console's showcase read "50% [0–100]" with
// nothing to say why: the fifth new user's).
func TestTwoRowsThatDifferSayWhyTheRateIsWide(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB, PidsLimit: 1024}
	ratios := []model.Ratio{{K: 1}, {K: 3}}
	build := func(passes map[string]int) string {
		t.Helper()
		m := &store.Manifest{ID: "20261130-120000-tw0r", Created: t0, Status: "finished", Seed: 7, Repeats: 4, Concurrency: 2, Ratios: ratios}
		var agents []model.Agent
		for a := range passes {
			agents = append(agents, model.Agent{Name: a})
		}
		m.Tasks = append(m.Tasks, store.NewTaskEntry(model.Task{Name: "my/task", Source: "x.toml", Image: "img", Resources: spec, Agents: agents}, ratios, 2))
		var trials []model.TrialResult
		for _, r := range ratios {
			for a, k := range passes {
				for rep := 1; rep <= 4; rep++ {
					o := model.Passed
					if rep > k {
						o = model.Failed
					}
					trials = append(trials, model.TrialResult{Trial: model.Trial{ID: fmt.Sprintf("t%s%s%d", r, a, rep), Task: "my/task", Agent: a, Ratio: r, Repeat: rep, Seed: uint64(rep), Policy: model.NewPolicy(spec, r, 2)},
						Outcome: o, Start: t0, End: t0.Add(3 * time.Second)})
				}
			}
		}
		var out strings.Builder
		for _, format := range []string{"table", "markdown"} {
			var b bytes.Buffer
			if err := New(m.ID, m, ratios, trials, DefaultOptions()).Write(&b, format); err != nil {
				t.Fatal(err)
			}
			out.WriteString(b.String())
		}
		return out.String()
	}
	const note = "Two rows of task and agent: a rate's interval is clustered by row"
	if out := build(map[string]int{"heavy": 0, "lean": 4}); strings.Count(out, note) != 2 {
		t.Errorf("two rows that differ: want the note in table and markdown:\n%s", out)
	}
	for _, passes := range []map[string]int{{"heavy": 4, "lean": 4}, {"heavy": 0, "lean": 4, "third": 2}} {
		if out := build(passes); strings.Contains(out, note) {
			t.Errorf("%v: the note where no rate is that wide with two rows:\n%s", passes, out)
		}
	}
}
