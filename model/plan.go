package model

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// Trial is one run of one agent on one task at one ratio.
type Trial struct {
	ID     string         `json:"id"`
	Index  int            `json:"index"`
	Task   string         `json:"task"`
	Agent  string         `json:"agent"`
	Ratio  Ratio          `json:"ratio"`
	Repeat int            `json:"repeat"` // 1-based
	Seed   uint64         `json:"seed"`
	Policy ResourcePolicy `json:"policy"`
	// Profile is the container profile the trial ran under.
	Profile string `json:"profile,omitempty"`
}

// Plan is tasks × agents × columns × repeats, in run order; a column is
// a ratio with one combination of the swept knobs' values (none when no
// knob is swept: then the columns are the ratios).
type Plan struct {
	Seed    uint64  `json:"seed"`
	Repeats int     `json:"repeats"`
	Ratios  []Ratio `json:"ratios"`
	Trials  []Trial `json:"trials"`
}

// PlanSpec says what to plan. Agents restricts each task to the named
// agents; empty means each task's default agents (every agent but its
// check agents: Task.DefaultAgentNames).
type PlanSpec struct {
	Tasks    []Task
	Agents   []string
	Ratios   []Ratio
	Repeats  int
	Seed     uint64
	HostCPUs int
	// Scale is what the ratios limit (empty: both).
	Scale Scale
	// Axes are the other knobs swept, crossed with the ratios and each
	// other: every ratio runs at every combination of their values.
	Axes []Axis
	// OnlyRepeat, when set, plans just that repeat: with the same master
	// seed it replays exactly the trials of that repeat.
	OnlyRepeat int
}

// NewPlan expands a spec into trials. Repeats run outermost so that a sweep
// stopped early is still balanced across tasks and ratios.
//
// A trial's seed depends on the master seed, task, agent and repeat but not
// on the ratio: repeat r of a task replays the same trajectory at every
// ratio, so differences between ratios are the machine's alone.
func NewPlan(s PlanSpec) (Plan, error) {
	if s.Repeats < 1 {
		return Plan{}, fmt.Errorf("repeats must be at least 1 (got %d)", s.Repeats)
	}
	if len(s.Ratios) == 0 {
		return Plan{}, fmt.Errorf("no ratios to run: give at least one, e.g. 1x")
	}
	if len(s.Tasks) == 0 {
		return Plan{}, fmt.Errorf("no tasks to run")
	}
	type pick struct {
		task  *Task
		agent string
	}
	var picks []pick
	for i := range s.Tasks {
		t := &s.Tasks[i]
		names := t.DefaultAgentNames()
		if len(s.Agents) == 0 && len(names) == 0 {
			return Plan{}, fmt.Errorf("task %s has no agent that solves it (no solution/solve.sh, and no agent named): name one (--agents, e.g. an installed agent from `headroom agents`), or --agents %s to check that its verifier fails the untouched environment", t.Name, strings.Join(t.AgentNames(), ","))
		}
		if len(s.Agents) > 0 {
			names = nil
			for _, a := range s.Agents {
				if _, ok := t.Agent(a); ok {
					names = append(names, a)
				}
			}
			if len(names) == 0 {
				return Plan{}, fmt.Errorf("task %s has none of the agents %v (it has %v)", t.Name, s.Agents, t.AgentNames())
			}
		}
		for _, a := range names {
			picks = append(picks, pick{t, a})
		}
	}
	p := Plan{Seed: s.Seed, Repeats: s.Repeats, Ratios: Columns(s.Ratios, s.Axes)}
	for _, c := range p.Ratios {
		if err := c.Knobs.Check(); err != nil {
			return Plan{}, fmt.Errorf("column %s: %w", c, err)
		}
	}
	first, last := 1, s.Repeats
	if s.OnlyRepeat > 0 {
		first, last = s.OnlyRepeat, s.OnlyRepeat
	}
	for rep := first; rep <= last; rep++ {
		for _, pk := range picks {
			seed := TrialSeed(s.Seed, pk.task.Name, pk.agent, rep)
			for _, r := range p.Ratios {
				i := len(p.Trials)
				p.Trials = append(p.Trials, Trial{
					ID:      fmt.Sprintf("t%04d", i+1),
					Index:   i,
					Task:    pk.task.Name,
					Agent:   pk.agent,
					Ratio:   r,
					Repeat:  rep,
					Seed:    seed,
					Policy:  NewScaledPolicy(pk.task.Resources, r, s.HostCPUs, s.Scale),
					Profile: pk.task.Profile,
				})
			}
		}
	}
	return p, nil
}

// Columns are the ratios crossed with the axes' values, ratio by ratio
// (a ratio that already has knobs, as a resume's columns do, keeps them).
func Columns(ratios []Ratio, axes []Axis) []Ratio {
	combos := CrossAxes(axes)
	var out []Ratio
	seen := map[Ratio]bool{}
	for _, r := range ratios {
		for _, k := range combos {
			c := r.WithKnobs(mergeKnobs(r.Knobs, k))
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// TrialSeed derives a trial's seed (FNV-1a of the parts, then splitmix64).
func TrialSeed(master uint64, task, agent string, repeat int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%d", master, task, agent, repeat)
	z := h.Sum64() + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
