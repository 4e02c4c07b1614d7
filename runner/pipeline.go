package runner

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// The trial's phases, as the task's harness runs them (Harbor's
// Trial.run, terminal-bench's harness): an installed agent's setup, then
// per phase its setup and healthcheck, the agent's steps under the
// agent's deadline, the collect hooks, and the verifier under its own
// deadline, whose reward or parsed output is the verdict. An agent that
// runs past its deadline or exits non-zero is recorded, not fatal: its
// processes are stopped and the verifier judges what it left, as both
// harnesses do. A plain task is one phase; a multi-step task one per
// step, in the same container, its reward combined from theirs.

// phase is one phase of a trial's pipeline.
type phase struct {
	name        string // "" for a plain task's one phase
	setup       []model.Step
	healthcheck *model.Healthcheck
	agent       []model.Step
	agentUser   string // the agent's steps' user where a step names none
	agentTime   time.Duration
	collect     []model.Step
	separate    bool // the verifier runs in a container of its own
	verifier    model.Step
	verifyTime  time.Duration
	// clear is emptied before the verifier: a plain task's reward files
	// (a reward the agent wrote is not the verifier's), a step's upload
	// directories (Harbor resets /tests and /logs/verifier per step).
	clear []string
	// rewards: the verifier's reward file is a set of named rewards,
	// gated by the step's min_reward (a multi-step task's step).
	rewards bool
	gate    model.Phase
}

// phaseRun is what one phase did.
type phaseRun struct {
	agentTimedOut bool
	// verified: the verifier ran to its end; passed is its verdict (a
	// plain task's), rewards what it wrote (a multi-step task's step's).
	verified         bool
	verifierTimedOut bool
	passed           bool
	rewards          map[string]float64
	// stop says why the later phases do not run ("" when they do).
	stop string
}

// phases is the pipeline of a trial of agent.
func (t *trialRun) phases(agent model.Agent) []phase {
	if len(t.task.Phases) == 0 {
		p := phase{agent: agent.Steps, agentTime: t.agentTimeout(agent), collect: t.task.Collect,
			separate: t.task.SeparateVerifier != nil, verifier: t.task.Verifier, verifyTime: t.task.VerifierTimeout}
		if rule := t.task.Verdict.Reward; rule != nil {
			p.clear = rewardFiles(rule.Dir)
		}
		return []phase{p}
	}
	var out []phase
	for _, tp := range t.task.Phases {
		p := phase{name: tp.Name, setup: tp.Setup, healthcheck: tp.Healthcheck, agentUser: tp.AgentUser, agentTime: tp.AgentTimeout,
			verifier: tp.Verifier, verifyTime: tp.VerifierTimeout, rewards: true, gate: tp}
		for _, st := range agent.Steps {
			if st.Phase == "" || st.Phase == tp.Name {
				p.agent = append(p.agent, st)
			}
		}
		seen := map[string]bool{}
		for _, u := range tp.Verifier.Files {
			if !seen[u.To] {
				seen[u.To] = true
				p.clear = append(p.clear, u.To)
			}
		}
		sort.Strings(p.clear)
		out = append(out, p)
	}
	return out
}

// runPipeline runs the trial's pipeline in its sandbox and puts what it
// saw in ev: the verdict, a timeout and whose. The error is the engine's.
func (t *trialRun) runPipeline(ctx context.Context, sb Sandbox, env []string, ev *model.Evidence) error {
	agent, _ := t.task.Agent(t.trial.Agent)
	if rule := t.task.Verdict.Reward; t.task.Format == model.FormatHarbor && rule != nil {
		// Harbor mounts the verifier's directory from the container's
		// start (mode 777): the agent finds it there. headroom made it
		// only for the verifier, and an agent that wrote its notes there
		// (or listed it) failed where Harbor's passed (the fourteenth
		// attacker's 3). It goes in with the agent's first step's files,
		// in the same copy.
		var ok bool
		if agent, ok = withFirstUpload(agent, model.Upload{To: rule.Dir}); !ok {
			if err := sb.CopyIn(ctx, []model.Upload{{To: rule.Dir}}); err != nil {
				return fmt.Errorf("making %s: %w", rule.Dir, err)
			}
		}
	}
	if ready, err := t.install(ctx, sb, agent, env, ev); !ready || err != nil {
		return err
	}
	var last phaseRun
	for _, p := range t.phases(agent) {
		run, err := t.runPhase(ctx, sb, p, env)
		if run.agentTimedOut && !ev.TimedOut {
			ev.TimedOut, ev.TimedOutPhase = true, "agent"
		}
		if run.verifierTimedOut && !ev.TimedOut {
			ev.TimedOut, ev.TimedOutPhase = true, "verifier"
		}
		if p.rewards && err == nil {
			// The verdict counts every key; the record keeps a bounded
			// few (model.FoldRewards).
			t.phaseRewards.Strategy = t.task.PhaseReward
			t.phaseRewards.Add(run.rewards)
			room := min(model.MaxPhaseRewardKeys, model.MaxRecordRewardKeys-t.recordRewardKeys)
			finite, nan := model.SplitNaN(run.rewards)
			kept, folded := model.FoldRewards(finite, room)
			if over := len(kept) + len(nan) - max(room, 1); over > 0 {
				cut := min(over, len(nan))
				nan, folded = nan[:len(nan)-cut], folded+cut
			}
			t.recordRewardKeys += len(kept) + len(nan)
			kept, nan = t.maskedKeys(kept, nan)
			// Why the steps stopped is masked too: a reward file's
			// value JSON-escaped (\u0073k-…) came out of the decoder
			// whole in its parse error (the thirty-fifth attacker's 2).
			t.res.Phases = append(t.res.Phases, model.PhaseResult{Name: p.name, AgentTimedOut: run.agentTimedOut, Rewards: kept, RewardsNaN: nan, RewardsFolded: folded, Stopped: t.r.redact(run.stop)})
		}
		last = run
		if err != nil || ctx.Err() != nil || run.stop != "" {
			if err != nil || ctx.Err() != nil {
				return err
			}
			break
		}
	}
	if len(t.task.Phases) > 0 {
		ev.VerifierPassed = t.combinePhases()
		return nil
	}
	ev.VerifierPassed = last.verified && last.passed
	return nil
}

