package store

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// result is a record of trial id, its repeat the number in the id (t3:
// repeat 3), as a plan gives each trial of one cell its own repeat.
func result(id string, o model.Outcome) model.TrialResult {
	r := model.Ratio{K: 1.5}
	p := model.NewPolicy(model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB}, r, 2)
	rep, err := strconv.Atoi(strings.TrimLeft(id, "t0"))
	if err != nil || rep < 1 {
		rep = 1
	}
	return model.TrialResult{Trial: model.Trial{ID: id, Task: "t", Agent: "a", Ratio: r, Repeat: rep, Seed: 99, Policy: p}, Outcome: o}
}

func TestExperimentRecordsTheEventStream(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	base := event.Base{Trial: "t0001", Time: t0}
	for _, ev := range []event.Event{
		event.TrialStarted{Base: base, ContainerID: "c", SampleSource: "cgroup-v1"},
		event.StepStarted{Base: base, Phase: "agent", Step: model.Step{Name: "install", Show: "pip install pandas"}},
		event.MemorySample{Base: base, Sample: event.Sample{Time: t0.Add(50 * time.Millisecond), WorkingSetBytes: 1000, UsageBytes: 1500, CacheBytes: 500}},
		event.OutputLine{Base: base, Step: "install", Stream: "stdout", Text: "Collecting pandas"},
		event.TrialEnded{Base: base, Result: result("t0001", model.OOMKilled)},
		event.SweepEnded{Base: event.Base{Time: t0}},
	} {
		if err := e.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "exp1")
	st, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("experiment dir mode %v, want owner-only", st.Mode().Perm())
	}
	rs, torn, err := ReadTrials(dir)
	if err != nil || torn || len(rs) != 1 || rs[0].Outcome != model.OOMKilled || rs[0].Seed != 99 || rs[0].Ratio != (model.Ratio{K: 1.5}) {
		t.Errorf("trials %+v torn %v err %v", rs, torn, err)
	}
	m, err := ReadManifest(dir)
	if err != nil || m.Status != "finished" || m.Finished == nil || m.Engine.SampleSource != "cgroup-v1" {
		t.Errorf("manifest %+v %v", m, err)
	}
	// The finished trial's trace was compacted and its CSV removed.
	if _, err := os.Stat(filepath.Join(dir, TrialsDir, "t0001", SamplesCompact)); err != nil {
		t.Errorf("no compacted trace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, TrialsDir, "t0001", SamplesCSV)); !os.IsNotExist(err) {
		t.Errorf("the full-resolution CSV is still there after the trial ended: %v", err)
	}
	trace, logLines, err := ReadTrace(dir, "t0001")
	if err != nil || len(trace) != 1 || trace[0].WorkingSetBytes != 1000 || trace[0].Time.UnixMilli() != t0.Add(50*time.Millisecond).UnixMilli() || len(logLines) < 2 {
		t.Errorf("trace %+v log %q err %v", trace, logLines, err)
	}
	list, err := List(root)
	if err != nil || len(list) != 1 || list[0].Manifest.ID != "exp1" {
		t.Errorf("list %+v %v", list, err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, TrialsDir, "t0001", "log.txt"))
	if !strings.Contains(string(log), "==> [agent] install: pip install pandas\nCollecting pandas\n") {
		t.Errorf("log.txt:\n%s", log)
	}
}

func TestReadTrialsSkipsATornLastLine(t *testing.T) {
	dir := t.TempDir()
	e, err := Create(dir, Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2"} {
		if err := e.Append(result(id, model.Passed)); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	path := filepath.Join(dir, "x", TrialsFile)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"t3","task":"t","out`)
	f.Close()
	rs, torn, err := ReadTrials(filepath.Join(dir, "x"))
	if err != nil || !torn || len(rs) != 2 {
		t.Errorf("got %d results torn %v err %v; want 2, torn", len(rs), torn, err)
	}
	// A bad line that is not the last is corruption, named by line.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("garbage\n"), data...), 0o600)
	if _, _, err := ReadTrials(filepath.Join(dir, "x")); err == nil || !strings.Contains(err.Error(), "trials.jsonl:1:") {
		t.Errorf("corrupt first line: %v", err)
	}
}

func TestCreateFailsClearlyOnAnUnwritableRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(file, nil, 0o600)
	_, err := Create(filepath.Join(file, "sub"), Manifest{ID: "x"})
	if err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("error %v should say to choose another --out", err)
	}
	if _, err := Create(t.TempDir(), Manifest{ID: "same"}); err != nil {
		t.Fatal(err)
	}
}

