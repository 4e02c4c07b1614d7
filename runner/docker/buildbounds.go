package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// A task's Dockerfile is the task's code, run by the engine before any
// trial: its RUN steps are as untrusted as its solve.sh. The engine's
// BuildKit (Docker 20.10.24 here, and moby's builder-next to this day)
// takes a build network of "default" (the engine's default bridge, where
// every container without a network of its own is), "host" or "none"
// only, refusing a user-defined one ("network mode … not supported by
// buildkit"), and it ignores a build's memory, swap, cgroup parent and
// ulimits: its RUN steps ran in /docker/buildkit/<id> with
// memory.limit_in_bytes unlimited and pids.max max under a request of
// 128 MiB, and it ignores a build's CPU quota too (ImageBuildOptions'
// CPUQuota and CPUPeriod). The classic builder applies all of them to its
// RUN containers.
// So a Dockerfile the classic builder parses is built by it, bounded; only
// one that needs BuildKit (heredocs, RUN --mount: 5 of 3,566 public Harbor
// tasks) is built by BuildKit, with no network unless the run says
// --build-network, and with no memory or CPU bound (said in its
// progress). Neither builder takes a pids bound: the build API has no
// PidsLimit (a ulimit nproc does not hold root, which RUN steps run as),
// so a RUN step's processes are bounded only by its memory bound.

// buildPlan is how one build runs: its builder, the network its RUN
// steps get (model.BuildNetwork*), and its memory and CPU bounds (0:
// none).
type buildPlan struct {
	Builder Builder
	Network string
	Memory  int64
	CPUs    float64
	// Unbounded says why the memory and CPU bounds do not apply ("" when
	// they do or there are none).
	Unbounded string
	// Task names the task in what the build says.
	Task string
	// TaskNoNetwork says the task itself has no network (so a build
	// without one is the task's doing, not BuildKit's).
	TaskNoNetwork bool
	// NeedsBuildKit is what of the Dockerfile only BuildKit builds.
	NeedsBuildKit string
}

// classicBounds is why the classic builder builds a Dockerfile the
// engine's BuildKit would build too.
const classicBounds = "bounded: only the classic builder gives a build's RUN steps a network of the build's own and a memory and CPU bound; the engine's BuildKit takes none of them"

// classicDiffersKept is why a Dockerfile the classic builder builds
// otherwise than BuildKit is still built with it: the task has a network,
// which BuildKit can give its build only on the engine's default bridge.
func classicDiffersKept(differs string) string {
	return "its Dockerfile builds otherwise with BuildKit, Harbor's builder (" + differs + "), but BuildKit joins no network of the build's own: " +
		"built with the classic builder on a bridge of its own; --build-network builds it with BuildKit on the engine's default bridge, as Harbor does"
}

// taskHasNetwork says whether the task's container gets a network of its
// own (a task with none, or with only its services', gets none).
func taskHasNetwork(t model.Task) bool {
	return t.Network != "none" && t.Network != model.NetworkTrialOnly
}

// planBuild decides how a task's Dockerfile is built on an engine whose
// builder is engine: the classic builder for every Dockerfile it parses
// (a bridge of the build's own when the task has a network or the run
// says --build-network, else none; the memory and CPU bounds), BuildKit
// only for one that needs it (no network, or the engine's default bridge
// with --build-network; no memory or CPU bound: the engine applies none).
func planBuild(engine Builder, t model.Task, b model.Build) buildPlan {
	p := buildPlan{Builder: engine, Network: model.BuildNetworkNone, Memory: model.BuildMemory(b, t.Resources.MemoryBytes),
		CPUs: model.BuildCPUs(b, t.Resources.CPUs), Task: t.Name, TaskNoNetwork: !taskHasNetwork(t), NeedsBuildKit: b.NeedsBuildKit}
	wantNet := b.WithNetwork || taskHasNetwork(t)
	if engine.Name == BuilderBuildKit && b.NeedsBuildKit == "" {
		switch {
		case b.ClassicDiffers != "" && (!wantNet || b.WithNetwork):
			// Built as Harbor builds it: with no network it loses
			// nothing, and --build-network gives BuildKit the engine's.
			p.NeedsBuildKit = b.ClassicDiffers
		case b.ClassicDiffers != "":
			p.Builder = Builder{Name: BuilderClassic, Reason: classicDiffersKept(b.ClassicDiffers)}
		default:
			p.Builder = Builder{Name: BuilderClassic, Reason: classicBounds}
		}
	}
	if p.Builder.Name == BuilderClassic {
		if wantNet {
			p.Network = model.BuildNetworkOwn
		}
		return p
	}
	var held []string
	if p.Memory > 0 {
		held = append(held, model.FormatBytes(p.Memory))
	}
	if p.CPUs > 0 {
		held = append(held, fmt.Sprintf("%g CPU", p.CPUs))
	}
	if len(held) > 0 {
		p.Unbounded = fmt.Sprintf("its Dockerfile needs BuildKit (%s), and the engine's BuildKit applies no memory or CPU bound: its RUN steps are not held to %s", p.NeedsBuildKit, strings.Join(held, " and "))
		p.Memory, p.CPUs = 0, 0
	}
	if b.WithNetwork {
		p.Network = model.BuildNetworkEngine
	}
	return p
}

