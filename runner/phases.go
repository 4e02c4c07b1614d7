package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// runPhases runs a multi-step task's phases in the trial's one container,
// as Harbor's multi-step trial does: per phase its setup, its
// healthcheck, the agent's steps of the phase under the phase's time
// limit, then the phase's verifier under its own, and its reward. A
// phase without a reward (setup or healthcheck failed, the verifier
// timed out or wrote none) or below its min_reward ends the trial; the
// trial's reward is the phases' combined by the task's strategy. The
// error is the engine's.
func (t *trialRun) runPhases(ctx context.Context, sb Sandbox, agent model.Agent, env []string, ev *model.Evidence) error {
	rule := t.task.Verdict.Reward
	netNow := t.task.BaselinePolicy()
	for _, p := range t.task.Phases {
		pr := model.PhaseResult{Name: p.Name}
		stop, err := t.preparePhase(ctx, sb, p, env)
		if err != nil || ctx.Err() != nil {
			return err
		}
		if stop == "" {
			// The agent's own network for its phase, the container's
			// (or the verifier's own) for the rest, as in Harbor.
			if netNow, err = t.setNetwork(ctx, sb, t.task.AgentNetwork, &netNow); err != nil {
				return err
			}
			actx, cancel := context.WithTimeout(ctx, p.AgentTimeout)
			_, stoppable := sb.(StepStopper)
			t.keepOnTimeout = stoppable
			for _, st := range agent.Steps {
				if st.Phase != "" && st.Phase != p.Name {
					continue
				}
				if st.User == "" && p.AgentUser != "" {
					st.User = p.AgentUser
				}
				sr, err := t.runStep(actx, sb, "agent", st, env)
				if err != nil {
					cancel()
					return fmt.Errorf("step %s: %w", st.Name, err)
				}
				if sr.TimedOut {
					// Harbor verifies the step and goes on; where the
					// sandbox cannot stop the step alone, the container
					// went with it and nothing more can run.
					pr.AgentTimedOut = true
					ev.TimedOut = !stoppable
				}
				if sr.ExitCode != 0 || sr.TimedOut || ctx.Err() != nil {
					break
				}
			}
			t.keepOnTimeout = false
			cancel()
			if ev.TimedOut || ctx.Err() != nil {
				t.res.Phases = append(t.res.Phases, pr)
				return nil
			}
			if netNow, err = t.setNetwork(ctx, sb, t.task.VerifierNetwork, &netNow); err != nil {
				return err
			}
			rewards, note, err := t.verifyPhase(ctx, sb, p, env, ev)
			if err != nil || ctx.Err() != nil {
				return err
			}
			pr.Rewards = rewards
			stop = note
			if stop == "" {
				stop = p.Gate(rewards)
			}
		}
		pr.Stopped = stop
		t.res.Phases = append(t.res.Phases, pr)
		if stop != "" || ev.TimedOut {
			break
		}
	}
	final := model.CombinePhaseRewards(t.task.PhaseReward, t.res.Phases)
	note := model.PhasesSummary(t.task.PhaseNames(), t.res.Phases)
	if n := len(t.res.Phases); n > 0 && t.res.Phases[n-1].Stopped != "" {
		note += "; " + t.res.Phases[n-1].Name + ": " + t.res.Phases[n-1].Stopped
	}
	if final == nil {
		t.verdictNote = "no step gave a reward (" + note + ")"
		return nil
	}
	r := model.ScalarReward(final)
	t.res.Reward = &r
	ev.VerifierPassed = r >= rule.Pass
	if !ev.VerifierPassed {
		t.verdictNote = fmt.Sprintf("reward %g < %g, the %s of the steps' (%s)", r, rule.Pass, t.task.PhaseReward, note)
	}
	return nil
}

// preparePhase runs a phase's setup steps and waits on its healthcheck;
// it says why the phase cannot go on ("" when it can).
func (t *trialRun) preparePhase(ctx context.Context, sb Sandbox, p model.Phase, env []string) (string, error) {
	for _, st := range p.Setup {
		sr, err := t.runStep(ctx, sb, "setup", st, env)
		if err != nil {
			return "", fmt.Errorf("step %s: %w", st.Name, err)
		}
		if sr.TimedOut || sr.ExitCode != 0 {
			return fmt.Sprintf("%s exited %d: later steps not run", st.Name, sr.ExitCode), nil
		}
	}
	if p.Healthcheck == nil {
		return "", nil
	}
	return t.phaseHealthcheck(ctx, sb, p, env)
}

