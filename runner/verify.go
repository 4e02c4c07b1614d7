package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/verdict"
)

// verify runs a phase's verifier in the trial's container, from empty
// reward files (or upload directories), under its own deadline, and
// judges it as the task's harness does: by its reward file, its output's
// parser, or its exit. A Harbor task's verifier that runs past its
// deadline is run once more, as Harbor retries a VerifierTimeoutError.
// The error is the engine's.
func (t *trialRun) verify(ctx context.Context, sb Sandbox, p phase, run phaseRun, env []string) (phaseRun, error) {
	tries := 1
	if t.task.Format == model.FormatHarbor {
		tries = 2
	}
	for try := 1; ; try++ {
		if err := t.restoreDirs(ctx, sb, p.verifier); err != nil {
			return run, err
		}
		// Cleared before the first attempt only: Harbor's retry runs in
		// the same /logs/verifier, where the first attempt's reward
		// stays (a test.sh that wrote its reward, then timed out, and
		// wrote none the second time, passes under Harbor; it failed
		// here, "wrote no reward").
		if len(p.clear) > 0 && try == 1 {
			err := t.clear(ctx, sb, p.clear)
			if errors.Is(err, ErrTaskInterfered) {
				t.verdictNote = fmt.Sprintf("clearing %s before the verifier: %v", strings.Join(p.clear, " "), err)
				run.stop = t.verdictNote
				return run, nil
			}
			if err != nil {
				return run, fmt.Errorf("clearing %s: %w", strings.Join(p.clear, " "), err)
			}
		}
		t.filesBlocked = false
		sr, err := t.runVerifier(ctx, sb, p, env)
		if err != nil {
			return run, fmt.Errorf("verifier: %w", err)
		}
		if t.filesBlocked {
			// Its files could not be put in place (a file the task left
			// at /tests): the verifier did not run, and that is the
			// verdict's reason, not a reward file it never wrote.
			run.stop = t.verdictNote
			return run, nil
		}
		if ctx.Err() != nil {
			return run, nil
		}
		if !sr.TimedOut {
			break
		}
		if try == tries || t.gone != "" {
			run.verifierTimedOut = true
			run.stop = "the verifier ran past its time limit: later steps not run"
			return run, nil
		}
		t.notes = append(t.notes, fmt.Sprintf("the verifier ran past its time limit (%s) and was run again, as Harbor retries a verifier timeout once", p.verifyTime))
	}
	run.verified = true
	rule := t.task.Verdict.Reward
	switch {
	case p.rewards:
		rewards, note, err := t.readRewards(ctx, sb, rule.Dir)
		run.rewards = rewards
		if note != "" {
			run.stop = note + ": later steps not run"
		} else {
			run.stop = p.gate.Gate(rewards)
		}
		return run, err
	case rule != nil:
		// The read has its own bound, not what the verifier left of its time.
		var err error
		run.passed, t.verdictNote, err = t.readReward(ctx, sb, rule)
		if err != nil {
			return run, err
		}
	case t.task.Verdict.Parser != "":
		run.passed, t.verdictNote = t.judgeOutput(t.task.Verdict.Parser)
		t.transcript = nil
	default:
		run.passed = t.verifierExit == 0
	}
	return run, nil
}

// runVerifier runs the verifier's step under its deadline, its output
// kept for the task's parser where it has one. Its files are copied in
// under the same deadline, as Harbor's verifier uploads tests/ from its
// timeout's budget (a copy that runs it out is Harbor's
// VerifierArtifactTransferTimeoutError): a 600 MiB fixture under a 1 s
// verifier is the verifier's timeout, never the engine gone.
func (t *trialRun) runVerifier(ctx context.Context, sb Sandbox, p phase, env []string) (model.StepResult, error) {
	vctx, cancel := context.WithTimeout(ctx, p.verifyTime)
	defer cancel()
	if t.task.Verdict.Parser != "" && !p.rewards {
		t.transcript = &verdict.Transcript{} // judged, then dropped, by verify
	}
	sr, err := t.runStep(vctx, sb, model.PhaseVerifier, p.verifier, env)
	t.verifierExit = sr.ExitCode
	return sr, err
}

// maskedErr is a reward's parse error as said from its masked text (the
// parser quotes a cut of what it read: cut before masking, a secret's
// start would show), else the error itself.
func maskedErr(err, masked error) error {
	if masked != nil {
		return masked
	}
	return err
}

// rewardFiles are a verifier's reward files in dir.
func rewardFiles(dir string) []string {
	return []string{path.Join(dir, "reward.txt"), path.Join(dir, "reward.json")}
}

// readRewards reads a multi-step task's step's rewards from its reward
// file; the note says why there are none.
func (t *trialRun) readRewards(ctx context.Context, sb Sandbox, dir string) (map[string]float64, string, error) {
	file, data, note, err := t.rewardFile(ctx, sb, dir)
	if note != "" || err != nil {
		return nil, note, err
	}
	m, err := model.ParseStepRewards(path.Base(file), data)
	if err != nil {
		_, masked := model.ParseStepRewards(path.Base(file), []byte(t.r.redact(string(data))))
		return nil, fmt.Sprintf("the verifier's %s: %v", file, maskedErr(err, masked)), nil
	}
	return m, "", nil
}