// buildCPUPeriod is the CFS period a build's CPU bound is a quota of (the
// kernel's default, as docker run --cpus uses).
const buildCPUPeriod = 100_000

// cpuQuota is the plan's CPU bound as the classic builder takes it: a
// CFS quota of its period in microseconds (0, 0: none). The quota is at
// least the kernel's least (1 ms).
func (p buildPlan) cpuQuota() (period, quota int64) {
	if p.CPUs <= 0 {
		return 0, 0
	}
	return buildCPUPeriod, max(int64(p.CPUs*buildCPUPeriod), 1000)
}

// networkMode is the build request's network mode for the plan (own: the
// name of the network made for it).
func (p buildPlan) networkMode(own string) string {
	switch p.Network {
	case model.BuildNetworkOwn:
		return own
	case model.BuildNetworkEngine:
		return "default"
	}
	return "none"
}

// says is the progress line that says how the build is bounded.
func (p buildPlan) says() string {
	var net string
	switch p.Network {
	case model.BuildNetworkOwn:
		net = "a bridge network of its own (no other container on the engine is on it)"
	case model.BuildNetworkEngine:
		net = "the engine's default bridge, as Harbor builds (--build-network): its RUN steps reach every container there"
	default:
		net = "no network"
		switch {
		case p.TaskNoNetwork:
			net += " (the task has none)"
		case p.NeedsBuildKit != "":
			net += " (its Dockerfile needs BuildKit, which joins no network of the build's own; --build-network builds it on the engine's default bridge)"
		}
	}
	if p.Unbounded != "" {
		return "build of " + p.Task + ": " + net + "; no memory or CPU bound: " + p.Unbounded
	}
	mem := "no memory bound (--build-memory none)"
	if p.Memory > 0 {
		mem = "memory at most " + model.FormatBytes(p.Memory) + " (--build-memory)"
	}
	cpu := "no CPU bound (--build-cpus none)"
	if p.CPUs > 0 {
		cpu = fmt.Sprintf("at most %g CPU (--build-cpus)", p.CPUs)
	}
	return "build of " + p.Task + ": " + net + "; " + mem + "; " + cpu
}

// ownBuildNetwork makes the bridge network a build's RUN steps join,
// labelled as headroom's and its owner's (so a headroom killed mid-build
// leaves it to the reaper, as a trial's), and with the experiments root
// of the run it is for (so the reaps scoped to that root take it), and
// returns its name and what removes it.
func ownBuildNetwork(ctx context.Context, cli *client.Client, tag string) (string, func(), error) {
	var r [6]byte
	_, _ = rand.Read(r[:])
	name := "headroom-build-" + hex.EncodeToString(r[:])
	labels := map[string]string{runner.LabelHeadroom: "1", runner.LabelOwner: runner.Owner(), LabelBuildOf: tag}
	if root := runner.ExperimentsRootOf(ctx); root != "" {
		labels[runner.LabelExperimentsRoot] = root
	}
	eng, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if _, err := cli.NetworkCreate(eng, name, network.CreateOptions{Driver: "bridge", Labels: labels}); err != nil {
		return "", nil, fmt.Errorf("create the build's network: %w", err)
	}
	return name, func() { removeBuildNetwork(ctx, cli, name) }, nil
}

// removeBuildNetwork removes a build's network once nothing is on it: a
// build cut short (its time limit, a cancel) returns while the engine
// still stops and removes its RUN container, which holds the network
// until then. It waits for the engine's disconnect events, up to two
// minutes; what is left after is the reaper's (its owner label).
func removeBuildNetwork(ctx context.Context, cli *client.Client, name string) {
	eng, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	msgs, _ := cli.Events(eng, events.ListOptions{Filters: filters.NewArgs(filters.Arg("type", "network"), filters.Arg("event", "disconnect"))})
	for {
		err := removeTrialResource(eng, cli, TrialResource{Kind: "network", ID: name, Name: name})
		if !errors.Is(err, runner.ErrInUse) {
			return
		}
		// Someone is still on it: the next disconnect, or a second.
		retry := time.NewTimer(time.Second)
		select {
		case <-msgs:
		case <-retry.C:
		case <-eng.Done():
			retry.Stop()
			return
		}
		retry.Stop()
	}
}

