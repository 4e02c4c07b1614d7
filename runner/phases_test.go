package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// A step whose healthcheck never passes ends a multi-step trial after
// retries tries, without its agent or verifier; the trial's reward then
// comes from the steps that gave one, as Harbor's strategies say: the
// mean of those (the first step's 1: passed), or the last step's (none:
// failed).
func TestMultiStepHealthcheckStopsAndStrategies(t *testing.T) {
	for _, c := range []struct {
		strategy string
		outcome  model.Outcome
		reason   string
	}{
		{model.PhaseRewardMean, model.Passed, ""},
		{model.PhaseRewardFinal, model.Failed, "the last step run gave no reward, and the final strategy takes only its (a 1 · b no reward (stopped); b: healthcheck failed 2 time(s)"},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			task := fake.Task("ms", 64<<20, "work")
			task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
			task.PhaseReward = c.strategy
			task.Phases = []model.Phase{
				{Name: "a", Verifier: model.Step{Name: "a/verify", Argv: []string{"verify-a"}, Files: []model.Upload{{To: "/logs/verifier"}}},
					AgentTimeout: time.Minute, VerifierTimeout: time.Minute, MinReward: map[string]float64{"reward": 1}},
				{Name: "b", Verifier: model.Step{Name: "b/verify", Argv: []string{"verify-b"}},
					Healthcheck:  &model.Healthcheck{Test: []string{"CMD", "bash", "-c", "probe-b"}, Interval: time.Millisecond, Timeout: time.Minute, Retries: 2},
					AgentTimeout: time.Minute, VerifierTimeout: time.Minute},
			}
			task.Verifier = task.Phases[0].Verifier
			var mu sync.Mutex
			calls := map[string]int{}
			b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
				mu.Lock()
				calls[st.Name]++
				mu.Unlock()
				switch st.Name {
				case "verify-a":
					return fake.StepPlan{Writes: map[string]string{"/logs/verifier/reward.txt": "1"}}
				case "probe-b":
					return fake.StepPlan{ExitCode: 1}
				}
				return fake.StepPlan{}
			}}
			r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["ms@1x"]
			if r.Outcome != c.outcome || !strings.Contains(r.Reason, c.reason) {
				t.Errorf("outcome %s (%s), want %s (%q)", r.Outcome, r.Reason, c.outcome, c.reason)
			}
			if calls["probe-b"] != 2 || calls["verify-b"] != 0 || calls["work"] != 1 {
				t.Errorf("calls %v: want the healthcheck twice, the agent once (step a), no verifier of b", calls)
			}
			if len(r.Phases) != 2 || r.Phases[0].Stopped != "" || !strings.Contains(r.Phases[1].Stopped, "healthcheck failed 2 time(s)") || r.Phases[1].Rewards != nil {
				t.Errorf("phases %+v", r.Phases)
			}
		})
	}
}

// A step's healthcheck that fails every interval with two billion
// retries held its trial for ever: the whole wait is bounded as an
// image HEALTHCHECK's is (HEADROOM_IMAGE_HEALTH_WAIT), then the trial is
// an infra-error naming the check and the bound, not the engine lost.
func TestMultiStepHealthcheckWaitIsBounded(t *testing.T) {
	t.Setenv(runner.HealthWaitEnv, "300ms")
	task := fake.Task("hc", 64<<20, "work")
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	task.Phases = []model.Phase{{Name: "one", Verifier: model.Step{Name: "one/verify", Argv: []string{"verify"}},
		Healthcheck:  &model.Healthcheck{Test: []string{"CMD", "false"}, Interval: 10 * time.Millisecond, Timeout: time.Minute, Retries: 2000000000},
		AgentTimeout: time.Minute, VerifierTimeout: time.Minute}}
	task.Verifier = task.Phases[0].Verifier
	b := &fake.Backend{Script: func(_ model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "false" {
			return fake.StepPlan{ExitCode: 1}
		}
		return fake.StepPlan{}
	}}
	done := make(chan model.TrialResult, 1)
	go func() {
		done <- runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["hc@1x"]
	}()
	select {
	case r := <-done:
		if r.Outcome != model.InfraError || r.Cause == model.CauseEngineLost || !strings.Contains(r.Reason, "step one's healthcheck (false) did not pass within 300ms") {
			t.Errorf("%s/%s (%s), want an infra-error naming the healthcheck and its bound", r.Outcome, r.Cause, r.Reason)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the trial of a healthcheck that never passes is still held after 20 s (its bound 300 ms)")
	}
}

// A step's reward keys are masked in the record as every other text of
// it is: a verifier that wrote {"<secret>": 0.5} (or NaN) put a
// --pass-env secret in trials.jsonl and the JSON report (the
// thirty-fourth attacker's 1). The verdict still combines every key.
func TestMultiStepRewardKeysAreMasked(t *testing.T) {
	const secret = "Zq7xK9wP3mVt2LbR"
	task := fake.Task("ms-secret", 64<<20, "work")
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	task.PhaseReward = model.PhaseRewardMean
	task.Phases = []model.Phase{{Name: "one", Verifier: model.Step{Name: "one/verify", Argv: []string{"verify"}, PassEnv: []string{"TOKEN"}},
		AgentTimeout: time.Minute, VerifierTimeout: time.Minute}}
	task.Verifier = task.Phases[0].Verifier
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "verify" {
			return fake.StepPlan{Writes: map[string]string{"/logs/verifier/reward.json": `{"key-` + secret + `": 1, "` + secret + `": NaN, "reward": 1}`}}
		}
		return fake.StepPlan{}
	}}
	cfg := config(t, []model.Task{task})
	cfg.Secrets = map[string]string{"TOKEN": secret}
	r := runSweep(t, b, cfg, context.Background(), nil).results["ms-secret@1x"]
	if len(r.Phases) != 1 {
		t.Fatalf("phases %+v", r.Phases)
	}
	p := r.Phases[0]
	if _, ok := p.Rewards["key-[redacted TOKEN]"]; !ok || len(p.RewardsNaN) != 1 || p.RewardsNaN[0] != "[redacted TOKEN]" {
		t.Errorf("rewards %v, NaN %v: want the keys masked", p.Rewards, p.RewardsNaN)
	}
	for k := range p.Rewards {
		if strings.Contains(k, secret) {
			t.Errorf("the secret in a reward key: %q", k)
		}
	}
}