// phaseHealthcheck polls a phase's healthcheck as Docker polls one:
// every interval, each try within its timeout, failures during the
// start period not counted, unhealthy after retries failures in a row.
func (t *trialRun) phaseHealthcheck(ctx context.Context, sb Sandbox, p model.Phase, env []string) (string, error) {
	hc := p.Healthcheck
	argv := hc.Test
	if len(argv) > 0 && argv[0] == "CMD" {
		argv = argv[1:]
	}
	st := model.Step{Name: p.Name + "/healthcheck", Show: argv[len(argv)-1], Argv: argv}
	start := time.Now()
	failures := 0
	for {
		hctx, cancel := context.WithTimeout(ctx, hc.Timeout)
		sr, err := t.runStep(hctx, sb, "setup", st, env)
		cancel()
		if err != nil {
			return "", fmt.Errorf("healthcheck: %w", err)
		}
		if ctx.Err() != nil {
			return "cancelled", nil
		}
		if sr.TimedOut {
			// The container was killed with the try: nothing more runs.
			return "healthcheck timed out: later steps not run", nil
		}
		if sr.ExitCode == 0 {
			return "", nil
		}
		if time.Since(start) >= hc.StartPeriod {
			failures++
		}
		if failures >= max(hc.Retries, 1) {
			return fmt.Sprintf("healthcheck failed %d time(s): later steps not run", failures), nil
		}
		select {
		case <-ctx.Done():
			return "cancelled", nil
		case <-time.After(hc.Interval):
		}
	}
}

// verifyPhase runs a phase's verifier from empty upload directories (as
// Harbor resets /tests and /logs/verifier before each step's) and reads
// its rewards; the note says why there are none.
func (t *trialRun) verifyPhase(ctx context.Context, sb Sandbox, p model.Phase, env []string, ev *model.Evidence) (map[string]float64, string, error) {
	var dirs []string
	seen := map[string]bool{}
	for _, u := range p.Verifier.Files {
		if !seen[u.To] {
			seen[u.To] = true
			dirs = append(dirs, u.To)
		}
	}
	sort.Strings(dirs)
	if len(dirs) > 0 {
		if err := t.clear(ctx, sb, dirs); errors.Is(err, ErrTaskInterfered) {
			return nil, fmt.Sprintf("clearing %v: %v: later steps not run", dirs, err), nil
		} else if err != nil {
			return nil, "", fmt.Errorf("clearing %v: %w", dirs, err)
		}
	}
	vctx, cancel := context.WithTimeout(ctx, p.VerifierTimeout)
	defer cancel()
	sr, err := t.runStep(vctx, sb, "verifier", p.Verifier, env)
	if err != nil {
		return nil, "", fmt.Errorf("verifier: %w", err)
	}
	if sr.TimedOut {
		ev.TimedOut = true
		return nil, "verifier ran past its time limit: later steps not run", nil
	}
	if ctx.Err() != nil {
		return nil, "cancelled", nil
	}
	dir := t.task.Verdict.Reward.Dir
	for _, name := range []string{"reward.txt", "reward.json"} {
		file := path.Join(dir, name)
		rctx, cancelRead := context.WithTimeout(ctx, SandboxOpTimeout)
		data, err := sb.ReadFile(rctx, file)
		cancelRead()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, ErrNotReadable) || errors.Is(err, ErrTaskInterfered) {
			return nil, fmt.Sprintf("the verifier's %s: %v: later steps not run", file, err), nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("reading the reward: %w", err)
		}
		m, err := model.ParseRewards(name, data)
		if err != nil {
			return nil, fmt.Sprintf("the verifier's %s: %v: later steps not run", file, err), nil
		}
		return m, "", nil
	}
	return nil, fmt.Sprintf("the verifier wrote no reward (%s/reward.txt or reward.json): later steps not run", dir), nil
}
