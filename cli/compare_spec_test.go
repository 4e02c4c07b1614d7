package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// Two experiments of one task whose spec changed between them (320 MiB,
// then 536 MiB after calibrate --write): compare says so, since "1x" is
// then a different limit in each. Seen before: both labelled 1x, and
// "Setups match".
func TestCompareSaysTheSpecsDiffer(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ratios := []model.Ratio{{K: 1}}
	var ids []string
	for i, mib := range []int64{320, 536} {
		task := model.Task{Name: "examples/flaky-random-size", Source: "task.toml", Format: model.FormatHarbor, Image: "img", Profile: model.ProfileHarbor,
			Resources: model.Resources{CPUs: 1, MemoryBytes: mib * model.MiB}, Agents: []model.Agent{{Name: "oracle"}}}
		m := store.Manifest{ID: "20261130-12000" + string(rune('0'+i)) + "-c0de", Created: t0, Status: "finished", Ratios: ratios, Repeats: 2, Seed: 1,
			Tasks: []store.TaskEntry{store.NewTaskEntry(task, ratios, 2)}}
		e, err := store.Create(root, m)
		if err != nil {
			t.Fatal(err)
		}
		for rep := 1; rep <= 2; rep++ {
			tr := model.TrialResult{Trial: model.Trial{ID: "t000" + string(rune('0'+rep)), Task: task.Name, Agent: "oracle", Ratio: ratios[0], Repeat: rep, Policy: model.NewPolicy(task.Resources, ratios[0], 2)},
				Start: t0, End: t0.Add(time.Second), Outcome: model.Passed, PeakWorkingSetBytes: 300 * model.MiB}
			if err := e.Append(tr); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	r := headroom(t, "compare", ids[0], ids[1], "--out", root)
	if r.code != 0 || !strings.Contains(r.stdout, "Task specs differ, so the same ratio is a different limit in A and B") ||
		!strings.Contains(r.stdout, "examples/flaky-random-size: memory A 320MiB · B 536MiB") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Two experiments whose one task failed every trial (A 2 of 2, B 4 of 4):
// compare said "0pp [-62, +29]" with "p by task 0.470" (Agresti–Caffo's
// adjusted centre moves with the cells' sizes), and its noise/real column
// had no heading.
func TestCompareIdenticalRatesAreNoDifference(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ratios := []model.Ratio{{K: 1}}
	task := model.Task{Name: "examples/always-fails", Source: "task.toml", Format: model.FormatHarbor, Image: "img", Profile: model.ProfileHarbor,
		Resources: model.Resources{CPUs: 1, MemoryBytes: 256 * model.MiB}, Agents: []model.Agent{{Name: "oracle"}}}
	var ids []string
	for i, repeats := range []int{2, 4} {
		m := store.Manifest{ID: "20261203-12000" + string(rune('0'+i)) + "-c0de", Created: t0, Status: "finished", Ratios: ratios, Repeats: repeats, Seed: 1,
			Tasks: []store.TaskEntry{store.NewTaskEntry(task, ratios, repeats)}}
		e, err := store.Create(root, m)
		if err != nil {
			t.Fatal(err)
		}
		for rep := 1; rep <= repeats; rep++ {
			tr := model.TrialResult{Trial: model.Trial{ID: "t000" + string(rune('0'+rep)), Task: task.Name, Agent: "oracle", Ratio: ratios[0], Repeat: rep, Policy: model.NewPolicy(task.Resources, ratios[0], repeats)},
				Start: t0, End: t0.Add(time.Second), Outcome: model.Failed, PeakWorkingSetBytes: 100 * model.MiB}
			if err := e.Append(tr); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	r := headroom(t, "compare", ids[0], ids[1], "--out", root)
	var header, success []string
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "ratio" && header == nil:
			header = f
		case len(f) > 1 && f[1] == model.Success:
			success = f
		}
	}
	if r.code != 0 || header == nil || success == nil {
		t.Fatalf("exit %d, no table\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(strings.Join(header, " "), "tasks verdict pooled p") {
		t.Errorf("the noise/real column has no heading: %q", header)
	}
	if got := strings.Join(success[4:8], " "); !strings.HasPrefix(got, "0pp [") || success[7] != "1.000" || success[9] != "unsure" {
		t.Errorf("both at 0%%: %q, want 0pp, an interval about 0, p by task 1.000, unsure (the interval holds differences past 3pp)", strings.Join(success, " "))
	}
}
