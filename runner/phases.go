package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// preparePhase runs a phase's setup steps and waits on its healthcheck;
// it says why the phase cannot go on ("" when it can).
func (t *trialRun) preparePhase(ctx context.Context, sb Sandbox, p phase, env []string) (string, error) {
	for _, st := range p.setup {
		sr, err := t.runStep(ctx, sb, "setup", st, env)
		if err != nil {
			return "", fmt.Errorf("step %s: %w", st.Name, err)
		}
		if sr.TimedOut || sr.ExitCode != 0 {
			return fmt.Sprintf("%s exited %d: later steps not run", st.Name, sr.ExitCode), nil
		}
	}
	if p.healthcheck == nil {
		return "", nil
	}
	return t.phaseHealthcheck(ctx, sb, p, env)
}

// phaseHealthcheck polls a phase's healthcheck as Docker polls one:
// every interval, each try within its timeout, failures during the
// start period not counted, unhealthy after retries failures in a row.
func (t *trialRun) phaseHealthcheck(ctx context.Context, sb Sandbox, p phase, env []string) (string, error) {
	hc := p.healthcheck
	argv := hc.Test
	if len(argv) > 0 && argv[0] == "CMD" {
		argv = argv[1:]
	}
	st := model.Step{Name: p.name + "/healthcheck", Show: argv[len(argv)-1], Argv: argv}
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
		if t.gone != "" {
			// The container was stopped with the try: nothing more runs.
			return "healthcheck timed out and " + t.gone + ": later steps not run", nil
		}
		if sr.ExitCode == 0 && !sr.TimedOut {
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