// A step's setup (workdir/setup.sh) that never ends is bounded by the
// step's agent time limit, then ends the trial's steps as a setup that
// failed does, naming it and the bound: it held its trial for ever (the
// thirty-fourth attacker's 2).
func TestMultiStepSetupIsBounded(t *testing.T) {
	task := fake.Task("setup-hang", 64<<20, "work")
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	task.Phases = []model.Phase{{Name: "one", Verifier: model.Step{Name: "one/verify", Argv: []string{"verify"}},
		Setup:        []model.Step{{Name: "one/setup.sh", Argv: []string{"setup-forever"}}},
		AgentTimeout: 300 * time.Millisecond, VerifierTimeout: time.Minute}}
	task.Verifier = task.Phases[0].Verifier
	b := &fake.Backend{Script: func(_ model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "setup-forever" {
			return fake.StepPlan{Block: true}
		}
		return fake.StepPlan{}
	}}
	done := make(chan model.TrialResult, 1)
	go func() {
		done <- runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["setup-hang@1x"]
	}()
	select {
	case r := <-done:
		if r.Outcome != model.Failed || !strings.Contains(r.Reason, "one/setup.sh ran past its time limit (300ms, the step's agent time limit): later steps not run") {
			t.Errorf("%s/%s (%s), want failed, naming the setup and its bound", r.Outcome, r.Cause, r.Reason)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the trial of a setup that never ends is still held after 20 s (its bound 300 ms)")
	}
}

// Why a step's rewards stopped the steps is masked in the record: a
// value JSON-escaped (\u0073…) came out of the decoder whole in its
// parse error, in `phases[].stopped` (the thirty-fifth attacker's 2).
func TestMultiStepStoppedIsMasked(t *testing.T) {
	const secret = "sk-ant-Zq9Wv3Lp7TyX"
	var esc strings.Builder
	for _, c := range secret {
		fmt.Fprintf(&esc, `\u%04x`, c)
	}
	task := fake.Task("ms-stopped", 64<<20, "work")
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	task.Phases = []model.Phase{{Name: "one", Verifier: model.Step{Name: "one/verify", Argv: []string{"verify"}, PassEnv: []string{"TOKEN"}},
		AgentTimeout: time.Minute, VerifierTimeout: time.Minute}}
	task.Verifier = task.Phases[0].Verifier
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "verify" {
			return fake.StepPlan{Writes: map[string]string{"/logs/verifier/reward.json": `{"quality": "` + esc.String() + `"}`}}
		}
		return fake.StepPlan{}
	}}
	cfg := config(t, []model.Task{task})
	cfg.Secrets = map[string]string{"TOKEN": secret}
	r := runSweep(t, b, cfg, context.Background(), nil).results["ms-stopped@1x"]
	if len(r.Phases) != 1 || strings.Contains(r.Phases[0].Stopped, secret) || !strings.Contains(r.Phases[0].Stopped, "[redacted TOKEN]") || strings.Contains(r.Reason, secret) {
		t.Errorf("phases %+v, reason %q: want the secret masked", r.Phases, r.Reason)
	}
}

// A step's reward keys are cut in the record (the verdict combines them
// whole): 32 steps of 32 keys of 32,000 bytes made every trial's record
// a 32 MB line (the thirty-fifth attacker's 5).
func TestMultiStepRewardKeysAreCutInTheRecord(t *testing.T) {
	task := fake.Task("ms-long", 64<<20, "work")
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	task.PhaseReward = model.PhaseRewardMean
	task.Phases = []model.Phase{{Name: "one", Verifier: model.Step{Name: "one/verify", Argv: []string{"verify"}}, AgentTimeout: time.Minute, VerifierTimeout: time.Minute}}
	task.Verifier = task.Phases[0].Verifier
	long := strings.Repeat("x", 32000)
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "verify" {
			return fake.StepPlan{Writes: map[string]string{"/logs/verifier/reward.json": `{"a` + long + `": 1, "b` + long + `": 1, "reward": 1}`}}
		}
		return fake.StepPlan{}
	}}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["ms-long@1x"]
	if len(r.Phases) != 1 || len(r.Phases[0].Rewards) != 3 || r.Outcome != model.Passed {
		t.Fatalf("%s, phases %d: want passed with three keys", r.Outcome, len(r.Phases))
	}
	for k := range r.Phases[0].Rewards {
		if len(k) > runner.MaxRecordRewardKeyBytes+len("…") {
			t.Errorf("a recorded key of %d bytes, want at most %d", len(k), runner.MaxRecordRewardKeyBytes)
		}
	}
}
