package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// summaryExperiment appends records of every kind of content a summary
// keeps or leaves out (steps with output and counters, kills with trees,
// processes, noise) and a rerun, and returns the experiment's directory.
func summaryExperiment(t *testing.T) (string, Manifest) {
	t.Helper()
	root := t.TempDir()
	m := Manifest{ID: "sum", Ratios: []model.Ratio{{K: 1.5}}, Repeats: 3, Tasks: []TaskEntry{{Name: "t"}}}
	e, err := Create(root, m)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, o := range []model.Outcome{model.Passed, model.OOMKilled, model.Failed, model.Passed} {
		r := result([]string{"t1", "t2", "t3", "t1"}[i], o)
		r.Repeat = 1 + i%3
		r.Start, r.End = t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i)*time.Minute+30*time.Second)
		r.PeakWorkingSetBytes, r.KernelPeakBytes, r.KernelPeakNoCacheBytes = int64(i+1)<<20, int64(i+2)<<20, int64(i+1)<<20+4096
		r.Steps = []model.StepResult{{Name: "install", Show: "pip install x", Phase: "agent", Start: r.Start, End: r.End, PeakWorkingSetBytes: 5 << 20, KernelPeakNoCacheBytes: int64(i) << 20,
			Output: strings.Repeat("line\n", 100), CPU: &model.CPUUse{}, PipeStatus: []int{0, 1}}}
		r.Activities = []model.Activity{{PID: 7, Command: "python -c 'x'", Step: "install"}}
		r.Noise = &model.HostNoise{CPUSome: 0.25, Contended: i == 1}
		if o == model.OOMKilled {
			r.OOMs = []model.OOMEvent{{At: r.End, Step: "install", Source: "kernel", WorkingSetBytes: 9 << 20, Process: "python", PID: 7, Command: "python big.py"}}
			r.KilledInStep, r.Cause = "install", model.Cause("limit")
		}
		if err := e.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "sum"), m
}

// wantSummaries are the records read the old way, summarised.
func wantSummaries(t *testing.T, dir string) []model.TrialResult {
	t.Helper()
	rs, _, err := ReadTrialsBrief(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i] = Summarize(rs[i])
	}
	return rs
}

func TestSummaryIsTheRecordsSummarised(t *testing.T) {
	dir, _ := summaryExperiment(t)
	if _, err := readSummary(dir); err != nil {
		t.Fatalf("the summary appended beside the records is not trusted: %v", err)
	}
	got, lines, torn, err := ReadTrialsSummary(dir, nil)
	if err != nil || torn {
		t.Fatal(torn, err)
	}
	want := wantSummaries(t, dir)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary rows\n%+v\nwant the records summarised\n%+v", got, want)
	}
	// t1 by its rerun (line 4) in the place of its first; the rows'
	// places are the records'.
	if len(got) != 3 || got[0].ID != "t1" || got[0].Outcome != model.Passed || lines[0].Line != 4 {
		t.Errorf("got %d trials, first %s %s at line %d; want 3, t1 passed at line 4", len(got), got[0].ID, got[0].Outcome, lines[0].Line)
	}
	r, err := ReadRecord(dir, lines[1])
	if err != nil || r.ID != "t2" || len(r.Activities) != 1 || r.OOMs[0].Command != "python big.py" || r.Steps[0].Output != "" {
		t.Errorf("ReadRecord: %+v %v; want t2 whole but for its output", r, err)
	}
	// What the summary leaves out, and keeps.
	s := got[1]
	if s.Activities != nil || s.Steps[0].Output != "" || s.Steps[0].PipeStatus != nil || s.OOMs[0].Command != "" {
		t.Errorf("the summary kept what only the detail needs: %+v", s)
	}
	if s.Steps[0].PeakWorkingSetBytes != 5<<20 || s.KilledInStep != "install" || !s.Noise.Contended || s.KernelPeakBytes != 3<<20 || s.Policy != r.Policy {
		t.Errorf("the summary lost what the matrix needs: %+v", s)
	}
}