// rewardFile reads the verifier's reward file in dir (reward.txt, else
// reward.json), each read under SandboxOpTimeout, not what the verifier
// left of its time. The note says why there is none a verdict can read
// (the task's doing); the error is the engine's.
func (t *trialRun) rewardFile(ctx context.Context, sb Sandbox, dir string) (file string, data []byte, note string, err error) {
	defer TimePhase(t.trial.ID, "reward read")()
	for _, file := range rewardFiles(dir) {
		rctx, cancel := context.WithTimeout(ctx, SandboxOpTimeout)
		data, err := sb.ReadFile(rctx, file)
		cancel()
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.Is(err, ErrNotReadable) || errors.Is(err, ErrTaskInterfered):
			return file, nil, fmt.Sprintf("the verifier's %s: %v", file, err), nil
		case err != nil:
			return file, nil, "", fmt.Errorf("reading the reward: %w", err)
		}
		return file, data, "", nil
	}
	return "", nil, fmt.Sprintf("the verifier wrote no reward (%s/reward.txt or reward.json)", dir), nil
}

// restoreScript removes, as root, a file or a link the task left in place
// of each directory given ($@) or of one of its parents: the empty
// directories the verifier gets are the harness's bind mounts
// (Harbor's /logs/verifier, terminal-bench's /logs), which an agent can
// empty but not replace.
const restoreScript = `set -f; IFS=/; for d; do p=; for part in $d; do [ -n "$part" ] || continue; p="$p/$part"; if [ -L "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }; then rm -f -- "$p"; fi; done; done`

// restoreDirs makes the verifier's empty directories (uploads of no file)
// directories again where the agent replaced one, or a parent, with a
// file or a link: under the harness they are mounts the agent could not
// replace, and its verifier wrote its reward there whatever the agent
// did (an agent's `rm -rf /logs && echo > /logs` failed its own verifier
// here). Best effort in an image with no sh; the error is the engine's.
func (t *trialRun) restoreDirs(ctx context.Context, sb Sandbox, verifier model.Step) error {
	var dirs []string
	for _, u := range verifier.Files {
		if u.From == "" && u.Name == "" {
			dirs = append(dirs, path.Clean("/"+u.To))
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	defer TimePhase(t.trial.ID, "verifier dirs")()
	rctx, cancel := context.WithTimeout(ctx, SandboxOpTimeout)
	defer cancel()
	_, err := sb.Exec(rctx, append([]string{"sh", "-c", restoreScript, "sh"}, dirs...), nil, "0", func(string, string) {})
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrTaskInterfered) && !errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("making %s directories again before the verifier: %w", strings.Join(dirs, " "), err)
	}
	return nil
}

// clear removes paths in the sandbox (through its FileRemover where it
// has one, else an exec'd rm -rf) under SandboxOpTimeout; an error
// wrapping ErrTaskInterfered is the task's doing, any other the engine's
// (nil when the trial was cancelled).
func (t *trialRun) clear(ctx context.Context, sb Sandbox, paths []string) error {
	cctx, cancel := context.WithTimeout(ctx, SandboxOpTimeout)
	defer cancel()
	done, err := false, error(nil)
	if fr, ok := sb.(FileRemover); ok {
		// No process of its own: one exec more was a step's worth of a
		// trivial task-directory trial (docs/PERFORMANCE.md).
		done, err = fr.RemoveFiles(cctx, paths)
	}
	if !done && err == nil {
		_, err = sb.Exec(cctx, append([]string{"rm", "-rf", "--"}, paths...), nil, "0", func(string, string) {})
	}
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && !errors.Is(err, ErrTaskInterfered):
		return fmt.Errorf("removing %s did not end within %s though the engine answered: %w", strings.Join(paths, " "), SandboxOpTimeout, ErrTaskInterfered)
	}
	return err
}

// readReward reads the verifier's reward file and says whether it passes,
// and if not, why. The error is the engine's.
func (t *trialRun) readReward(ctx context.Context, sb Sandbox, rule *model.RewardRule) (bool, string, error) {
	file, data, note, err := t.rewardFile(ctx, sb, rule.Dir)
	if note != "" || err != nil {
		return false, note, err
	}
	r, err := model.ParseReward(path.Base(file), data)
	if err != nil {
		// Said from the masked text: the parser quotes a cut of what it
		// read, and a secret cut before masking would show its start.
		_, masked := model.ParseReward(path.Base(file), []byte(t.r.redact(string(data))))
		return false, fmt.Sprintf("the verifier's %s: %v", file, maskedErr(err, masked)), nil
	}
	t.res.Reward = &r
	if r >= rule.Pass {
		return true, "", nil
	}
	return false, fmt.Sprintf("reward %g < %g (%s)", r, rule.Pass, file), nil
}

// judgeOutput reads the verifier's output with the task's parser, as
// terminal-bench's harness does, and says whether it passed and, if not,
// why.
func (t *trialRun) judgeOutput(parser string) (bool, string) {
	j, err := verdict.Judge(parser, t.transcript.String())
	if err != nil {
		return false, err.Error()
	}
	if j.Tests != nil {
		// Masked as drawn on the pane, not only as written: a secret
		// split by an escape sequence or a carriage return that the pane
		// draws away came back whole in a failing test's name (the
		// thirty-fifth attacker's 1). The reason is masked at the end.
		tally := *j.Tests
		tally.Failing = append([]string(nil), tally.Failing...)
		for i, name := range tally.Failing {
			tally.Failing[i] = t.r.redact(name)
		}
		j.Tests = &tally
	}
	t.res.Tests = j.Tests
	if !j.Passed && t.transcript.Dropped > 0 {
		j.Reason += fmt.Sprintf(" (the output was longer than terminal-bench's tests pane keeps, %d rows of history: its first %d row(s) were not read)", verdict.PaneHistory, t.transcript.Dropped)
	}
	return j.Passed, j.Reason
}
