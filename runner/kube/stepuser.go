package kube

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// Who a pod's steps run as. A pod's exec (and so a probe exec'd beside
// PID 1) runs as its container's user, and Kubernetes has no `exec -u`:
// under an image's `USER nobody` no step could run as root, where Harbor
// runs `[verifier] user = "root"` with `docker exec -u root`. As on the
// Docker backend (runner/docker/stepuser.go), where the container may
// switch users (runner.CanSwitchUser), the task's container runs as root,
// so its probe is root, and the probe runs every step as the container's
// user (the task's, else the image's USER), a step naming a user as that
// one. The image's USER is the local engine's inspect of the image the
// cluster was given (runner.ImageInspector): the cluster does not say it.

// imageConfig is one inspect of a task's image (err: why there is none).
type imageConfig struct {
	runner.ImageConfig
	err error
}

// imageConfig inspects a task's image (its cluster reference) where it
// was built, once per image.
func (p *Platform) imageConfig(ctx context.Context, ref string) (runner.ImageConfig, error) {
	p.mu.Lock()
	c, ok := p.imageConfigs[ref]
	local, known := p.images[ref]
	p.mu.Unlock()
	if ok {
		return c.ImageConfig, c.err
	}
	if !known {
		local = ref
	}
	l, err := p.imageBuilder(ctx)
	if err == nil {
		if in, ok := l.(runner.ImageInspector); ok {
			c.ImageConfig, c.err = in.ImageConfig(ctx, local)
		} else {
			c.err = errors.New("the image builder cannot inspect images")
		}
	} else {
		c.err = err
	}
	p.mu.Lock()
	if p.imageConfigs == nil {
		p.imageConfigs = map[string]imageConfig{}
	}
	p.imageConfigs[ref] = c
	p.mu.Unlock()
	return c.ImageConfig, c.err
}

// stepUser is who every step of the task's pod runs as through the probe,
// which then runs as root ("" where the pod runs as its container's user,
// as before): the task's user, else its image's USER, when that is not
// root, the probe is in the pod and drives the steps and the container
// may switch users. Nothing else of the task's runs as root for it: where
// the probe is exec'd beside PID 1, PID 1 (the image's ENTRYPOINT, the
// task's own command) becomes that user first (podConfig.Entrypoint), so
// the image must have been inspected. keepHome says the container's
// environment sets HOME. entrypoint is the image's ENTRYPOINT.
func (b *backend) stepUser(ctx context.Context, task model.Task, pid1, execd bool) (user string, keepHome bool, entrypoint []string) {
	if !(pid1 || execd) || b.opts.ExecSteps || !runner.CanSwitchUser(task) || task.Image == "" {
		return "", false, nil
	}
	cfg, err := b.p.imageConfig(ctx, task.Image)
	user = task.User
	if user == "" {
		user = cfg.User
	}
	if (err != nil && (task.User == "" || execd)) || runner.RootUser(user) {
		// Not known (an image the local engine cannot inspect: one
		// imported by hand), or root already.
		return "", false, nil
	}
	keepHome = slices.ContainsFunc(task.Env, func(e string) bool { return strings.HasPrefix(e, "HOME=") }) || cfg.SetsHome
	return user, keepHome, cfg.Entrypoint
}

// checkStepUser asks the probe whether the steps' user is one a step can
// run as, once at the start: an unknown one ends the start in the
// runtime's words for a container whose USER it cannot find, not every
// step's failure.
func (s *sandbox) checkStepUser(ctx context.Context) error {
	return runner.CheckStepUser(s.stepUser, func(line func(stream, text string)) (int, error) {
		l, err := s.drv.ask(ctx, workload.Command{Op: workload.OpUser, Argv: []string{s.stepUser}}, line)
		return l.Code, err
	})
}