// Each way a summary can disagree with trials.jsonl: not trusted, the
// records are read instead (the same trials), and the next Open builds it
// again.
func TestSummaryNotTrusted(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, dir string)
	}{
		{"missing (written before there was one)", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, SummaryFile)) }},
		{"torn last row", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SummaryFile)
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-5)
		}},
		{"shorter (a crash between the record and its row)", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SummaryFile)
			b, _ := os.ReadFile(p)
			b = b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1]
			os.WriteFile(p, b, 0o600)
		}},
		{"a record appended without a row", func(t *testing.T, dir string) {
			b, _ := json.Marshal(result("t9", model.Passed))
			f, _ := os.OpenFile(filepath.Join(dir, TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(append(b, '\n'))
			f.Close()
			later := time.Now().Add(time.Minute)
			os.Chtimes(filepath.Join(dir, SummaryFile), later, later)
		}},
		{"records edited after it", func(t *testing.T, dir string) {
			p := filepath.Join(dir, TrialsFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"outcome":"failed"`), []byte(`"outcome":"passed"`), 1), 0o600)
			afterSummary(t, dir)
		}},
		{"a row that is not its record", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SummaryFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"oc":"passed"`), []byte(`"oc":"failed"`), 1), 0o600)
		}},
		{"another format", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SummaryFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(fmt.Sprintf(`{"v":%d,`, summaryVersion)), []byte(fmt.Sprintf(`{"v":%d,`, summaryVersion+1)), 1), 0o600)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, m := summaryExperiment(t)
			c.spoil(t, dir)
			if _, err := readSummary(dir); err == nil {
				t.Fatal("the spoilt summary is trusted")
			}
			want := wantSummaries(t, dir)
			got, _, _, err := ReadTrialsSummary(dir, nil)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("read %+v %v\nwant the records' %+v", got, err, want)
			}
			e, err := Open(dir, m)
			if err != nil {
				t.Fatal(err)
			}
			e.Close()
			if _, err := readSummary(dir); err != nil {
				t.Errorf("Open did not build the summary again: %v", err)
			}
			if got, _, _, _ := ReadTrialsSummary(dir, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("the rebuilt summary reads %+v\nwant %+v", got, want)
			}
		})
	}
}

// A hand-edited record is refused by the record check, naming
// trials.jsonl and its line, though the summary was written before the
// edit (it is not trusted then); a foreign row is refused the same way.
func TestSummaryCheckNamesTheLine(t *testing.T) {
	dir, m := summaryExperiment(t)
	p := filepath.Join(dir, TrialsFile)
	b, _ := os.ReadFile(p)
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"ratio":"1.5x"`), []byte(`"ratio":"9x"`), 1)
	os.WriteFile(p, bytes.Join(lines, nil), 0o600)
	afterSummary(t, dir)
	_, _, _, err := ReadTrialsSummary(dir, CheckRecord(m))
	if err == nil || !strings.Contains(err.Error(), TrialsFile+":3:") || !strings.Contains(err.Error(), "ratio 9x") {
		t.Errorf("err %v; want the edited record named at %s:3", err, TrialsFile)
	}

	dir, m = summaryExperiment(t)
	m.ID = "another"
	_, _, _, err = ReadTrialsSummary(dir, CheckRecord(m))
	if err == nil || !strings.Contains(err.Error(), TrialsFile+":1:") {
		t.Errorf("err %v; want the first foreign record named at %s:1", err, TrialsFile)
	}
}

// A crash mid-append leaves a torn record (and no row for it) or a torn
// row: Open cuts the record, builds the summary again, and the next
// append's row is trusted.
func TestSummaryAfterACrash(t *testing.T) {
	dir, m := summaryExperiment(t)
	f, _ := os.OpenFile(filepath.Join(dir, TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"t4","task":"t","out`)
	f.Close()
	s, _ := os.OpenFile(filepath.Join(dir, SummaryFile), os.O_APPEND|os.O_WRONLY, 0)
	s.WriteString(`{"l":5,"o":`)
	s.Close()
	if got, _, torn, err := ReadTrialsSummary(dir, nil); err != nil || !torn || len(got) != 3 {
		t.Errorf("read %d trials, torn %v, %v; want 3, torn", len(got), torn, err)
	}
	e, err := Open(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	r := result("t4", model.Passed)
	if err := e.Append(r); err != nil {
		t.Fatal(err)
	}
	e.Close()
	rows, err := readSummary(dir)
	if err != nil || len(rows) != 5 || rows[4].ID != "t4" || rows[4].Line != 5 {
		t.Fatalf("rows %+v %v; want 5 trusted, t4 at line 5", rows, err)
	}
	if got, _, torn, _ := ReadTrialsSummary(dir, nil); torn || !reflect.DeepEqual(got, wantSummaries(t, dir)) {
		t.Errorf("after the crash and an append: %+v", got)
	}
}

