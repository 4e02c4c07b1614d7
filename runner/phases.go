package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// preparePhase runs a phase's setup steps and waits on its healthcheck;
// it says why the phase cannot go on ("" when it can).
func (t *trialRun) preparePhase(ctx context.Context, sb Sandbox, p phase, env []string) (string, error) {
	for _, st := range p.setup {
		// Bounded by the step's agent time limit, each: a setup.sh that
		// slept held its trial for ever (the thirty-fourth attacker's 2),
		// where every other wait of a trial has a bound.
		sctx, cancel := context.WithTimeout(ctx, setupBound(p))
		sr, err := t.runStep(sctx, sb, "setup", st, env)
		cancel()
		if err != nil {
			return "", fmt.Errorf("step %s: %w", st.Name, err)
		}
		if sr.TimedOut && ctx.Err() == nil {
			return fmt.Sprintf("%s ran past its time limit (%s, the step's agent time limit): later steps not run", st.Name, setupBound(p)), nil
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

// setupBound is how long each of a phase's setup steps may run: the
// step's agent time limit (a harness's bound for a step's setup.sh was
// not found in its code read here; the agent's is the step's own budget).
func setupBound(p phase) time.Duration {
	if p.agentTime > 0 {
		return p.agentTime
	}
	return SandboxOpTimeout
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
	// The whole wait is bounded as an image's HEALTHCHECK's is
	// (HealthWait): a check failing every second with two billion
	// retries is not a trial held for ever.
	bound := HealthWait()
	deadline := start.Add(bound)
	last := "none ran"
	for {
		try := time.Now().Add(hc.Timeout)
		if deadline.Before(try) {
			try = deadline
		}
		hctx, cancel := context.WithDeadline(ctx, try)
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
		last = fmt.Sprintf("exit %d", sr.ExitCode)
		if sr.TimedOut {
			last = "timed out"
		}
		if time.Since(start) >= hc.StartPeriod {
			failures++
		}
		if failures >= max(hc.Retries, 1) {
			return fmt.Sprintf("healthcheck failed %d time(s): later steps not run", failures), nil
		}
		over := fmt.Errorf("step %s's healthcheck (%s) did not pass within %s, headroom's bound on the wait (%s; unset: %s): %d failure(s) counted of its %d retries, the last: %s; the environment's failure, not the task's: %w",
			p.name, st.Show, bound, HealthWaitEnv, DefaultHealthWait, failures, max(hc.Retries, 1), last, ErrOwnBound)
		if !time.Now().Before(deadline) {
			return "", over
		}
		select {
		case <-ctx.Done():
			return "cancelled", nil
		case <-time.After(time.Until(deadline)):
			return "", over
		case <-time.After(hc.Interval):
		}
	}
}

// HealthWaitEnv, set to a duration ("30s", "2m"), bounds the wait for a
// healthcheck (an image's HEALTHCHECK, a task's [environment.healthcheck]
// or [steps.healthcheck]) instead of DefaultHealthWait.
const HealthWaitEnv = "HEADROOM_IMAGE_HEALTH_WAIT"

// DefaultHealthWait bounds the wait for a healthcheck, whatever its
// start period, interval and retries say.
const DefaultHealthWait = 15 * time.Minute

// HealthWaitFromEnv is HealthWaitEnv's bound, or 0 when it is unset; a
// value that is not a positive duration is refused, naming it.
func HealthWaitFromEnv() (time.Duration, error) {
	v := os.Getenv(HealthWaitEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive duration (e.g. 30s, 2m): it bounds the wait for a healthcheck, an image's own HEALTHCHECK or a task's (unset: %s)", HealthWaitEnv, v, DefaultHealthWait)
	}
	return d, nil
}

// HealthWait is HealthWaitEnv's bound, else DefaultHealthWait (a value
// HealthWaitFromEnv refuses is refused where the platform opens).
func HealthWait() time.Duration {
	if d, err := HealthWaitFromEnv(); err == nil && d > 0 {
		return d
	}
	return DefaultHealthWait
}

// WaitHealthy runs a task's [environment.healthcheck] the way Harbor does
// before its agent starts: the command again and again until it exits 0;
// failures in the start period do not count, and Retries failures in a
// row after it give up. The whole wait is bounded (bound: a backend's
// Options, else HealthWait): a check that fails every second with two
// billion retries, or a start period of a week, is the environment's
// failure, named, not a trial held at "creating container" for ever. Both
// backends run it at the end of their Start (the Kubernetes backend ran
// none, and started the agent at once).
func WaitHealthy(ctx context.Context, sb Sandbox, hc model.Healthcheck, bound time.Duration) error {
	argv := hc.Argv()
	if argv == nil {
		return nil
	}
	interval := hc.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	retries := max(hc.Retries, 1)
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	startEnd := time.Now().Add(hc.StartPeriod)
	failures := 0
	why := "none ran"
	over := func() error {
		return fmt.Errorf("the task's [environment.healthcheck] (%s) did not pass within %s, headroom's bound on the wait (%s; unset: %s): %d failure(s) counted of its %d retries, the last: %s; the environment's failure, not the task's: %w",
			strings.Join(argv, " "), bound, HealthWaitEnv, DefaultHealthWait, failures, retries, why, ErrOwnBound)
	}
	for {
		inStart := time.Now().Before(startEnd)
		code, err := healthOnce(bctx, sb, argv, hc.Timeout)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil && code == 0 {
			return nil
		}
		why = fmt.Sprintf("exit %d", code)
		if err != nil {
			why = err.Error()
		}
		if bctx.Err() != nil {
			return over()
		}
		if !inStart {
			failures++
			if failures >= retries {
				return fmt.Errorf("healthcheck failed %d time(s) in a row (%s): %s", failures, why, strings.Join(argv, " "))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-bctx.Done():
			return over()
		case <-time.After(interval):
		}
	}
}

var errHealthTimeout = errors.New("timed out")

// healthOnce runs the check once within its time limit.
func healthOnce(ctx context.Context, sb Sandbox, argv []string, timeout time.Duration) (int, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := sb.Exec(ctx, argv, nil, "", func(string, string) {})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return -1, errHealthTimeout
	}
	return res.ExitCode, err
}