// LabelBuildOf is the label of a build's own network naming the image it
// builds (what proves it headroom's to clean, with its owner label).
const LabelBuildOf = runner.LabelBuild

// oomWatch collects the engine's OOM events of containers while a classic
// build runs: its RUN steps' containers are the engine's, and an OOM kill
// of one is the build hitting its memory bound.
type oomWatch struct {
	mu     sync.Mutex
	ids    []string
	seen   chan struct{}
	cancel context.CancelFunc
}

func watchOOM(ctx context.Context, cli *client.Client) *oomWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &oomWatch{seen: make(chan struct{}, 1), cancel: cancel}
	msgs, errs := cli.Events(ctx, events.ListOptions{Filters: filters.NewArgs(filters.Arg("type", "container"), filters.Arg("event", "oom"))})
	go func() {
		for {
			select {
			case m := <-msgs:
				w.mu.Lock()
				w.ids = append(w.ids, m.Actor.ID)
				w.mu.Unlock()
				select {
				case w.seen <- struct{}{}:
				default:
				}
			case <-errs:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return w
}

// killed says whether one of the containers (ids or their short
// prefixes) was OOM-killed, waiting up to within for the event.
func (w *oomWatch) killed(ids []string, within time.Duration) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		for _, got := range w.ids {
			for _, id := range ids {
				if id != "" && strings.HasPrefix(got, id) {
					w.mu.Unlock()
					return true
				}
			}
		}
		w.mu.Unlock()
		select {
		case <-w.seen:
		case <-deadline.C:
			return false
		}
	}
}

func (w *oomWatch) stop() { w.cancel() }

// stepTracker follows a classic build's progress for the RUN containers
// it starts (the error names the step already).
type stepTracker struct {
	ids []string
}

var runningIn = regexp.MustCompile(`^---> Running in ([0-9a-f]{12,64})$`)

func (s *stepTracker) line(l string) {
	if m := runningIn.FindStringSubmatch(l); m != nil {
		s.ids = append(s.ids, m[1])
	}
}

// killedBy137 says whether a build's error is a RUN step ended by SIGKILL
// (exit 137), as an OOM kill ends it.
func killedBy137(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "returned a non-zero code: 137") || strings.Contains(msg, "exit code: 137")
}

// runStepFailed says whether a build's error is one of its RUN steps
// failing (not a parse error, a missing base image, the engine).
func runStepFailed(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "returned a non-zero code") || strings.Contains(msg, "did not complete successfully") || strings.Contains(msg, "executor failed running")
}

// explainBounds says, for a build that failed, which of its bounds it
// met: its memory bound (an OOM kill of a RUN step, oom), or no network
// (a failed RUN step of a build that had none), naming what lifts each.
func (p buildPlan) explainBounds(err error, oom bool) error {
	switch {
	case oom:
		return fmt.Errorf("the build of task %s was killed at its memory bound %s (the kernel's OOM killer ended a RUN step): a task's Dockerfile builds with at most the larger of %s and the task's own memory; give it more with --build-memory (e.g. --build-memory %s), or none with --build-memory none: %w",
			p.Task, model.FormatBytes(p.Memory), model.FormatBytes(model.DefaultBuildMemoryBytes), model.FormatBytes(2*p.Memory), err)
	case p.Network == model.BuildNetworkNone && runStepFailed(err):
		why := "because the task has none (Harbor's allow_internet = false, or headroom's network = \"none\")"
		lift := "run with --build-network to build it with a bridge network of its own (Harbor's `docker compose build` gives every build the engine's network, whatever allow_internet says)"
		if !p.TaskNoNetwork {
			why = fmt.Sprintf("because its Dockerfile needs BuildKit (%s), which can join no network of the build's own", p.NeedsBuildKit)
			lift = "run with --build-network to build it on the engine's default bridge, as Harbor does (its RUN steps then reach every container there)"
		}
		// The failure first: a RUN step that fails for its own reasons
		// (a test, a typo) is most builds' failure, and a message that
		// opened on the network hint buried it (the new user of
		// 2026-12-06: "returned a non-zero code: 3" mid-way).
		return fmt.Errorf("%w; the build of task %s had no network, %s: if its Dockerfile fetches (apt-get, pip, curl), %s", err, p.Task, why, lift)
	}
	return err
}