func FuzzParseSummary(f *testing.F) {
	dir := f.TempDir()
	e, err := Create(dir, Manifest{ID: "x"})
	if err != nil {
		f.Fatal(err)
	}
	e.Append(result("t1", model.Passed))
	e.Append(result("t2", model.OOMKilled))
	e.Close()
	b, _ := os.ReadFile(filepath.Join(dir, "x", SummaryFile))
	st, _ := os.Stat(filepath.Join(dir, "x", TrialsFile))
	f.Add(b, st.Size())
	f.Add([]byte(`{"v":3,"l":1,"o":0,"n":2,"id":"a"}`+"\n"), int64(3))
	f.Add([]byte(""), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		var rows []summaryRow
		_, _, _, err := parseSummary(bytes.NewReader(b), size, func(row *summaryRow) {
			r := *row
			r.Steps = append([]summaryStep(nil), row.Steps...)
			rows = append(rows, r)
		})
		if err != nil {
			return
		}
		// What it accepts is in order, ends where the records do, and
		// every row reads as a trial.
		var end int64
		for i, row := range rows {
			if row.Off < end || row.ID == "" || (i == 0) != (row.V == summaryVersion) {
				t.Fatalf("row %d accepted out of place: %+v", i, row)
			}
			end = row.Off + int64(row.Len) + 1
			if r := row.result(); r.ID != row.ID {
				t.Fatalf("row %d reads as %s", i, r.ID)
			}
		}
		if end != size {
			t.Fatalf("rows end at %d, records at %d", end, size)
		}
	})
}

// afterSummary dates the summary before trials.jsonl, as an edit
// after the last append does (the test runs faster than the clock ticks).
func afterSummary(t *testing.T, dir string) {
	// The summary made older, not the records newer: a records' time in
	// the future would outlast the summary Open rebuilds within the same
	// clock tick (file times move by the kernel's tick, ~4 ms), which
	// made this test fail one run in a few.
	st, err := os.Stat(filepath.Join(dir, TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	at := st.ModTime().Add(-time.Second)
	os.Chtimes(filepath.Join(dir, SummaryFile), at, at)
}

// A step reads back from its row as it was, times to the nanosecond and
// in their zone, whatever its text holds.
func TestSummaryStepRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 123, time.UTC)
	zone := time.FixedZone("", 3600) // as a record reads it back: no name
	for _, s := range []model.StepResult{
		{},
		{Name: "install", Phase: "agent", Start: start, End: start.Add(90 * time.Second), PeakWorkingSetBytes: 1 << 30, KernelPeakBytes: 2 << 30},
		{Name: `a "quoted" \ name, with [brackets]`, Phase: "verifier", ExitCode: -1, ExitUnknown: "the shell did not say", Start: start.In(zone), End: start.Add(time.Hour).In(zone),
			OOMKills: 2, TimedOut: true, NoSpace: true, AtLimit: model.Duration(3 * time.Second), MajorFaults: 77, CPUWait: model.Duration(time.Millisecond),
			CPU: &model.CPUUse{UsageNanos: 1, Periods: 2, ThrottledPeriods: 3, ThrottledNanos: 4}},
		{Name: "unicode ☃\u2028\x01", Start: time.Time{}, End: start},
	} {
		r := result("t1", model.Passed)
		r.Start, r.Steps = start, []model.StepResult{s}
		b, err := json.Marshal(rowOf(r, TrialLine{}))
		if err != nil {
			t.Fatal(err)
		}
		var row summaryRow
		if err := json.Unmarshal(b, &row); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		got := row.result().Steps[0]
		if !reflect.DeepEqual(got, s) {
			t.Errorf("step %+v\nread back as %+v\nfrom %s", s, got, b)
		}
	}
}

