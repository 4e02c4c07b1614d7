package model

import (
	"fmt"
	"math"
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

// A step's reward file read as Harbor's multi-step trial reads it: {} is
// rewards with no key, a NaN is a NaN (which no min_reward stops); a
// single-step reward file refuses both, as before.
func TestStepRewardsAsHarborsMultiStepTrial(t *testing.T) {
	gate := Phase{MinReward: map[string]float64{"reward": 1}}
	for _, c := range []struct {
		file, data string
		keys       int
		nan        []string
		stops      bool
	}{
		{"reward.json", `{}`, 0, nil, true},
		{"reward.json", `{"reward": NaN}`, 1, []string{"reward"}, false},
		{"reward.json", `{"reward": "nan", "x": 1}`, 2, []string{"reward"}, false},
		{"reward.txt", "nan\n", 1, []string{"reward"}, false},
		{"reward.txt", "-NaN", 1, []string{"reward"}, false},
		{"reward.json", `{"reward": 0.5}`, 1, nil, true},
	} {
		m, err := ParseStepRewards(c.file, []byte(c.data))
		if err != nil || m == nil || len(m) != c.keys {
			t.Errorf("%s %q: %v, %v; want %d keys", c.file, c.data, m, err, c.keys)
			continue
		}
		if _, nan := SplitNaN(m); fmt.Sprint(nan) != fmt.Sprint(c.nan) {
			t.Errorf("%s %q: NaN keys %v, want %v", c.file, c.data, nan, c.nan)
		}
		if stops := gate.Gate(m) != ""; stops != c.stops {
			t.Errorf("%s %q: min_reward 1 stops %v, want %v (Harbor: actual < threshold, a missing key -inf)", c.file, c.data, stops, c.stops)
		}
		if _, err := ParseRewards(c.file, []byte(c.data)); err == nil && c.keys != 1 || err == nil && len(c.nan) > 0 {
			t.Errorf("%s %q: ParseRewards took it; a single-step reward file refuses {} and NaN", c.file, c.data)
		}
	}
	for _, bad := range []string{`{"reward": null}`, `[]`, `NaNa`} {
		if _, err := ParseStepRewards("reward.json", []byte(bad)); err == nil {
			t.Errorf("%q taken as a step's rewards; Harbor's verifier raises on it", bad)
		}
	}
	// The mean counts a {} step in its denominator, Harbor's
	// _aggregate_step_rewards; a NaN makes it NaN.
	var c PhaseRewards
	c.Add(map[string]float64{})
	c.Add(map[string]float64{"reward": 1})
	if got := c.Combined()["reward"]; got != 0.5 {
		t.Errorf("mean of {} and 1: %v, want 0.5", got)
	}
	c.Add(map[string]float64{"reward": math.NaN()})
	if got := c.Combined()["reward"]; !math.IsNaN(got) {
		t.Errorf("mean with a NaN step: %v, want NaN", got)
	}
	if r, ok := (PhaseResult{RewardsNaN: []string{"reward"}}).Reward(); !ok || !math.IsNaN(r) {
		t.Errorf("a recorded NaN step's reward: %v %v, want NaN", r, ok)
	}
	if _, ok := (PhaseResult{Rewards: map[string]float64{}}).Reward(); ok {
		t.Error("a {} step has a reward; it has no key to read one by")
	}
}
