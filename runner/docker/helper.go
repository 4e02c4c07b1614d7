package docker

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload/wire"
)

// helperTimeout bounds one helper's run.
const helperTimeout = 2 * time.Minute

// helpers are a sandbox's helper containers still on the engine.
type helpers struct {
	mu  sync.Mutex
	ids map[string]bool
	n   int
}

// RunNetnsHelper runs a mode of the workload binary (workload.NetPolicyMode,
// and any other that acts on a network namespace) in a helper container
// that joins the trial container's network namespace with NET_ADMIN and
// no other capability, labelled as the trial's: what it changes is the
// trial's namespace only, never the host's. It waits for the mode to end
// and returns its output; the helper is removed then, or with the trial
// if headroom cannot (Remove), or by the reaper after a crash.
func (s *sandbox) RunNetnsHelper(ctx context.Context, mode string, args ...string) (string, error) {
	img, err := s.b.helperImage(ctx)
	if err != nil {
		return "", err
	}
	labels := maps.Clone(s.labels)
	labels[LabelHelper] = mode
	s.help.mu.Lock()
	s.help.n++
	name := fmt.Sprintf("%s-%s-%d", s.name, mode, s.help.n)
	s.help.mu.Unlock()
	cfg := &container.Config{Image: img, Entrypoint: append([]string{wire.Binary, mode}, args...), Labels: labels}
	hc := &container.HostConfig{
		NetworkMode: container.NetworkMode("container:" + s.id),
		CapDrop:     []string{"ALL"}, CapAdd: []string{"NET_ADMIN"},
		SecurityOpt: []string{"no-new-privileges"},
	}
	ctx, cancel := context.WithTimeout(ctx, helperTimeout)
	defer cancel()
	created, err := s.b.cli.ContainerCreate(ctx, cfg, hc, nil, nil, name)
	if err != nil {
		return "", fmt.Errorf("%s helper: create: %w", mode, err)
	}
	s.b.created(created.ID)
	s.help.mu.Lock()
	if s.help.ids == nil {
		s.help.ids = map[string]bool{}
	}
	s.help.ids[created.ID] = true
	s.help.mu.Unlock()
	defer s.removeHelper(created.ID)
	if err := s.b.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return "", fmt.Errorf("%s helper: start: %w", mode, err)
	}
	waitCh, errCh := s.b.cli.ContainerWait(ctx, created.ID, container.WaitConditionNotRunning)
	var code int64
	select {
	case w := <-waitCh:
		code = w.StatusCode
	case err := <-errCh:
		return "", fmt.Errorf("%s helper: %w", mode, err)
	}
	var out bytes.Buffer
	if logs, err := s.b.cli.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true}); err == nil {
		_, _ = stdcopy.StdCopy(&out, &out, logs)
		logs.Close()
	}
	text := strings.TrimSpace(out.String())
	if code != 0 {
		return text, fmt.Errorf("%s helper exited %d: %s", mode, code, text)
	}
	return text, nil
}

func (s *sandbox) removeHelper(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.b.cli.ContainerRemove(ctx, id, removeOptions)
	if err == nil || IsGone(err) {
		s.help.mu.Lock()
		delete(s.help.ids, id)
		s.help.mu.Unlock()
	}
}

// removeHelpers removes whatever helper is left (with the trial).
func (s *sandbox) removeHelpers() {
	s.help.mu.Lock()
	var ids []string
	for id := range s.help.ids {
		ids = append(ids, id)
	}
	s.help.mu.Unlock()
	for _, id := range ids {
		s.removeHelper(id)
	}
}

// helperImage is the image helpers run: the workload image the session
// prepared for the sweep (Options.HelperImage).
func (b *Backend) helperImage(context.Context) (string, error) {
	if b.opts.HelperImage == "" {
		return "", fmt.Errorf("no workload image was prepared for helper containers")
	}
	return b.opts.HelperImage, nil
}

var _ runner.NetworkPolicer = (*sandbox)(nil)