// runPhase runs one phase. The error is the engine's.
func (t *trialRun) runPhase(ctx context.Context, sb Sandbox, p phase, env []string) (phaseRun, error) {
	var run phaseRun
	if stop, err := t.preparePhase(ctx, sb, p, env); stop != "" || err != nil || ctx.Err() != nil {
		run.stop = stop
		return run, err
	}
	if len(p.agent) > 0 {
		// The agent's own network for its phase, the container's (or the
		// verifier's own) for the rest, as in Harbor.
		if err := t.network(ctx, sb, t.task.AgentNetwork); err != nil {
			return run, err
		}
		timedOut, err := t.runAgent(ctx, sb, p, env)
		run.agentTimedOut = timedOut
		if err != nil || ctx.Err() != nil {
			return run, err
		}
	}
	if t.gone != "" {
		return t.unverifiable(p, run), nil
	}
	if len(p.collect) > 0 {
		// Collect hooks run under the container's own policy, after the
		// agent's (Harbor's phase override ends with its phase).
		if err := t.network(ctx, sb, nil); err != nil {
			return run, err
		}
		if err := t.runCollect(ctx, sb, p.collect, env); err != nil || ctx.Err() != nil {
			return run, err
		}
		if t.gone != "" {
			return t.unverifiable(p, run), nil
		}
	}
	if p.separate {
		got, err := t.runSeparate(ctx, sb, env, p.clear)
		run.verified, run.verifierTimedOut = got.judged && err == nil, got.sr.TimedOut
		run.passed = got.judged && got.passed && err == nil
		if note := separateNote(t.separateUse, t.task.SeparateVerifier); note != "" && !run.passed {
			t.verdictNote = note
		}
		return run, err
	}
	if err := t.network(ctx, sb, t.task.VerifierNetwork); err != nil {
		return run, err
	}
	t.verifierLimit = p.verifyTime
	return t.verify(ctx, sb, p, run, env)
}

// unverifiable is a phase whose container went before its verifier: as
// Harbor, which runs no verifier once its environment is gone, no reward.
func (t *trialRun) unverifiable(p phase, run phaseRun) phaseRun {
	why := "the verifier did not run: " + t.gone + " (no reward, as Harbor gives none once a trial's environment is gone)"
	if !p.rewards {
		t.unverified = why
	}
	run.stop = why
	return run
}

// runAgent runs a phase's agent steps under the phase's deadline; a step
// that fails or runs past it ends the agent (its later steps would build
// on nothing) and the phase goes on to its verifier. It says whether the
// agent ran past its deadline; the error is the engine's.
func (t *trialRun) runAgent(ctx context.Context, sb Sandbox, p phase, env []string) (bool, error) {
	actx, cancel := context.WithTimeout(ctx, p.agentTime)
	defer cancel()
	started := time.Now()
	defer t.agentTime(started)
	for _, st := range p.agent {
		if st.User == "" && p.agentUser != "" {
			st.User = p.agentUser
		}
		sr, err := t.runStep(actx, sb, model.PhaseAgent, st, env)
		if sr.TimedOut && t.agentLimit == 0 {
			t.agentLimit = p.agentTime // the first timeout's, as the reason says it
		}
		if err != nil {
			return sr.TimedOut, fmt.Errorf("step %s: %w", st.Name, err)
		}
		if sr.ExitCode != 0 || sr.TimedOut || ctx.Err() != nil {
			return sr.TimedOut, nil
		}
	}
	return false, nil
}

