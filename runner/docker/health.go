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

// waitHealthy runs the task's [environment.healthcheck] before its agent
// (runner.WaitHealthy), bounded by Options.ImageHealthWait, else
// healthWaitLimit.
func waitHealthy(ctx context.Context, sb *sandbox, hc model.Healthcheck) error {
	return runner.WaitHealthy(ctx, sb, hc, cmp.Or(sb.b.opts.ImageHealthWait, healthWaitLimit))
}

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
