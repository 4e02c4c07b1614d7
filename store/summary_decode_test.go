package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// richRows are rows of every member a row can have, as headroom writes
// them: the plain rows of a sweep, and one with each rare member set,
// odd text and a knob's column.
func richRows(t testing.TB) [][]byte {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	plain := result("t1", model.Passed)
	plain.Start, plain.End = t0, t0.Add(10*time.Minute)
	plain.Steps = []model.StepResult{{Name: "install", Phase: "agent", Start: t0.Add(25 * time.Millisecond), End: t0.Add(time.Minute), PeakWorkingSetBytes: 5 << 20, KernelPeakBytes: 6 << 20,
		CPU: &model.CPUUse{Periods: 3, ThrottledPeriods: 1}}, {Name: "verify", Phase: "verifier", Start: t0.Add(time.Minute), End: t0.Add(2 * time.Minute)}}

	rich := plain
	rich.ID, rich.Index, rich.Repeat, rich.Seed = "t0042", 41, 3, 1<<63+5
	rich.Agent, rich.Profile, rich.Experiment = "terminus-2", "harbor", "20261201-x"
	col, err := model.ParseColumn("1.5x latency=200ms")
	if err != nil {
		t.Fatal(err)
	}
	rich.Ratio = col
	rich.Policy = model.ResourcePolicy{Ratio: col, GuaranteeBytes: 1 << 30, HardLimitBytes: 3 << 29, SpecLimitBytes: 1 << 29, GuaranteeCPUs: 0.5, LimitCPUs: 1.25, CPULimitCapped: true, PidsLimit: 4096, Scale: "memory"}
	rich.Outcome, rich.Cause, rich.Reason, rich.TaskNotRun = model.OOMKilled, model.Cause("limit"), `killed "python3" at 1.5x — ☃ \ tab	here`, true
	rich.PeakWorkingSetBytes, rich.KernelPeakBytes, rich.KernelPeakNoCacheBytes, rich.StateOOMKilled = 1<<31, 1<<32, 1<<31+7, true
	rich.KilledInStep, rich.SampleSource, rich.Verdict = "solve-1", "cgroup-v2", "reward-file"
	rich.Steps = append(rich.Steps, model.StepResult{Name: "solve-1 ☃ [\"x\"]", Phase: "agent", ExitCode: -1, ExitUnknown: "the shell did not say", Start: t0.Add(time.Hour).In(time.FixedZone("", 3600)),
		OOMKills: 2, TimedOut: true, NoSpace: true, AtLimit: model.Duration(time.Second), MajorFaults: 9, CPUWait: model.Duration(time.Millisecond), KernelPeakNoCacheBytes: 77})
	rich.OOMs = []model.OOMEvent{{At: t0.Add(time.Minute), Step: "solve-1", Source: "kernel", WorkingSetBytes: 9 << 20, Process: "python3", PID: 7}}
	rich.Noise = &model.HostNoise{PSI: true, CPUSome: 0.25, Contended: true}
	rich.Stall = &model.StallEvidence{Step: "solve-1", LimitBytes: 1 << 30, Duration: model.Duration(time.Minute), MajorFaults: 12}
	reward := 0.75
	rich.Reward = &reward
	rich.Tests = &model.TestTally{Passed: 3, Failed: 1, Failing: []string{"test_x"}}
	rich.CPU = &model.CPUUse{UsageNanos: 5, Periods: 6}
	rich.Knobs = &model.KnobRecord{Applied: []string{"network: tc"}}
	rich.Imported = &model.Imported{Harness: "harbor", Job: "jobs/1", Trial: "x__1"}
	rich.Replay = &model.ReplayRecord{Source: "harbor jobs/1/x__1", Actions: 52, Ran: 14, RecordedOutcome: "passed", Similarity: []float64{1, -1},
		Divergence: &model.Divergence{Action: 14, Command: "pip install torch", Kind: model.DivergedOOM, Detail: "OOM-killed"}}

	uncapped := plain
	uncapped.ID, uncapped.Ratio, uncapped.Policy.Ratio = "t9", model.Uncapped, model.Uncapped

	var out [][]byte
	for i, r := range []model.TrialResult{plain, rich, uncapped} {
		row := rowOf(r, TrialLine{Line: i + 1, Off: int64(100 * i), Len: 99})
		if i == 0 {
			row.V = summaryVersion
		}
		b, err := json.Marshal(row)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sealRow(b, uint32(i))) // as Append writes it
	}
	return out
}

// Every row headroom writes is read by the decoder, not handed to
// encoding/json, and reads as encoding/json reads it.
func TestSummaryRowDecodes(t *testing.T) {
	d := newRowDecoder()
	var row summaryRow
	for _, b := range richRows(t) {
		var want summaryRow
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !d.decode(b, &row) {
			t.Fatalf("the decoder gave up on a row headroom writes:\n%s", b)
		}
		if !reflect.DeepEqual(row, want) {
			t.Errorf("row %s\nread as  %+v\nwant (encoding/json) %+v", b, row, want)
		}
	}
}

// What the decoder cannot read as encoding/json would, it gives up on.
func TestSummaryRowGivesUp(t *testing.T) {
	for _, b := range []string{
		`{"l":1,"l":2}`,              // a key twice
		`{"L":1}`,                    // encoding/json matches keys in any case
		`{"id":null}`,                // null keeps the field as it was
		`{"l":1.0}`,                  // not an integer
		`{"l":01}`,                   // not JSON
		`{"sd":-1}`,                  // not unsigned
		`{"p":{"ratio":"1x","x":1}}`, // an unknown key
		`{"st":[["a","b","",0,0,0,0,0,0,0,0,0,00]]}`, // not JSON
		`{"r":"1\u0078"}`,            // an escape
		`{"l":1}x`,                   // trailing bytes
		`{"l":99999999999999999999}`, // overflows
		`{"s":"2026-12-01T10:00:00Z","e":"yesterday"}`,
		`{"oom":[{"at":"x"}]}`,
	} {
		var row summaryRow
		if newRowDecoder().decode([]byte(b), &row) {
			t.Errorf("%s: read as %+v; want given up on", b, row)
		}
	}
}

// FuzzSummaryRow: what the decoder reads, encoding/json reads the same;
// what encoding/json refuses, the decoder does not read.
func FuzzSummaryRow(f *testing.F) {
	for _, b := range richRows(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"v":3,"l":1,"o":0,"n":2,"id":"a","st":[]}`))
	f.Add([]byte(`{"p":{},"st":[["a","b","",0,"",0,0,0,0,0,0,0,0]],"oom":null}`))
	f.Add([]byte(`{"why":"\ud800","t":"\u00e9"}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got summaryRow
		if !newRowDecoder().decode(b, &got) {
			return
		}
		var want summaryRow
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("%q: read, but encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q\nread as %+v\nencoding/json reads %+v", b, got, want)
		}
		if strings.TrimSpace(string(b)) == "" {
			t.Fatalf("%q: nothing read as a row", b)
		}
	})
}