func FuzzSummaryStep(f *testing.F) {
	for _, s := range []string{`["a","agent","",0,1500,0,10,20,0,0,0,0,0]`, `["b","","",-5,"2026-12-01T10:00:00Z",1,2,3,4,7,5,6,7,8,9,10,11]`, `["\"x\\",""]`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s summaryStep
		if s.UnmarshalJSON(b) != nil {
			return
		}
		// What it accepts writes back to what reads the same.
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var again summaryStep
		if err := again.UnmarshalJSON(out); err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%s read as %+v, wrote %s, read back as %+v (%v)", b, s, out, again, err)
		}
	})
}

// What a summary row gives the console and resume is the need a report
// reads from the record: the kernel peaks without cache, trial and step,
// go through the row (they were dropped, so the console's need read the
// mark with cache while the report's did not).
func TestSummaryKeepsTheNeed(t *testing.T) {
	dir, _ := summaryExperiment(t)
	recs, _, err := ReadTrialsBrief(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, _, err := ReadTrialsSummary(dir, nil)
	if err != nil || len(rows) != len(recs) {
		t.Fatal(len(rows), err)
	}
	if _, err := readSummary(dir); err != nil {
		t.Fatalf("the summary is not trusted: %v", err)
	}
	for i := range recs {
		if got, want := model.TrialPeakBytes(rows[i]), model.TrialPeakBytes(recs[i]); got != want || rows[i].KernelPeakNoCacheBytes != recs[i].KernelPeakNoCacheBytes {
			t.Errorf("%s: need %d from the row, %d from the record", recs[i].ID, got, want)
		}
		for j := range recs[i].Steps {
			if got, want := model.StepPeakBytes(rows[i].Steps[j]), model.StepPeakBytes(recs[i].Steps[j]); got != want {
				t.Errorf("%s step %d: need %d from the row, %d from the record", recs[i].ID, j, got, want)
			}
		}
	}
}

// A live sweep's times are time.Now's (a monotonic reading, the Local
// zone) and a generated one's may mix zones; the records read back are
// UTC without either. The rows written beside them must still be the
// records' rows, or the summary is never trusted and every Load reads
// the records (seen: 4.3 s instead of 0.8 s at 26,700 trials).
func TestSummaryOfLiveTimesIsTrusted(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func() time.Time
		step  func(time.Time, time.Duration) time.Time
	}{
		{"monotonic", time.Now, func(t0 time.Time, d time.Duration) time.Time { return time.Now().Add(d) }},
		{"zones", func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) },
			func(t0 time.Time, d time.Duration) time.Time { return time.Unix(0, t0.Add(d).UnixNano()) }},
		{"offset", func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("X", 3600)) },
			func(t0 time.Time, d time.Duration) time.Time { return t0.Add(d).UTC() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			e, err := Create(root, Manifest{ID: "live", Ratios: []model.Ratio{{K: 1}}, Repeats: 1, Tasks: []TaskEntry{{Name: "t"}}})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				r := result(fmt.Sprintf("t%d", i), model.Passed)
				r.Start = c.start()
				s1, s2 := c.step(r.Start, time.Millisecond), c.step(r.Start, 3*time.Millisecond+7)
				r.Steps = []model.StepResult{{Name: "install", Phase: "agent", Start: s1, End: s2}}
				r.End = c.step(r.Start, 5*time.Millisecond)
				if err := e.Append(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := readSummary(filepath.Join(root, "live")); err != nil {
				t.Fatalf("the summary of a live sweep's records is not trusted: %v", err)
			}
		})
	}
}
