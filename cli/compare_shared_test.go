package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// compare's second table is over the task · agent rows both ran, as its
// first: A ran two tasks (one killed at 1x every time), B only the other
// (passed); A's failures at the limit were counted whole, 2/4 against B's
// 0/2, beside a 0 pp change where the shared task did not move (a new
// user's: A's 2 rows against B's 14 read 0 pp, the shared rows -25 pp).
func TestCompareRegimesOverTheRowsBothRan(t *testing.T) {
	shared, only := compareTask("examples/shared"), compareTask("examples/only-a")
	root, ids := twoExperiments(t, [][]model.Task{{shared, only}, {shared}}, func(_ int, task string) model.Outcome {
		if task == only.Name {
			return model.OOMKilled
		}
		return model.Passed
	})
	r := headroom(t, "compare", ids[0], ids[1], "--out", root)
	_, second, ok := strings.Cut(r.stdout, "Failed at the limit")
	if r.code != 0 || !ok {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, l := range strings.Split(second, "\n") {
		if strings.HasPrefix(l, "1x") && (!strings.Contains(l, "0/2") || strings.Contains(l, "2/4")) {
			t.Errorf("1x row %q: want A's failures at the limit over the shared task (0/2), not A's whole (2/4)", l)
		}
	}
}

func compareTask(name string) model.Task {
	return model.Task{Name: name, Source: "task.toml", Format: model.FormatHarbor, Image: "img", Profile: model.ProfileHarbor,
		Resources: model.Resources{CPUs: 1, MemoryBytes: 256 * model.MiB}, Agents: []model.Agent{{Name: "oracle"}}}
}

// twoExperiments writes an experiment per tasks' entry in one store, two
// repeats of each task at 1x, each trial's outcome by the experiment's
// index and the task's name; it returns the store and their ids.
func twoExperiments(t *testing.T, tasksOf [][]model.Task, outcome func(exp int, task string) model.Outcome) (string, []string) {
	t.Helper()
	root := t.TempDir()
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ratios := []model.Ratio{{K: 1}}
	var ids []string
	for i, tasks := range tasksOf {
		m := store.Manifest{ID: "20261204-12000" + string(rune('0'+i)) + "-c0de", Created: t0, Status: "finished", Ratios: ratios, Repeats: 2, Seed: 1}
		for _, task := range tasks {
			m.Tasks = append(m.Tasks, store.NewTaskEntry(task, ratios, 2))
		}
		e, err := store.Create(root, m)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, task := range tasks {
			for rep := 1; rep <= 2; rep++ {
				n++
				tr := model.TrialResult{Trial: model.Trial{ID: "t000" + string(rune('0'+n)), Task: task.Name, Agent: "oracle", Ratio: ratios[0], Repeat: rep, Policy: model.NewPolicy(task.Resources, ratios[0], 2)},
					Start: t0, End: t0.Add(time.Second), Outcome: outcome(i, task.Name), PeakWorkingSetBytes: 100 * model.MiB}
				if err := e.Append(tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	return root, ids
}

// A pass after an OOM kill is no failure at the limit: compare's table
// read 0/2 at 1x where every trial of A was killed and nothing said so
// (a new user's). A line under it counts them.
func TestCompareSaysPassesAfterAKill(t *testing.T) {
	task := compareTask("examples/killed")
	root, ids := twoExperiments(t, [][]model.Task{{task}, {task}}, func(exp int, _ string) model.Outcome {
		return []model.Outcome{model.PassedAfterOOM, model.Passed}[exp]
	})
	r := headroom(t, "compare", ids[0], ids[1], "--out", root)
	if want := "Passed after an OOM kill at the limit (a process killed, the task passed all the same: passes above, not failures): 1x A 2/2, B 0/2"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d, want %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

// Two experiments that ran no task · agent row in common pair nowhere:
// compare printed empty tables and exited 0 (a new user's and the
// twenty-ninth attacker's); it says so now, naming what each ran.
func TestCompareSaysWhenNothingPairs(t *testing.T) {
	a, b := compareTask("examples/one"), compareTask("examples/other")
	root, ids := twoExperiments(t, [][]model.Task{{a}, {b}}, func(int, string) model.Outcome { return model.Passed })
	r := headroom(t, "compare", ids[0], ids[1], "--out", root)
	if want := "ran no task · agent row in common (A: examples/one · oracle; B: examples/other · oracle): nothing to pair"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want 1 and %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}
