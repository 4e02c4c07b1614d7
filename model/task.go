package model

import (
	"fmt"
	"time"
)

// Resources is a task's spec: what it is guaranteed. Defaulted lists the
// fields the task file did not set and that got headroom's defaults.
type Resources struct {
	CPUs        float64  `json:"cpus"`
	MemoryBytes int64    `json:"memory_bytes"`
	PidsLimit   int64    `json:"pids_limit"`
	Defaulted   []string `json:"defaulted,omitempty"`
}

// Defaults for fields a task file leaves out (Terminal-Bench's own defaults).
const (
	DefaultCPUs            = 1.0
	DefaultMemoryBytes     = 2048 * MiB
	DefaultPidsLimit       = 1024
	DefaultAgentTimeout    = 10 * time.Minute
	DefaultVerifierTimeout = 5 * time.Minute
)

// DefaultCapabilities are what a task's container keeps unless its file
// adds more: enough for package managers to unpack and drop privileges,
// nothing that reaches the host (no NET_ADMIN, SYS_ADMIN, SYS_PTRACE...).
var DefaultCapabilities = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID"}

// Step is one command run inside the trial's container.
type Step struct {
	Name string   `json:"name"`
	Show string   `json:"show"` // the command as shown to the user
	Argv []string `json:"argv"` // what is executed
	Env  []string `json:"env,omitempty"`
	// Expected is how long the step is expected to take, when known (the
	// synthetic workload knows); used only for rough estimates.
	Expected time.Duration `json:"expected,omitempty"`
}

// Agent is one way of attempting a task: a sequence of steps.
type Agent struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Steps       []Step `json:"steps"`
}

// Task is a benchmark task: an environment, agents and a verifier.
type Task struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Source      string   `json:"source"` // file it came from, or "builtin:<file>"
	Image       string   `json:"image"`
	IdleCommand []string `json:"idle_command"` // keeps the container up between steps
	Network     string   `json:"network"`
	// User runs the container's processes ("" keeps the image's user).
	User string `json:"user,omitempty"`
	// Capabilities are the only Linux capabilities the container keeps;
	// every other one is dropped.
	Capabilities    []string      `json:"capabilities"`
	Resources       Resources     `json:"resources"`
	Agents          []Agent       `json:"agents"`
	Verifier        Step          `json:"verifier"`
	AgentTimeout    time.Duration `json:"agent_timeout"`
	VerifierTimeout time.Duration `json:"verifier_timeout"`
}

// Agent returns the named agent.
func (t *Task) Agent(name string) (Agent, bool) {
	for _, a := range t.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// AgentNames lists the task's agents in file order.
func (t *Task) AgentNames() []string {
	out := make([]string, len(t.Agents))
	for i, a := range t.Agents {
		out[i] = a.Name
	}
	return out
}

// Expected is a rough duration of one trial of the named agent: its steps
// and the verifier, where they say how long they take.
func (t *Task) Expected(agent string) time.Duration {
	a, _ := t.Agent(agent)
	d := t.Verifier.Expected
	for _, s := range a.Steps {
		d += s.Expected
	}
	return d
}

// Validate checks what the runner relies on.
func (t *Task) Validate() error {
	switch {
	case t.Name == "":
		return fmt.Errorf("task has no name: set [task] name")
	case t.Image == "":
		return fmt.Errorf("task %s has no image: set [environment] image", t.Name)
	case t.Resources.MemoryBytes <= 0:
		return fmt.Errorf("task %s: [environment] memory must be more than zero", t.Name)
	case t.Resources.CPUs <= 0:
		return fmt.Errorf("task %s: [environment] cpus must be more than zero", t.Name)
	case len(t.Agents) == 0:
		return fmt.Errorf("task %s has no agents: add an [[agents]] table with steps", t.Name)
	case len(t.Verifier.Argv) == 0:
		return fmt.Errorf("task %s has no verifier: add a [verifier] with a command", t.Name)
	}
	seen := map[string]bool{}
	for _, a := range t.Agents {
		if a.Name == "" {
			return fmt.Errorf("task %s: an agent has no name", t.Name)
		}
		if seen[a.Name] {
			return fmt.Errorf("task %s: agent %q is defined twice", t.Name, a.Name)
		}
		seen[a.Name] = true
		if len(a.Steps) == 0 {
			return fmt.Errorf("task %s: agent %s has no steps", t.Name, a.Name)
		}
		for i, s := range a.Steps {
			if len(s.Argv) == 0 {
				return fmt.Errorf("task %s: agent %s step %d has no command", t.Name, a.Name, i+1)
			}
		}
	}
	return nil
}
