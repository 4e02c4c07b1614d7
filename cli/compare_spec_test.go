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
