package model

import (
	"slices"
	"strings"
	"testing"
)

// A sweep that names no agent runs each task's solving agents, not its
// check agents (a task directory's nop): nop beside oracle halved every
// pooled rate (a new user's). A task with only check agents is refused,
// saying how to name one: its nop ran unasked, and its failures read as
// the task's score (the twelfth attacker's 8).
func TestPlanLeavesCheckAgentsToBeNamed(t *testing.T) {
	both := Task{Name: "a", Agents: []Agent{{Name: "oracle"}, {Name: "nop", Check: true}}}
	only := Task{Name: "b", Agents: []Agent{{Name: "nop", Check: true}}}
	agentsOf := func(p Plan) map[string][]string {
		m := map[string][]string{}
		for _, tr := range p.Trials {
			if !slices.Contains(m[tr.Task], tr.Agent) {
				m[tr.Task] = append(m[tr.Task], tr.Agent)
			}
		}
		return m
	}
	p, err := NewPlan(PlanSpec{Tasks: []Task{both}, Ratios: []Ratio{{K: 1}}, Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := agentsOf(p); !slices.Equal(got["a"], []string{"oracle"}) {
		t.Errorf("default agents %v; want a: oracle", got)
	}
	if _, err := NewPlan(PlanSpec{Tasks: []Task{both, only}, Ratios: []Ratio{{K: 1}}, Repeats: 1}); err == nil || !strings.Contains(err.Error(), "task b has no agent that solves it") || !strings.Contains(err.Error(), "--agents nop") {
		t.Errorf("a task with only nop, no agent named: %v; want it refused, naming the task and --agents nop", err)
	}
	p, err = NewPlan(PlanSpec{Tasks: []Task{only}, Agents: []string{"nop"}, Ratios: []Ratio{{K: 1}}, Repeats: 1})
	if err != nil || !slices.Equal(agentsOf(p)["b"], []string{"nop"}) {
		t.Errorf("nop named: %v %v; want it run", agentsOf(p), err)
	}
	p, err = NewPlan(PlanSpec{Tasks: []Task{both}, Agents: []string{"oracle", "nop"}, Ratios: []Ratio{{K: 1}}, Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := agentsOf(p); !slices.Equal(got["a"], []string{"oracle", "nop"}) {
		t.Errorf("named agents %v; want oracle and nop", got)
	}
}
