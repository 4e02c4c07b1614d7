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
	// RewardsFolded counts the keys of the step's reward file its record
	// does not keep (FoldRewards): the verdict counted every one.
	RewardsFolded int `json:"rewards_folded,omitempty"`
	// RewardsNaN names the keys whose reward was NaN (a record's JSON
	// cannot hold one): Harbor's gate lets a NaN through and its mean
	// or final reward is then NaN.
	RewardsNaN []string `json:"rewards_nan,omitempty"`
	Stopped    string   `json:"stopped,omitempty"`
	// AgentTimedOut: the phase's agent ran past its time limit; its
	// processes were stopped and the phase verified all the same, as
	// Harbor's multi-step trial does.
	AgentTimedOut bool `json:"agent_timed_out,omitempty"`
}

// Reward is the phase's reward as a verdict reads it (see ScalarReward).
func (p PhaseResult) Reward() (float64, bool) {
	if p.Rewards == nil && len(p.RewardsNaN) == 0 {
		return 0, false
	}
	m := make(map[string]float64, len(p.Rewards)+len(p.RewardsNaN))
	for k, v := range p.Rewards {
		m[k] = v
	}
	for _, k := range p.RewardsNaN {
		m[k] = math.NaN()
	}
	if len(m) == 0 {
		return 0, false // Harbor's {}: no key to read a reward by
	}
	return ScalarReward(m), true
}

// SplitNaN is m without its NaN values, and their keys in order: what a
// record keeps of a step's rewards (ParseStepRewards).
func SplitNaN(m map[string]float64) (map[string]float64, []string) {
	var nan []string
	for k, v := range m {
		if math.IsNaN(v) {
			nan = append(nan, k)
		}
	}
	if len(nan) == 0 {
		return m, nil
	}
	sort.Strings(nan)
	out := make(map[string]float64, len(m)-len(nan))
	for k, v := range m {
		if !math.IsNaN(v) {
			out[k] = v
		}
	}
	return out, nan
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

// A multi-step trial's rewards are bounded where they are kept: a step's
// reward.json of 60,000 keys, in each of 30 steps, made a record line of
// 25 MB (the record is bounded at 2 MiB) and a headroom of 650 MB.
const (
	// MaxPhaseRewardKeys is the most keys a step's record keeps of its
	// rewards, and MaxRecordRewardKeys the most a trial's record keeps
	// over all its steps (past it, a step keeps the key its reward is
	// read by); the rest are counted (RewardsFolded).
	MaxPhaseRewardKeys  = 32
	MaxRecordRewardKeys = 1024
	// MaxRewardKeys is the most distinct keys a trial's steps' rewards
	// may name in all: combined (the mean per key) they are held key by
	// key while the trial runs. Past it the trial has no reward, and its
	// reason says why.
	MaxRewardKeys = 100_000
)

// FoldRewards keeps at most max (at least 1) of a step's rewards for its
// record: the key its reward is read by first ("reward", else the
// smallest: ScalarReward of what is kept is the whole map's), then the
// others by name; folded counts those left out.
func FoldRewards(m map[string]float64, max int) (kept map[string]float64, folded int) {
	if m == nil || len(m) <= max {
		return m, 0
	}
	max = maxInt(max, 1)
	first, ok := "reward", false
	if _, ok = m["reward"]; !ok {
		low := math.Inf(1)
		for k, v := range m {
			if v < low || (v == low && (!ok || k < first)) {
				first, low, ok = k, v, true
			}
		}
	}
	kept = map[string]float64{first: m[first]}
	names := make([]string, 0, len(m))
	for k := range m {
		if k != first {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		if len(kept) >= max {
			break
		}
		kept[k] = m[k]
	}
	return kept, len(m) - len(kept)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// PhaseRewards combines a multi-step trial's rewards as its phases give
// them, as CombinePhaseRewards does over them all, holding a sum per key
// rather than every phase's rewards.
type PhaseRewards struct {
	Strategy string
	sums     map[string]float64
	n        int
	last     map[string]float64
	phases   int
	// Over says the phases' rewards named more than MaxRewardKeys
	// distinct keys: they are not combined.
	Over bool
}

// Add takes the next phase's rewards (nil: it gave none).
func (c *PhaseRewards) Add(r map[string]float64) {
	c.phases++
	c.last = r
	if r == nil || c.Over {
		return
	}
	if c.sums == nil {
		c.sums = map[string]float64{}
	}
	c.n++
	for k, v := range r {
		c.sums[k] += v
		if len(c.sums) > MaxRewardKeys {
			c.Over, c.sums = true, nil
			return
		}
	}
}

// Combined is the trial's rewards (CombinePhaseRewards); nil when there
// are none, or they were Over.
func (c *PhaseRewards) Combined() map[string]float64 {
	if c.phases == 0 {
		return nil
	}
	if c.Strategy == PhaseRewardFinal {
		return c.last
	}
	if c.Over || len(c.sums) == 0 {
		return nil
	}
	out := make(map[string]float64, len(c.sums))
	for k, v := range c.sums {
		out[k] = v / float64(c.n)
	}
	return out
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
