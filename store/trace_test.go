package store_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/store/storegen"
)

// roundTrip is what a reader gets back of a compacted trace.
func roundTrip(t testing.TB, samples []event.Sample) []event.Sample {
	var buf bytes.Buffer
	if err := store.EncodeTrace(&buf, samples); err != nil {
		t.Fatal(err)
	}
	out, err := store.DecodeTrace(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type extremes struct{ maxWS, maxUsage, minWS, minUsage int64 }

// within is the extremes of the samples in [from, to].
func within(samples []event.Sample, from, to time.Time) (extremes, int) {
	e := extremes{minWS: 1 << 62, minUsage: 1 << 62}
	n := 0
	for _, s := range samples {
		if s.Time.Before(from) || s.Time.After(to) {
			continue
		}
		n++
		e.maxWS, e.maxUsage = max(e.maxWS, s.WorkingSetBytes), max(e.maxUsage, s.UsageBytes)
		e.minWS, e.minUsage = min(e.minWS, s.WorkingSetBytes), min(e.minUsage, s.UsageBytes)
	}
	return e, n
}

// firstOver is the first sample of a step over limit, as a what-if
// prediction places a kill.
func firstOver(samples []event.Sample, s model.StepResult, limit int64) time.Time {
	for _, x := range samples {
		if !x.Time.Before(s.Start) && !x.Time.After(s.End) && x.WorkingSetBytes > limit {
			return x.Time
		}
	}
	return time.Time{}
}

// checkCompacted asserts what a compacted trace must keep of the full one.
func checkCompacted(t *testing.T, full, got []event.Sample, r model.TrialResult, limits []int64) {
	t.Helper()
	start, end := full[0].Time, full[len(full)-1].Time
	if a, _ := within(full, start, end); true {
		if b, _ := within(got, start, end); a != b {
			t.Errorf("trial extremes %+v, full trace %+v", b, a)
		}
	}
	for _, s := range r.Steps {
		a, _ := within(full, s.Start, s.End)
		if b, _ := within(got, s.Start, s.End); a.maxWS != b.maxWS || a.maxUsage != b.maxUsage {
			t.Errorf("step %s peaks %+v, full trace %+v", s.Name, b, a)
		}
		if a.maxWS != s.PeakWorkingSetBytes {
			t.Fatalf("generator: step %s peak %d, record %d", s.Name, a.maxWS, s.PeakWorkingSetBytes)
		}
		for _, l := range limits {
			if a, b := firstOver(full, s, l), firstOver(got, s, l); !a.Equal(b) {
				t.Errorf("step %s first over %s at %v, full trace %v", s.Name, model.FormatBytes(l), b, a)
			}
		}
	}
	// Full resolution around kills and step boundaries: every sample.
	var marks []time.Time
	for _, o := range r.OOMs {
		marks = append(marks, o.At)
	}
	for _, s := range r.Steps {
		marks = append(marks, s.Start, s.End)
	}
	for _, m := range marks {
		lo, hi := m.Add(-store.TraceWindow), m.Add(store.TraceWindow)
		var a, b []event.Sample
		for _, s := range full {
			if !s.Time.Before(lo) && !s.Time.After(hi) {
				a = append(a, s)
			}
		}
		for _, s := range got {
			if !s.Time.Before(lo) && !s.Time.After(hi) {
				b = append(b, s)
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("around %v: %d samples kept of %d", m.Sub(start), len(b), len(a))
		}
	}
	// Every whole second (what a chart's column is made of) has the
	// same extremes and the same last CPU counters.
	for sec := start.Truncate(time.Second); !sec.After(end); sec = sec.Add(time.Second) {
		a, na := within(full, sec, sec.Add(time.Second-time.Millisecond))
		b, _ := within(got, sec, sec.Add(time.Second-time.Millisecond))
		if na > 0 && a != b {
			t.Fatalf("second %v: extremes %+v, full trace %+v", sec.Sub(start), b, a)
		}
	}
	if !reflect.DeepEqual(got[len(got)-1], full[len(full)-1]) || !reflect.DeepEqual(got[0], full[0]) {
		t.Errorf("first or last sample not kept")
	}
}

// Compaction keeps the peaks, kills and step boundaries of the full
// trace exactly, over a table of shapes and a spread of seeds.
func TestCompactKeepsPeaksKillsAndStepBoundaries(t *testing.T) {
	cases := []storegen.TraceSpec{
		{Duration: 30 * time.Minute, Steps: 5, PeakBytes: 900 << 20},
		{Duration: 30 * time.Minute, Steps: 5, PeakBytes: 900 << 20, LimitBytes: 700 << 20}, // killed at the limit
		{Duration: 90 * time.Second, Steps: 2, PeakBytes: 300 << 20},
		{Duration: 3 * time.Second, Steps: 1, PeakBytes: 200 << 20},                          // all window
		{Duration: 10 * time.Minute, Steps: 12, PeakBytes: 500 << 20, LimitBytes: 480 << 20}, // killed, many steps
	}
	for seed := uint64(1); seed <= 30; seed++ {
		cases = append(cases, storegen.TraceSpec{Seed: seed, Duration: time.Duration(20+seed*17) * time.Second, Steps: int(seed%6) + 1,
			PeakBytes: int64(200+seed*13) << 20, LimitBytes: int64(seed%3) * int64(250+seed*10) << 20})
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s-%dsteps-limit%d", i, c.Duration, c.Steps, c.LimitBytes>>20), func(t *testing.T) {
			tr := storegen.NewTrial(c, storegen.T0.Add(337*time.Millisecond))
			if c.LimitBytes > 0 && c.PeakBytes > c.LimitBytes+8<<20 && len(tr.Result.OOMs) == 0 {
				t.Fatalf("generator: no kill")
			}
			limits := []int64{c.LimitBytes, 250 << 20, 400 << 20}
			got := roundTrip(t, store.Compact(tr.Samples, tr.Result, limits))
			checkCompacted(t, tr.Samples, got, tr.Result, limits)
		})
	}
}

// The budget: a realistic trial-hour (steps, a ramp to a peak, noise at
// 20 Hz) is stored in at most 200 KB; a killed half-hour in less.
func TestTraceBytesPerTrialHour(t *testing.T) {
	for _, c := range []storegen.TraceSpec{
		{Seed: 7, Duration: time.Hour, Steps: 6, PeakBytes: 1200 << 20},
		{Seed: 8, Duration: 30 * time.Minute, Steps: 4, PeakBytes: 900 << 20, LimitBytes: 800 << 20},
	} {
		tr := storegen.NewTrial(c, storegen.T0)
		var csv, hrt bytes.Buffer
		w := bufio.NewWriter(&csv)
		for _, s := range tr.Samples {
			fmt.Fprintf(w, "%d,%d,%d,%d,%.3f,%d,%d\n", s.Time.UnixMilli(), s.WorkingSetBytes, s.UsageBytes, s.CacheBytes, s.CPUCores, s.CPU.Periods, s.CPU.ThrottledPeriods)
		}
		w.Flush()
		kept := store.Compact(tr.Samples, tr.Result, nil)
		if err := store.EncodeTrace(&hrt, kept); err != nil {
			t.Fatal(err)
		}
		hours := tr.Samples[len(tr.Samples)-1].Time.Sub(tr.Samples[0].Time).Hours()
		perHour := float64(hrt.Len()) / hours
		t.Logf("%v trial, %d steps, %d kills: %d samples, CSV %d B (%.0f KB/trial-hour), compacted %d samples in %d B (%.0f KB/trial-hour)",
			c.Duration, c.Steps+1, len(tr.Result.OOMs), len(tr.Samples), csv.Len(), float64(csv.Len())/hours/1000, len(kept), hrt.Len(), perHour/1000)
		if perHour > 200e3 {
			t.Errorf("%.0f KB per trial-hour, budget 200", perHour/1000)
		}
	}
}

// recordTrial feeds a trial's events to the store; end says whether it
// ended (else headroom "crashed" under it: the experiment is not closed).
func recordTrial(t *testing.T, e *store.Experiment, id string, tr storegen.Trial, end bool) {
	t.Helper()
	base := event.Base{Trial: id, Time: tr.Samples[0].Time}
	if err := e.Record(event.TrialStarted{Base: base, SampleSource: "cgroup-v1"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range tr.Samples {
		e.Record(event.MemorySample{Base: event.Base{Trial: id, Time: s.Time}, Sample: s})
	}
	if end {
		r := tr.Result
		r.Trial = model.Trial{ID: id, Task: "t", Agent: "a", Ratio: model.Uncapped, Repeat: 1}
		r.Outcome = model.Passed
		if err := e.Record(event.TrialEnded{Base: base, Result: r}); err != nil {
			t.Fatal(err)
		}
	}
}

// Written through the store's event consumer, a finished trial's trace
// reads back compacted with its peaks; one whose headroom died mid-trial
// (no end, no close) reads back at full resolution up to what reached the
// disk, a torn last line included.
func TestTraceThroughTheStoreAndACrashMidTrial(t *testing.T) {
	root := t.TempDir()
	e, err := store.Create(root, store.Manifest{ID: "x", Ratios: model.StandardRatios})
	if err != nil {
		t.Fatal(err)
	}
	done := storegen.NewTrial(storegen.TraceSpec{Seed: 3, Duration: 5 * time.Minute, Steps: 3, PeakBytes: 600 << 20}, storegen.T0)
	recordTrial(t, e, "t0001", done, true)
	e.Close() // waits for the compaction, which runs off the event stream
	dir := filepath.Join(root, "x")
	e, err = store.Open(dir, store.Manifest{ID: "x", Ratios: model.StandardRatios})
	if err != nil {
		t.Fatal(err)
	}
	running := storegen.NewTrial(storegen.TraceSpec{Seed: 4, Duration: 2 * time.Minute, Steps: 3, PeakBytes: 600 << 20}, storegen.T0)
	recordTrial(t, e, "t0002", running, false) // headroom dies here
	e.Crash()

	got, _, err := store.ReadTrace(dir, "t0001")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) >= len(done.Samples)/2 {
		t.Errorf("finished trial: %d samples of %d kept; not compacted", len(got), len(done.Samples))
	}
	checkCompacted(t, done.Samples, got, done.Result, nil)

	// What reached the disk of the running trial: a prefix of its samples.
	csvPath := filepath.Join(dir, store.TrialsDir, "t0002", store.SamplesCSV)
	data, _ := os.ReadFile(csvPath)
	partial, _, err := store.ReadTrace(dir, "t0002")
	if err != nil || len(data) == 0 {
		t.Fatalf("crashed trial: %d bytes on disk, read %d samples, err %v", len(data), len(partial), err)
	}
	if !reflect.DeepEqual(partial, running.Samples[:len(partial)]) {
		for i := range partial {
			if !reflect.DeepEqual(partial[i], running.Samples[i]) {
				t.Errorf("crashed trial: sample %d reads %+v, was written %+v", i, partial[i], running.Samples[i])
				break
			}
		}
	}
	// Cut mid-line, as a crash mid-write leaves it: the whole lines read.
	cut := bytes.LastIndexByte(data, '\n') - 7
	os.WriteFile(csvPath, data[:cut], 0o600)
	torn, _, err := store.ReadTrace(dir, "t0002")
	if err != nil || len(torn) != len(partial)-1 || !reflect.DeepEqual(torn, partial[:len(torn)]) {
		t.Errorf("torn CSV: read %d samples (want %d), err %v", len(torn), len(partial)-1, err)
	}

	// A crash mid-compaction leaves a temporary file beside the CSV: the
	// CSV is the trace. A crash after the rename leaves both: the
	// compacted one is.
	os.WriteFile(csvPath+"", data, 0o600)
	os.WriteFile(filepath.Join(dir, store.TrialsDir, "t0002", store.SamplesCompact+".tmp"), []byte("hrtrace1 half"), 0o600)
	if s, _, err := store.ReadTrace(dir, "t0002"); err != nil || !reflect.DeepEqual(s, partial) {
		t.Errorf("with a half-written compaction beside it: %d samples, err %v", len(s), err)
	}
	var buf bytes.Buffer
	store.EncodeTrace(&buf, partial[:10])
	os.WriteFile(filepath.Join(dir, store.TrialsDir, "t0002", store.SamplesCompact), buf.Bytes(), 0o600)
	if s, _, err := store.ReadTrace(dir, "t0002"); err != nil || !reflect.DeepEqual(s, partial[:10]) {
		t.Errorf("with both: %d samples, err %v; want the compacted 10", len(s), err)
	}

	// Resumed, the trial runs again: its trace starts afresh.
	e2, err := store.Open(dir, store.Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	recordTrial(t, e2, "t0002", done, true)
	e2.Close()
	if s, _, err := store.ReadTrace(dir, "t0002"); err != nil || s[0] != done.Samples[0] || len(s) == 10 {
		t.Errorf("rerun trial: %d samples, err %v; want its new trace", len(s), err)
	}
}

// Traces written by earlier versions (CSV with five or seven columns)
// read as they did.
func TestReadTraceOfAnOldExperiment(t *testing.T) {
	s, log, err := store.ReadTrace("testdata/old-experiment", "t0001")
	if err != nil || len(s) != 3 || s[2].WorkingSetBytes != 3000 || s[2].CPU.ThrottledPeriods != 2 || s[1].CPUCores != 0.5 || s[0].Time.UnixMilli() != 1764417600050 || len(log) != 2 {
		t.Errorf("seven columns: %+v log %q err %v", s, log, err)
	}
	s, _, err = store.ReadTrace("testdata/old-experiment", "t0002")
	if err != nil || len(s) != 2 || s[1].UsageBytes != 2500 || s[1].CacheBytes != 500 || s[1].CPUCores != 0.25 {
		t.Errorf("five columns: %+v err %v", s, err)
	}
	if _, _, err := store.ReadTrace("testdata/old-experiment", "t0003"); err == nil || !strings.Contains(err.Error(), "samples.csv:3:") {
		t.Errorf("a bad line mid-file: %v; want it named by line", err)
	}
}

// The compacted trace's reader never panics; what it accepts, it writes
// back identically.
func FuzzDecodeTrace(f *testing.F) {
	tr := storegen.NewTrial(storegen.TraceSpec{Seed: 1, Duration: 20 * time.Second, Steps: 2, PeakBytes: 300 << 20, LimitBytes: 250 << 20}, storegen.T0)
	var buf bytes.Buffer
	store.EncodeTrace(&buf, store.Compact(tr.Samples, tr.Result, nil))
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	buf.Reset()
	store.EncodeTrace(&buf, []event.Sample{{Time: time.UnixMilli(-5), WorkingSetBytes: -1, CPUCores: -0.001}})
	f.Add(buf.Bytes())
	f.Add([]byte("hrtrace1"))
	f.Add([]byte("unix_ms,working_set_bytes\n1,2,3,4,5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := store.DecodeTrace(data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := store.EncodeTrace(&out, s); err != nil {
			t.Fatal(err)
		}
		again, err := store.DecodeTrace(out.Bytes())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-encoded trace reads back differently: %v", err)
		}
	})
}

// Compacting a 10-minute trial's samples (pick and encode), and the bytes
// it leaves per trial-hour.
func BenchmarkCompactTrace(b *testing.B) {
	tr := storegen.NewTrial(storegen.TraceSpec{Seed: 7, Duration: 10 * time.Minute, Steps: 3, PeakBytes: 900 << 20}, storegen.T0)
	var hrt bytes.Buffer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		hrt.Reset()
		if err := store.EncodeTrace(&hrt, store.Compact(tr.Samples, tr.Result, nil)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(hrt.Len())/(10.0/60), "B/trial-hour")
}

// A finished 30-minute trial's compaction as the store runs it when the
// trial ends (off the event stream): read and parse its CSV, pick,
// encode, write, sync, rename; timed from the record to Close's wait.
func BenchmarkCompactTraceFile(b *testing.B) {
	tr := storegen.NewTrial(storegen.TraceSpec{Seed: 7, Duration: 30 * time.Minute, Steps: 5, PeakBytes: 900 << 20}, storegen.T0)
	root := b.TempDir()
	e, err := store.Create(root, store.Manifest{ID: "x", Ratios: model.StandardRatios})
	if err != nil {
		b.Fatal(err)
	}
	e.Close()
	r := tr.Result
	r.Trial = model.Trial{ID: "t0001", Task: "t", Agent: "a", Ratio: model.Uncapped, Repeat: 1}
	for b.Loop() {
		b.StopTimer()
		e, err := store.Open(filepath.Join(root, "x"), store.Manifest{ID: "x", Ratios: model.StandardRatios})
		if err != nil {
			b.Fatal(err)
		}
		base := event.Base{Trial: "t0001", Time: tr.Samples[0].Time}
		e.Record(event.TrialStarted{Base: base})
		for _, s := range tr.Samples {
			e.Record(event.MemorySample{Base: base, Sample: s})
		}
		b.StartTimer()
		if err := e.Record(event.TrialEnded{Base: base, Result: r}); err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
