package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// waitHealthy runs a task's healthcheck the way Harbor does before its
// agent starts: the command again and again until it exits 0; failures in
// the start period do not count, and Retries failures in a row after it
// give up. The whole wait is bounded as an image's HEALTHCHECK's is
// (Options.ImageHealthWait, else healthWaitLimit): a check that fails
// every second with two billion retries, or a start period of a week,
// is the environment's failure, named, not a trial held at "creating
// container" for ever.
func waitHealthy(ctx context.Context, sb *sandbox, hc model.Healthcheck) error {
	argv := hc.Argv()
	if argv == nil {
		return nil
	}
	interval := hc.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	retries := max(hc.Retries, 1)
	bound := cmp.Or(sb.b.opts.ImageHealthWait, healthWaitLimit)
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	startEnd := time.Now().Add(hc.StartPeriod)
	failures := 0
	why := "none ran"
	over := func() error {
		return fmt.Errorf("the task's [environment.healthcheck] (%s) did not pass within %s, headroom's bound on the wait (%s; unset: %s): %d failure(s) counted of its %d retries, the last: %s; the environment's failure, not the task's: %w",
			strings.Join(argv, " "), bound, ImageHealthWaitEnv, healthWaitLimit, failures, retries, why, runner.ErrOwnBound)
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

// killedStarting is err, a failed wait for the container's health, as
// runner.StartOOMError when the kernel OOM-killed processes in the
// container meanwhile: a check killed at the ratio's limit is the limit's
// doing, recorded as an OOM kill, not an infra error (the twenty-third
// attacker's 2: "healthcheck failed 2 time(s) in a row (exit 137)", no
// kill, no cause, at 1x, and passed at 3x).
func (s *sandbox) killedStarting(err error, during string) error {
	s.mu.Lock()
	cg := s.cg
	s.mu.Unlock()
	if cg == nil || errors.Is(err, context.Canceled) {
		return err
	}
	n, rerr := cg.OOMKills()
	if rerr != nil || n == 0 {
		return err
	}
	// The hits as read at each kill too: v1's failcnt stays 0 on some
	// kernels, and the peak that stood for a hit is gone once the
	// killed check's memory is.
	hits, _ := cg.LimitHits()
	s.mu.Lock()
	hits = max(hits, s.limitHits)
	s.mu.Unlock()
	return &runner.StartOOMError{Kills: n, AtLimit: hits > 0, During: during, Err: err}
}

// healthOnce runs the check once within its time limit.
func healthOnce(ctx context.Context, sb *sandbox, argv []string, timeout time.Duration) (int, error) {
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

// isNoGPU says whether the engine refused a container for want of a GPU
// device driver.
func isNoGPU(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "could not select device driver") || strings.Contains(msg, "nvidia")
}

func noGPUError(task model.Task, err error) error {
	return fmt.Errorf("task %s needs %d GPU(s) and this engine cannot give any (%v): run it on a host with GPUs and the NVIDIA container toolkit, or leave it out", task.Name, task.GPUs, err)
}

// ImageHealthWaitEnv, set to a duration ("30s", "2m"), bounds the wait
// for an image's own HEALTHCHECK instead of healthWaitLimit (15 min): a
// trial held at "creating container" by an image whose check never
// passes is an infra error that much sooner (make hostile's row for it
// waits 10 s, not 15 min).
const ImageHealthWaitEnv = runner.HealthWaitEnv

// ImageHealthWaitFromEnv is ImageHealthWaitEnv's bound, or 0 (the
// default) when it is unset (runner.HealthWaitFromEnv: one reading for
// the image's check and the task's own).
func ImageHealthWaitFromEnv() (time.Duration, error) { return runner.HealthWaitFromEnv() }

// waitImageHealthy waits, as Harbor's `docker compose up --wait` does,
// for a container whose image declares a HEALTHCHECK to be healthy; an
// image without one is ready at once. Unhealthy is the environment's
// failure.
//
// The wait is bounded (Options.ImageHealthWait, from ImageHealthWaitEnv;
// else healthWaitLimit, as a sidecar's): an image whose check stays "starting" (a start
// period of 1000 h) is the environment's failure, named, not a trial
// held at "creating container" for ever.
func waitImageHealthy(ctx context.Context, b *Backend, id string) error {
	bound := cmp.Or(b.opts.ImageHealthWait, healthWaitLimit)
	deadline := time.Now().Add(bound)
	for {
		info, err := b.cli.ContainerInspect(ctx, id)
		if err != nil {
			return fmt.Errorf("inspect container: %w", err)
		}
		if info.State == nil || info.State.Health == nil {
			return nil
		}
		switch info.State.Health.Status {
		case "healthy":
			return nil
		case "unhealthy":
			why := ""
			if n := len(info.State.Health.Log); n > 0 {
				why = ": " + strings.TrimSpace(info.State.Health.Log[n-1].Output)
			}
			return fmt.Errorf("the image's HEALTHCHECK says the container is unhealthy%s", why)
		}
		if !info.State.Running {
			return fmt.Errorf("the container stopped before its HEALTHCHECK passed (exit %d)", info.State.ExitCode)
		}
		if time.Now().After(deadline) {
			how := ""
			if hc := info.Config.Healthcheck; hc != nil {
				how = fmt.Sprintf(" (its start period %s, every %s)", hc.StartPeriod, hc.Interval)
			}
			return fmt.Errorf("the image's HEALTHCHECK did not pass within %s: still %s%s; the environment's failure, not the task's", bound, info.State.Health.Status, how)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
