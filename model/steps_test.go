package model

import (
	"slices"
	"testing"
)

func stepNames(steps []Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Name
	}
	return out
}

// StepsOf is the one list of a task's steps that the loader's checks and
// the runner's shown commands both walk: a step left out of it is a step
// one of them never sees.
func TestStepsOfListsEveryStep(t *testing.T) {
	task := Task{
		Verifier: Step{Name: "verify"},
		Agents: []Agent{
			{Name: "a", Install: []Step{{Name: "a-install"}}, Steps: []Step{{Name: "a-1"}, {Name: "a-2"}}},
			{Name: "b", Steps: []Step{{Name: "b-1"}}},
		},
		Phases: []Phase{
			{Name: "p1", Setup: []Step{{Name: "p1-setup"}}, Verifier: Step{Name: "p1-verify"}},
			{Name: "p2", Verifier: Step{Name: "p2-verify"}},
		},
	}
	for _, c := range []struct {
		agents []Agent
		want   []string
	}{
		{nil, []string{"a-install", "a-1", "a-2", "b-1", "verify", "p1-setup", "p1-verify", "p2-verify"}},
		{task.Agents[1:], []string{"b-1", "verify", "p1-setup", "p1-verify", "p2-verify"}},
		{[]Agent{{}}, []string{"verify", "p1-setup", "p1-verify", "p2-verify"}},
	} {
		if got := stepNames(task.StepsOf(c.agents...)); !slices.Equal(got, c.want) {
			t.Errorf("StepsOf(%d agents) = %q, want %q", len(c.agents), got, c.want)
		}
	}
}
