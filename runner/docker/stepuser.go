package docker

import (
	"context"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// containerUser is who the engine would run the task's container as: the
// task's user, else its image's USER ("" for root).
func (b *Backend) containerUser(ctx context.Context, task model.Task) string {
	if task.User != "" || task.Image == "" {
		return task.User
	}
	return b.inspectImage(ctx, task.ImageRef()).user
}

// keepsHome says whether the task's container has a HOME of its own (its
// image's ENV, its task's environment), which a step run as another user
// keeps, as runc sets HOME only where the environment has none.
func (b *Backend) keepsHome(ctx context.Context, task model.Task) bool {
	return slices.ContainsFunc(task.Env, isHome) || task.Image != "" && b.inspectImage(ctx, task.ImageRef()).setsHome
}

// isHome says whether an environment entry sets HOME.
func isHome(e string) bool { return strings.HasPrefix(e, "HOME=") }

// checkStepUser asks the driver whether user is one a step can run as,
// once at the start: an unknown one is the engine's error for a
// container whose USER it is ("unable to find user …"), not a failure of
// every step.
func (s *sandbox) checkStepUser(ctx context.Context, user string) error {
	return runner.CheckStepUser(user, func(line func(stream, text string)) (int, error) {
		r, err := s.drv.send(ctx, workload.Command{Op: workload.OpUser, Argv: []string{user}}, line)
		return r.ExitCode, err
	})
}
