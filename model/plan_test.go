package model

import (
	"strings"
	"testing"
)

func planTasks() []Task {
	mk := func(name string, agents ...string) Task {
		t := Task{Name: name, Image: "img", Resources: Resources{CPUs: 1, MemoryBytes: 64 * MiB}}
		for _, a := range agents {
			t.Agents = append(t.Agents, Agent{Name: a, Steps: []Step{{Name: "s", Argv: []string{"true"}}}})
		}
		return t
	}
	return []Task{mk("a", "heavy", "lean"), mk("b", "agent")}
}

func TestNewPlanExpandsEverything(t *testing.T) {
	p, err := NewPlan(PlanSpec{Tasks: planTasks(), Ratios: []Ratio{{K: 1}, {K: 3}, Uncapped}, Repeats: 2, Seed: 7, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Trials) != 3*3*2 { // (a·heavy, a·lean, b·agent) × 3 ratios × 2 repeats
		t.Fatalf("%d trials, want 18", len(p.Trials))
	}
	ids := map[string]bool{}
	seeds := map[string]map[uint64]bool{}
	for i, tr := range p.Trials {
		if tr.Index != i || ids[tr.ID] {
			t.Errorf("trial %d: index %d id %s", i, tr.Index, tr.ID)
		}
		ids[tr.ID] = true
		key := tr.Task + "/" + tr.Agent + "/" + tr.Ratio.String()
		if seeds[key] == nil {
			seeds[key] = map[uint64]bool{}
		}
		seeds[key][tr.Seed] = true
	}
	// Repeats differ; ratios share a repeat's seed (paired design).
	for key, s := range seeds {
		if len(s) != 2 {
			t.Errorf("%s: %d distinct seeds over 2 repeats", key, len(s))
		}
	}
	if p.Trials[0].Seed != p.Trials[1].Seed || p.Trials[0].Ratio == p.Trials[1].Ratio {
		t.Errorf("a repeat's trials at different ratios must share the seed: %+v %+v", p.Trials[0], p.Trials[1])
	}
	// The first repeat comes first in full.
	for _, tr := range p.Trials[:9] {
		if tr.Repeat != 1 {
			t.Fatalf("repeat 2 scheduled before repeat 1 finished: %+v", tr)
		}
	}
}

func TestNewPlanIsDeterministic(t *testing.T) {
	spec := PlanSpec{Tasks: planTasks(), Ratios: StandardRatios, Repeats: 3, Seed: 42}
	a, _ := NewPlan(spec)
	b, _ := NewPlan(spec)
	for i := range a.Trials {
		if a.Trials[i] != b.Trials[i] {
			t.Fatalf("trial %d differs between two plans of one spec", i)
		}
	}
	spec.Seed = 43
	c, _ := NewPlan(spec)
	if c.Trials[0].Seed == a.Trials[0].Seed {
		t.Error("a different master seed gave the same trial seed")
	}
}

func TestNewPlanAgentFilterAndErrors(t *testing.T) {
	p, err := NewPlan(PlanSpec{Tasks: planTasks()[:1], Agents: []string{"lean"}, Ratios: []Ratio{{K: 1}}, Repeats: 1})
	if err != nil || len(p.Trials) != 1 || p.Trials[0].Agent != "lean" {
		t.Fatalf("agent filter: %+v %v", p.Trials, err)
	}
	for _, spec := range []PlanSpec{
		{Tasks: planTasks(), Ratios: []Ratio{{K: 1}}, Repeats: 0},
		{Tasks: planTasks(), Repeats: 1},
		{Ratios: []Ratio{{K: 1}}, Repeats: 1},
		{Tasks: planTasks()[1:], Agents: []string{"heavy"}, Ratios: []Ratio{{K: 1}}, Repeats: 1},
	} {
		if _, err := NewPlan(spec); err == nil {
			t.Errorf("NewPlan(%+v) accepted", spec)
		}
	}
	_, err = NewPlan(PlanSpec{Tasks: planTasks()[1:], Agents: []string{"heavy"}, Ratios: []Ratio{{K: 1}}, Repeats: 1})
	if !strings.Contains(err.Error(), "it has [agent]") {
		t.Errorf("error should list the task's agents: %v", err)
	}
}

func TestOnlyRepeatReplaysTheSameSeed(t *testing.T) {
	full, _ := NewPlan(PlanSpec{Tasks: planTasks(), Ratios: []Ratio{{K: 1}}, Repeats: 4, Seed: 9})
	one, err := NewPlan(PlanSpec{Tasks: planTasks(), Ratios: []Ratio{{K: 1}}, Repeats: 1, Seed: 9, OnlyRepeat: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range one.Trials {
		found := false
		for _, f := range full.Trials {
			if f.Task == tr.Task && f.Agent == tr.Agent && f.Repeat == 3 && f.Seed == tr.Seed && tr.Repeat == 3 {
				found = true
			}
		}
		if !found {
			t.Errorf("%+v is not repeat 3 of the full plan", tr)
		}
	}
}
