package model

import (
	"fmt"
	"testing"
)

// A multi-step trial's reward from its steps', as Harbor's multi-step
// trial computes it.
func TestCombinePhaseRewards(t *testing.T) {
	r := func(kv ...any) map[string]float64 {
		m := map[string]float64{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(float64)
		}
		return m
	}
	tests := []struct {
		name     string
		strategy string
		phases   []PhaseResult
		want     string
	}{
		{"no phases", PhaseRewardMean, nil, "map[]"},
		{"mean of two", PhaseRewardMean, []PhaseResult{{Rewards: r("reward", 1.0)}, {Rewards: r("reward", 0.0)}}, "map[reward:0.5]"},
		{"mean leaves out a phase without a reward", PhaseRewardMean, []PhaseResult{{Rewards: r("reward", 1.0)}, {}}, "map[reward:1]"},
		{"mean counts a missing key as 0", PhaseRewardMean, []PhaseResult{{Rewards: r("a", 1.0, "b", 1.0)}, {Rewards: r("a", 1.0)}}, "map[a:1 b:0.5]"},
		{"mean of none with rewards", PhaseRewardMean, []PhaseResult{{}, {}}, "map[]"},
		{"final is the last run", PhaseRewardFinal, []PhaseResult{{Rewards: r("reward", 1.0)}, {Rewards: r("reward", 0.25)}}, "map[reward:0.25]"},
		{"final without a reward has none", PhaseRewardFinal, []PhaseResult{{Rewards: r("reward", 1.0)}, {}}, "map[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprint(CombinePhaseRewards(tt.strategy, tt.phases)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// min_reward stops the trial when a gated reward is below its threshold
// or missing (Harbor: -inf).
func TestPhaseGate(t *testing.T) {
	p := Phase{MinReward: map[string]float64{"reward": 0.5, "style": 1}}
	tests := []struct {
		rewards map[string]float64
		want    string
	}{
		{map[string]float64{"reward": 0.5, "style": 1}, ""},
		{map[string]float64{"reward": 0.4, "style": 1}, "reward 0.4 below min_reward 0.5: later steps not run"},
		{map[string]float64{"reward": 1}, "style missing from the rewards, min_reward 1: later steps not run"},
		{nil, "reward missing from the rewards, min_reward 0.5: later steps not run"},
	}
	for _, tt := range tests {
		if got := p.Gate(tt.rewards); got != tt.want {
			t.Errorf("Gate(%v) = %q, want %q", tt.rewards, got, tt.want)
		}
	}
	if got := (Phase{}).Gate(nil); got != "" {
		t.Errorf("no min_reward gates: %q", got)
	}
}

func TestPhasesSummary(t *testing.T) {
	got := PhasesSummary([]string{"a", "b", "c"}, []PhaseResult{{Rewards: map[string]float64{"reward": 1}}, {Rewards: map[string]float64{"reward": 0}, Stopped: "x"}})
	if want := "a 1 · b 0 (stopped) · c not run"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
