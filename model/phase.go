package model

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Phase is one step of a multi-step task (Harbor's [[steps]]): in the
// trial's one container, after the phases before it, its setup, then
// the agent's steps of this phase, then its own verifier and reward.
type Phase struct {
	Name        string `json:"name"`
	Instruction string `json:"instruction,omitempty" printable:"text"`
	// Setup runs before the agent: the phase's files put in the working
	// directory and its setup script. A failing setup step ends the trial.
	Setup []Step `json:"setup,omitempty"`
	// Healthcheck, when set, must pass (polled as Docker polls) after the
	// setup and before the agent.
	Healthcheck *Healthcheck `json:"healthcheck,omitempty"`
	// AgentUser runs the agent's steps of this phase ("" keeps the
	// task's AgentUser).
	AgentUser string `json:"agent_user,omitempty"`
	// Verifier judges this phase by the reward file it writes.
	Verifier        Step          `json:"verifier"`
	AgentTimeout    time.Duration `json:"agent_timeout"`
	VerifierTimeout time.Duration `json:"verifier_timeout"`
	// MinReward, when set, ends the trial after this phase unless each
	// named reward reaches its threshold ("reward" for a plain number).
	MinReward map[string]float64 `json:"min_reward,omitempty"`
}

// How a multi-step task's trial reward comes from its phases' rewards
// (Harbor's multi_step_reward_strategy).
const (
	// PhaseRewardMean is the per-key mean over the phases that produced a
	// reward, a key a phase lacks counting 0 (Harbor's default).
	PhaseRewardMean = "mean"
	// PhaseRewardFinal is the last phase run's rewards as they are.
	PhaseRewardFinal = "final"
)

// PhaseResult is one phase of a trial as it ran: its rewards (nil when
// its verifier gave none: it did not run, timed out or wrote no reward
// file) and, when the trial stopped after it, why.
type PhaseResult struct {
	Name    string             `json:"name"`
	Rewards map[string]float64 `json:"rewards,omitempty"`
	Stopped string             `json:"stopped,omitempty"`
	// AgentTimedOut: the phase's agent ran past its time limit; its
	// processes were stopped and the phase verified all the same, as
	// Harbor's multi-step trial does.
	AgentTimedOut bool `json:"agent_timed_out,omitempty"`
}

// Reward is the phase's reward as a verdict reads it (see ScalarReward).
func (p PhaseResult) Reward() (float64, bool) {
	if p.Rewards == nil {
		return 0, false
	}
	return ScalarReward(p.Rewards), true
}

// Gate says why the trial stops after a phase with these rewards, or ""
// to go on: Harbor's min_reward, a missing reward counting -inf.
func (p Phase) Gate(rewards map[string]float64) string {
	keys := make([]string, 0, len(p.MinReward))
	for k := range p.MinReward {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := rewards[k]
		if !ok {
			return fmt.Sprintf("%s missing from the rewards, min_reward %g: later steps not run", k, p.MinReward[k])
		}
		if v < p.MinReward[k] {
			return fmt.Sprintf("%s %g below min_reward %g: later steps not run", k, v, p.MinReward[k])
		}
	}
	return ""
}

// CombinePhaseRewards is a multi-step trial's rewards from its phases',
// as Harbor computes them; nil when there are none.
func CombinePhaseRewards(strategy string, phases []PhaseResult) map[string]float64 {
	if len(phases) == 0 {
		return nil
	}
	if strategy == PhaseRewardFinal {
		return phases[len(phases)-1].Rewards
	}
	var with []map[string]float64
	for _, p := range phases {
		if p.Rewards != nil {
			with = append(with, p.Rewards)
		}
	}
	sum := map[string]float64{}
	for _, r := range with {
		for k := range r {
			sum[k] = 0
		}
	}
	if len(sum) == 0 {
		return nil
	}
	for k := range sum {
		for _, r := range with {
			sum[k] += r[k]
		}
		sum[k] /= float64(len(with))
	}
	return sum
}

// ScalarReward is the one number rewards pass or fail by: "reward" if
// present, else the smallest (every part must pass).
func ScalarReward(m map[string]float64) float64 {
	if r, ok := m["reward"]; ok {
		return r
	}
	r := math.Inf(1)
	for _, v := range m {
		r = math.Min(r, v)
	}
	return r
}

// PhasesSummary is a multi-step trial's phases in a line: "scaffold 1 ·
// implement 0 (stopped) · document not run".
func PhasesSummary(names []string, phases []PhaseResult) string {
	parts := make([]string, 0, len(names))
	for i, n := range names {
		switch {
		case i >= len(phases):
			parts = append(parts, n+" not run")
		default:
			s := n + " no reward"
			if r, ok := phases[i].Reward(); ok {
				s = fmt.Sprintf("%s %g", n, r)
			}
			if phases[i].AgentTimedOut {
				s += " (agent timed out)"
			}
			if phases[i].Stopped != "" {
				s += " (stopped)"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " · ")
}
