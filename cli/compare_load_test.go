package cli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// Two identical sweeps of a task drawing its need each run, one on a host
// at load 35 and one at 18: compare names the load as a setup difference
// that can explain the change (it called +80 pp at 1.5x "real" and named
// only the seed), and compares the drawn task's runs as rates, not pairs
// by repeat (each repeat is another draw).
func TestCompareNamesTheHostLoad(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ratios := []model.Ratio{{K: 1.5}}
	task := model.Task{Name: "examples/flaky-random-size", Source: "task.toml", Format: model.FormatHarbor, Image: "img", Profile: model.ProfileHarbor,
		Resources: model.Resources{CPUs: 1, MemoryBytes: 320 * model.MiB}, Agents: []model.Agent{{Name: "oracle"}}}
	var ids []string
	for i, load := range []float64{35, 18} {
		m := store.Manifest{ID: fmt.Sprintf("20261130-12000%d-10ad", i), Created: t0, Status: "finished", Ratios: ratios, Repeats: 4, Seed: 1,
			Tasks: []store.TaskEntry{store.NewTaskEntry(task, ratios, 2)}}
		e, err := store.Create(root, m)
		if err != nil {
			t.Fatal(err)
		}
		for rep := 1; rep <= 4; rep++ {
			tr := model.TrialResult{Trial: model.Trial{ID: fmt.Sprintf("t%04d", rep), Task: task.Name, Agent: "oracle", Ratio: ratios[0], Repeat: rep, Policy: model.NewPolicy(task.Resources, ratios[0], 2)},
				Start: t0, End: t0.Add(15 * time.Second), Outcome: model.Passed, PeakWorkingSetBytes: 300 * model.MiB,
				HostAtStart: model.HostLoad{Load1: load}, HostAtEnd: model.HostLoad{Load1: load}}
			if load > 30 {
				tr.Outcome, tr.Cause = model.Timeout, model.CauseAgentTimeout
				tr.Noise = &model.HostNoise{Contended: true, CPUWait: model.Duration(9 * time.Second), CPUWaitKnown: true, StepTime: model.Duration(15 * time.Second)}
			}
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
	for _, want := range []string{
		"host load        A load 35.0, CPU wait 60% of step time · B load 18.0: the hosts were loaded differently, which can explain a change by itself",
		"1.5x unpaired", "4/4 → 0/4 failed",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("compare lacks %q: exit %d\n%s%s", want, r.code, r.stdout, r.stderr)
		}
	}
}