func FuzzReadTrials(f *testing.F) {
	good := `{"id":"t0001","task":"t","agent":"a","ratio":"1x","repeat":1,"seed":1,"outcome":"passed"}`
	f.Add([]byte(good + "\n" + good + "\n"))
	f.Add([]byte(good + "\n{\"id\":"))
	f.Add([]byte(`{"ratio":"0x"}` + "\n"))
	f.Add([]byte(`{"id":"t1","steps":[{"output":"a\\\"b","name":"x"},{"name":"y","output":"\"output\":\"","exit_code":1}],"reason":"\"output\":\"x"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, TrialsFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		full, torn, err := ReadTrials(dir)
		// The brief read is the full one without the steps' output.
		brief, btorn, berr := ReadTrialsBrief(dir)
		if err != nil || torn {
			return
		}
		for i := range full {
			for j := range full[i].Steps {
				full[i].Steps[j].Output = ""
			}
		}
		if berr != nil || btorn != torn || !reflect.DeepEqual(full, brief) {
			t.Fatalf("brief read %+v (torn %v, %v), full %+v", brief, btorn, berr, full)
		}
	})
}

func FuzzReadTrace(f *testing.F) {
	f.Add([]byte("unix_ms,working_set_bytes,usage_bytes,cache_bytes,cpu_cores\n1764417600050,1000,1500,500,0.250\n"))
	f.Add([]byte("unix_ms\n1,2,3\n"))
	f.Add([]byte("h\n-1,-1,-1,-1,NaN\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		tdir := filepath.Join(dir, TrialsDir, "t1")
		os.MkdirAll(tdir, 0o700)
		os.WriteFile(filepath.Join(tdir, "samples.csv"), data, 0o600)
		ReadTrace(dir, "t1")
	})
}

// One trial record appended and fsynced: the store's hot path.
func BenchmarkAppend(b *testing.B) {
	e, err := Create(b.TempDir(), Manifest{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	r := result("t0001", model.Passed)
	r.Steps = make([]model.StepResult, 3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.Append(r); err != nil {
			b.Fatal(err)
		}
	}
}

func TestResumeCutsATornLastRecord(t *testing.T) {
	dir := t.TempDir()
	e, err := Create(dir, Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Append(result("t1", model.Passed)); err != nil {
		t.Fatal(err)
	}
	e.Close()
	path := filepath.Join(dir, "x", TrialsFile)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"t2","task":"t","out`) // a crash mid-append
	f.Close()
	e, err = Open(filepath.Join(dir, "x"), Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Append(result("t2", model.Failed)); err != nil {
		t.Fatal(err)
	}
	e.Close()
	rs, torn, err := ReadTrials(filepath.Join(dir, "x"))
	if err != nil || torn || len(rs) != 2 || rs[1].ID != "t2" || rs[1].Outcome != model.Failed {
		t.Errorf("after a resume over a torn record: %d results %+v torn %v err %v; want t1 and the rerun t2, nothing torn", len(rs), rs, torn, err)
	}
}

// A record that does not fit on a full disk is taken back whole: a small
// tmpfs (needs root to mount) holds the experiment.
func TestAppendOnAFullDiskLeavesNoTornRecord(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	exp := filepath.Join(dir, "x")
	os.Mkdir(exp, 0o700)
	e, err := Open(exp, Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	big := result("t1", model.Passed)
	big.Reason = strings.Repeat("r", 8<<10)
	written := 0
	var appendErr error
	for i := 0; i < 100 && appendErr == nil; i++ {
		if appendErr = e.Append(big); appendErr == nil {
			written++
		}
	}
	if appendErr == nil || !strings.Contains(appendErr.Error(), "no space left") {
		t.Fatalf("the disk never filled: %v", appendErr)
	}
	rs, torn, err := ReadTrials(exp)
	if err != nil || torn || len(rs) != 1 {
		t.Errorf("read %d distinct results torn %v err %v; want the written ones whole, none torn", len(rs), torn, err)
	}
	lines, _, _, _ := readTrialLines(exp, false, nil)
	if len(lines) != written {
		t.Errorf("%d records read back, %d appended", len(lines), written)
	}
}

// The lines a brief read points at are the records as written, whole
// (output included), in the results' order: a trial rerun by --resume by
// its last record in the place of its first, a torn last line left out.
func TestBriefLinesCopyTheRecordsAsWritten(t *testing.T) {
	dir := t.TempDir()
	e, err := Create(dir, Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	withOut := func(id string, o model.Outcome, out string) model.TrialResult {
		r := result(id, o)
		r.Steps = []model.StepResult{{Name: "install", Output: out}}
		return r
	}
	written := []model.TrialResult{withOut("t1", model.Failed, "first\n"), withOut("t2", model.Passed, strings.Repeat("x", 2<<20)), withOut("t1", model.Passed, "rerun\n")}
	for _, r := range written {
		if err := e.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	exp := filepath.Join(dir, "x")
	f, _ := os.OpenFile(filepath.Join(exp, TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"t3","task":"t","out`)
	f.Close()

	rs, lines, torn, err := ReadTrialsBriefLines(exp, nil)
	if err != nil || !torn || len(rs) != 2 || len(lines) != 2 {
		t.Fatalf("got %d results, %d lines, torn %v, err %v; want 2, 2, torn", len(rs), len(lines), torn, err)
	}
	var got []model.TrialResult
	if err := CopyTrialLines(exp, lines, func(raw []byte) error {
		var r model.TrialResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []model.TrialResult{written[2], written[1]}
	for i := range want {
		if got[i].ID != rs[i].ID || !reflect.DeepEqual(got[i].Steps, want[i].Steps) || got[i].Outcome != want[i].Outcome {
			t.Errorf("record %d: copied %s %s (%d bytes of output), want %s %s (%d bytes)", i, got[i].ID, got[i].Outcome, len(got[i].Steps[0].Output), want[i].ID, want[i].Outcome, len(want[i].Steps[0].Output))
		}
		if rs[i].Steps[0].Output != "" {
			t.Errorf("record %d: the brief read kept the output", i)
		}
	}
}

// Seen (hostile F12): a manifest the JSON encoder refused (a NaN pass
// reward) left a lock, an empty trials/ and no manifest, which report
// and resume then called not found. A failed Create leaves nothing.
func TestCreateLeavesNoHalfMadeExperiment(t *testing.T) {
	root := t.TempDir()
	_, err := Create(root, Manifest{ID: "half", AgentSettings: &AgentSettings{PassReward: math.NaN()}})
	if err == nil {
		t.Fatal("a manifest with NaN was written")
	}
	if left, _ := os.ReadDir(root); len(left) != 0 {
		t.Errorf("a failed Create left %v under its root", left)
	}
	if _, err := Create(root, Manifest{ID: "half"}); err != nil {
		t.Errorf("the same id again: %v", err)
	}
}

// A record too large for a reader is written without its detail, its
// verdict kept, and the file stays readable: a 290 MB record line (a
// task's measure lines, before they were bounded) had made every record
// of the experiment unreadable ("a line longer than 64 MiB").
func TestAnOversizedRecordIsCutToFit(t *testing.T) {
	dir := t.TempDir()
	e, err := Create(dir, Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	big := result("t1", model.Passed)
	big.Reason = "kept"
	line := strings.Repeat("x", 1<<20)
	for i := 0; i < 40; i++ {
		big.Steps = append(big.Steps, model.StepResult{Name: fmt.Sprintf("s%d", i), Output: line})
	}
	big.Knobs = &model.KnobRecord{Measured: []model.Measure{{Name: "m", Value: 1, Unit: "s"}}}
	for _, r := range []model.TrialResult{result("t3", model.Passed), big, result("t2", model.Failed)} {
		if err := e.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	if big.Steps[0].Output != line {
		t.Error("cutting the record to fit changed the caller's steps")
	}
	rs, torn, err := ReadTrials(filepath.Join(dir, "x"))
	if err != nil || torn || len(rs) != 3 {
		t.Fatalf("read %d records (torn %v): %v; want all 3", len(rs), torn, err)
	}
	got := rs[1]
	if got.ID != "t1" || got.Outcome != model.Passed || got.Reason != "kept" || len(got.Steps) != 40 || got.Steps[0].Output != "" ||
		!strings.Contains(got.RecordCut, "left out the steps' output") || got.Knobs == nil || len(got.Knobs.Measured) != 1 {
		t.Errorf("the cut record: id %s outcome %s reason %q steps %d cut %q", got.ID, got.Outcome, got.Reason, len(got.Steps), got.RecordCut)
	}
}

func TestOneRepeatOfACellIsOneTrial(t *testing.T) {
	dir := t.TempDir()
	e, err := Create(dir, Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// t1 ended an infra-error and a resume reran it under its id; t2 is
	// the cell's second repeat.
	for _, r := range []model.TrialResult{result("t1", model.InfraError), result("t2", model.Failed), result("t1", model.Passed)} {
		if err := e.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	exp := filepath.Join(dir, "x")
	rs, _, err := ReadTrials(exp)
	if err != nil || len(rs) != 2 || rs[0].Outcome != model.Passed {
		t.Fatalf("a rerun under its id: %d records, %v; want 2, t1 passed", len(rs), err)
	}
	// A cancelled record under another id counts in no rate: left alone.
	// (Lines added with their summary rows, as a resume adds them: the
	// summary is read, as a report and resume read it.)
	path := filepath.Join(exp, TrialsFile)
	appendLine := func(r model.TrialResult) {
		t.Helper()
		e, err := Open(exp, Manifest{ID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Append(r); err != nil {
			t.Fatal(err)
		}
		e.Close()
	}
	c := result("t9", model.Cancelled)
	c.Repeat = 1
	appendLine(c)
	if rs, _, err := ReadTrials(exp); err != nil || len(rs) != 3 {
		t.Fatalf("a cancelled copy: %d records, %v; want 3", len(rs), err)
	}
	// A hand-appended copy of t1's record under a new id: the score would
	// count one trial twice.
	forged := rs[0]
	forged.ID = "t0003"
	appendLine(forged)
	for name, read := range map[string]func() error{
		"records": func() error { _, _, err := ReadTrials(exp); return err },
		"brief":   func() error { _, _, err := ReadTrialsBrief(exp); return err },
		"sealed (the report's)": func() error {
			_, _, _, err := ReadTrialsSealed(exp, CheckRecord(Manifest{ID: "x"}))
			return err
		},
		"summary (resume's)": func() error { _, _, _, err := ReadTrialsSummary(exp, nil); return err },
	} {
		err := read()
		if err == nil {
			t.Errorf("%s: a forged copy under a new id was read", name)
			continue
		}
		for _, want := range []string{path + ":5:", "trial t0003", "trial t1 (line 3)", "repeat 1", "remove"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", name, err, want)
			}
		}
	}
}

// A record whose steps alone are too many to write (thousands of traced
// commands, each shown up to 2,000 bytes: a multi-step task of 150
// steps made a 37 MB record, and its sweep stopped) is written with its
// shown commands cut and its middle steps left out, counted: the sweep
// goes on (the thirteenth attacker's 3).
func TestARecordOfTooManyStepsIsCutToFit(t *testing.T) {
	for _, c := range []struct{ n, show int }{{20000, 1000}, {150000, 125}} {
		n, show := c.n, strings.Repeat("é", c.show)
		dir := t.TempDir()
		e, err := Create(dir, Manifest{ID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		big := result("t1", model.Passed)
		for i := 0; i < n; i++ {
			big.Steps = append(big.Steps, model.StepResult{Name: fmt.Sprintf("s%d", i), Show: show})
		}
		if err := e.Append(big); err != nil {
			t.Fatalf("%d steps: append: %v; want the record cut to fit", n, err)
		}
		e.Close()
		rs, torn, err := ReadTrials(filepath.Join(dir, "x"))
		if err != nil || torn || len(rs) != 1 {
			t.Fatalf("%d steps: read %d records (torn %v): %v", n, len(rs), torn, err)
		}
		got := rs[0]
		last := got.Steps[len(got.Steps)-1]
		if got.Outcome != model.Passed || got.Steps[0].Name != "s0" || last.Name != fmt.Sprintf("s%d", n-1) || len(last.Show) > 210 || !utf8.ValidString(last.Show) ||
			len(got.Steps)+got.StepsDropped != n || !strings.Contains(got.RecordCut, "the steps' commands past 200 bytes") {
			t.Errorf("%d steps, the cut record: outcome %s, %d steps (%d dropped), last %s shown in %d bytes, cut %q", n, got.Outcome, len(got.Steps), got.StepsDropped, last.Name, len(last.Show), got.RecordCut)
		}
		if n > 100000 && (got.StepsDropped == 0 || len(got.Steps) != 2*model.RecordCutSteps) {
			t.Errorf("%d steps: %d kept, %d dropped; want the first and last %d kept", n, len(got.Steps), got.StepsDropped, model.RecordCutSteps)
		}
	}
}