// agentTime records what the agent's time limit left it, its steps' wall
// time, in every column: the time knob's effect read against its baseline.
func (t *trialRun) agentTime(started time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.res.Knobs == nil {
		t.res.Knobs = &model.KnobRecord{}
	}
	t.res.Knobs.Measured = append(t.res.Knobs.Measured, model.Measure{Name: "agent_time", Value: time.Since(started).Seconds(), Unit: "s", Where: "runner"})
}

// network gives the task's container a phase's policy (nil: its
// baseline), where it differs from the one in force.
func (t *trialRun) network(ctx context.Context, sb Sandbox, want *model.NetworkPolicy) error {
	p, err := t.setNetwork(ctx, sb, want, &t.netNow)
	t.netNow = p
	return err
}

// maskedKeys are a step's recorded rewards with every --pass-env secret
// masked in their keys, as in every other text of the record: a verifier
// that wrote {"<secret>": 0.5} put the secret in trials.jsonl and the
// JSON report (the thirty-fourth attacker's 1). The verdict combines
// the keys as written; only the record's are masked.
//
// Each is cut to MaxRecordRewardKeyBytes too: the keys are bounded in
// number, and 32 steps of 32 keys of 32,000 bytes made every trial's
// record a 32 MB line (the thirty-fifth attacker's 5).
func (t *trialRun) maskedKeys(kept map[string]float64, nan []string) (map[string]float64, []string) {
	key := func(k string) string { return Clip(t.r.redact(k), MaxRecordRewardKeyBytes) }
	if kept != nil {
		masked := make(map[string]float64, len(kept))
		// Keys that mask or cut to one text: the first in order keeps
		// it, the same every run (a review's: map order chose).
		for _, k := range slices.Sorted(maps.Keys(kept)) {
			if _, seen := masked[key(k)]; !seen {
				masked[key(k)] = kept[k]
			}
		}
		kept = masked
	}
	for i, k := range nan {
		nan[i] = key(k)
	}
	return kept, nan
}

// MaxRecordRewardKeyBytes is the most of a reward key a record keeps (a
// score's name; the verdict combines each key whole).
const MaxRecordRewardKeyBytes = 200

// combinePhases is a multi-step task's verdict: its phases' rewards
// combined by the task's strategy, against its pass mark.
func (t *trialRun) combinePhases() bool {
	rule := t.task.Verdict.Reward
	final := t.phaseRewards.Combined()
	note := model.PhasesSummary(t.task.PhaseNames(), t.res.Phases)
	if n := len(t.res.Phases); n > 0 && t.res.Phases[n-1].Stopped != "" {
		note += "; " + t.res.Phases[n-1].Name + ": " + t.res.Phases[n-1].Stopped
	}
	if t.phaseRewards.Over && final == nil {
		t.verdictNote = fmt.Sprintf("the steps' reward files name more than %d distinct keys in all: headroom combines at most %d (a task's rewards are a few named scores), so this trial has no reward (%s)", model.MaxRewardKeys, model.MaxRewardKeys, note)
		return false
	}
	if final == nil {
		t.verdictNote = "no step gave a reward (" + note + ")"
		for _, p := range t.res.Phases {
			if p.Rewards != nil {
				// Only the last step's counts under the final strategy.
				t.verdictNote = fmt.Sprintf("the last step run gave no reward, and the %s strategy takes only its (%s)", t.task.PhaseReward, note)
				break
			}
		}
		return false
	}
	if len(final) == 0 {
		// The final strategy's last step wrote {}: Harbor's trial then
		// has rewards with no key, no reward to pass by.
		t.verdictNote = fmt.Sprintf("the last step run gave rewards with no key ({}), and the %s strategy takes only its (%s)", t.task.PhaseReward, note)
		return false
	}
	r := model.ScalarReward(final)
	if math.IsNaN(r) {
		t.verdictNote = fmt.Sprintf("reward NaN, the %s of the steps' (%s): it passes no threshold, in Harbor either", t.task.PhaseReward, note)
		return false
	}
	t.res.Reward = &r
	if r >= rule.Pass {
		return true
	}
	t.verdictNote = fmt.Sprintf("reward %g < %g, the %s of the steps' (%s)", r, rule.Pass, t.task.PhaseReward, note)
	return false
}

// withFirstUpload is agent with u copied in before its first step (its
// install's, else its own): copies of the steps changed, the task's left
// as they are. ok is false when it has no step.
func withFirstUpload(agent model.Agent, u model.Upload) (model.Agent, bool) {
	steps := &agent.Install
	if len(*steps) == 0 {
		steps = &agent.Steps
	}
	if len(*steps) == 0 {
		return agent, false
	}
	*steps = slices.Clone(*steps)
	first := &(*steps)[0]
	first.Files = append([]model.Upload{u}, first.Files...)
	return agent, true
}
