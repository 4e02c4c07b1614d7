package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload/wire"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
)

// Definition registers the Docker Engine backend: the engine named by the
// environment (DOCKER_HOST etc.), with no settings of its own.
func Definition() runner.BackendDef {
	return runner.BackendDef{
		Name:           "docker",
		Summary:        "a Docker Engine (DOCKER_HOST, else the local socket): one container per trial",
		Reproduce:      Reproduce,
		ContainerArgs:  ContainerFlags,
		PolicyArgs:     RunFlags,
		PolicyArgsName: "docker run flags",
		Noun:           "Docker engine",
		ConnectFix:     "start the daemon (`sudo systemctl start docker` or `dockerd &`) or set DOCKER_HOST",
		CPUCap:         "Docker refuses more",
		Open: func(ctx context.Context, _ map[string]string) (runner.Platform, error) {
			return Open(ctx)
		},
	}
}

// OpenBuilder connects to the engine named by the environment as it is
// when it only builds images: the Kubernetes backend's builder
// (main_kube.go gives it kube.Definition), which builds here what the
// cluster then pulls or imports.
func OpenBuilder(ctx context.Context) (runner.ImageBuilder, error) {
	p, err := Open(ctx)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Platform is a connected Docker Engine.
type Platform struct {
	cli  *client.Client
	info runner.PlatformInfo
	// noFileMemo remembers, per engine (its ID and version), that it
	// refuses Harbor's open-files limit (Options.NoFileMemo).
	noFileMemo string
	// oomSpareMemo, the same for the driver's OOM score (Options.OOMSpareMemo).
	oomSpareMemo string
	// rootDir is the engine's data root, and disk where the disk knob's
	// limit acts (found on first use).
	rootDir  string
	diskOnce sync.Once
	disk     DiskTarget
}

// Open connects to the engine named by the environment and asks it what
// it is.
func Open(ctx context.Context) (*Platform, error) {
	cli, err := Connect()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := cli.Info(ctx)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker engine not reachable at %s: %v (`headroom doctor` says more)", cli.DaemonHost(), err)
	}
	p := &Platform{cli: cli, rootDir: info.DockerRootDir}
	p.info = runner.PlatformInfo{
		Backend:    "docker",
		Version:    info.ServerVersion,
		APIVersion: cli.ClientVersion(),
		Where:      cli.DaemonHost(),
		Details: map[string]string{
			"cgroup_version": info.CgroupVersion,
			"cgroup_driver":  info.CgroupDriver,
			"storage_driver": info.Driver,
			"os":             info.OperatingSystem,
			"userns":         strconv.FormatBool(slices.ContainsFunc(info.SecurityOptions, func(o string) bool { return strings.Contains(o, "name=userns") })),
		},
		Local: strings.HasPrefix(cli.DaemonHost(), "unix://"),
		Host:  runner.HostInfo{Kernel: info.KernelVersion, CPUs: info.NCPU, MemoryBytes: info.MemTotal},
	}
	if fs := backingFilesystem(info.DriverStatus); fs != "" {
		p.info.Details["backing_fs"] = fs
	}
	if dir, err := os.UserCacheDir(); err == nil && info.ID != "" {
		sum := sha256.Sum256([]byte(info.ID + "|" + info.ServerVersion + "|" + cli.DaemonHost()))
		p.noFileMemo = filepath.Join(dir, "headroom", "engine-nofile-refused-"+hex.EncodeToString(sum[:8]))
		p.oomSpareMemo = filepath.Join(dir, "headroom", "engine-oomscore-refused-"+hex.EncodeToString(sum[:8]))
	}
	h := &p.info.Host
	h.Hostname, _ = os.Hostname()
	if p.info.Local {
		if vm, err := mem.VirtualMemory(); err == nil {
			h.MemoryBytes = int64(vm.Total)
			h.AvailableBytesAtStart = int64(vm.Available)
		}
		if k, err := host.KernelVersion(); err == nil {
			h.Kernel = k
		}
	}
	if h.CPUs == 0 {
		h.CPUs = runtime.NumCPU()
	}
	return p, nil
}

// Client is the engine's client (for tests and tools in this package's
// family; session and cli speak to the Platform).
func (p *Platform) Client() *client.Client { return p.cli }

// Describe says what the engine is.
func (p *Platform) Describe() runner.PlatformInfo { return p.info }

// Close releases the client.
func (p *Platform) Close() error { return p.cli.Close() }

// WorkloadImage builds headroom's own image from exe when missing.
func (p *Platform) WorkloadImage(ctx context.Context, exe string, force bool, progress func(string)) (string, error) {
	return EnsureWorkloadImage(ctx, p.cli, exe, force, progress)
}

// WorkloadImageBuilt says whether exe's workload image is on the engine.
func (p *Platform) WorkloadImageBuilt(ctx context.Context, exe string) (string, bool, error) {
	return WorkloadImageBuilt(ctx, p.cli, exe)
}

// PrepareImage makes a task's image: the Debian images of the real tasks
// (debootstrap), a Dockerfile build cached by its context's digest, or a
// pull. The workload image is WorkloadImage's.
func (p *Platform) PrepareImage(ctx context.Context, t model.Task, force bool, progress func(string)) (string, error) {
	switch t.Image {
	case model.BuiltinDebian:
		return EnsureDebianImage(ctx, p.cli, force, progress)
	case model.BuiltinDebianCache:
		return EnsureDebianCacheImage(ctx, p.cli, force, progress)
	}
	return EnsureTaskImage(ctx, p.cli, t, progress)
}

// ImageReady says, building nothing, which image a task would run and
// whether it is on the engine.
func (p *Platform) ImageReady(ctx context.Context, t model.Task) (string, bool) {
	ref := t.Image
	switch t.Image {
	case model.BuiltinDebian:
		ref = DebianImage
	case model.BuiltinDebianCache:
		ref = DebianCacheImage
	}
	ok, err := imageExists(ctx, p.cli, ref)
	return ref, ok && err == nil
}

// PrepareSidecars makes each compose sidecar's image.
func (p *Platform) PrepareSidecars(ctx context.Context, t *model.Task, progress func(string)) error {
	return EnsureSidecarImages(ctx, p.cli, t, progress)
}

// ImageID is the engine's id of an image.
func (p *Platform) ImageID(ctx context.Context, ref string) (string, error) {
	ins, err := p.cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("image %s is not on this engine: build or pull it first (%v)", ref, err)
	}
	return ins.ID, nil
}

// ImageConfig is an image's ENTRYPOINT, CMD, USER and whether its ENV
// sets HOME (runner.ImageInspector: the Kubernetes backend runs a pod's
// steps as the image's USER by it).
func (p *Platform) ImageConfig(ctx context.Context, ref string) (runner.ImageConfig, error) {
	ins, err := p.cli.ImageInspect(ctx, ref)
	if err != nil {
		return runner.ImageConfig{}, fmt.Errorf("image %s is not on this engine: build or pull it first (%v)", ref, err)
	}
	var c runner.ImageConfig
	if ins.Config != nil {
		c = runner.ImageConfig{Entrypoint: ins.Config.Entrypoint, Cmd: ins.Config.Cmd, User: ins.Config.User, SetsHome: slices.ContainsFunc(ins.Config.Env, isHome)}
	}
	return c, nil
}

var _ runner.ImageInspector = (*Platform)(nil)

// Sandboxes subscribes to the engine's events and returns the backend
// that starts trials' containers.
func (p *Platform) Sandboxes(ctx context.Context, o runner.SandboxOptions) (runner.Backend, error) {
	healthWait, err := ImageHealthWaitFromEnv()
	if err != nil {
		return nil, err
	}
	driver, noDriver := p.driverBinary(o.Exe)
	return New(ctx, p.cli, Options{SampleEvery: o.SampleEvery, Keep: o.Keep, ForceStats: o.ForceStats, ExecSteps: o.ExecSteps, ApplyStorage: o.ApplyStorage, DriverBinary: driver, NoDriver: noDriver,
		ImageHealthWait: healthWait, HelperImage: o.HelperImage, Disk: p.Disk(), StorageDriver: p.info.Details["storage_driver"], BackingFilesystem: p.info.Details["backing_fs"], CgroupVersion: p.info.Details["cgroup_version"], NoFileMemo: p.noFileMemo, OOMSpareMemo: p.oomSpareMemo})
}

// Disk is where the disk knob's limit acts on this engine: the disk under
// its data root, found on this host (so only for a local engine).
func (p *Platform) Disk() DiskTarget {
	p.diskOnce.Do(func() {
		if !p.info.Local {
			p.disk = DiskTarget{Why: "the engine is not on this host, whose disks headroom would have to name"}
			return
		}
		p.disk = FindDiskTarget(p.rootDir, p.info.Details["storage_driver"])
		if p.disk.Device != "" {
			diskTarget.Store(p.disk)
		}
	})
	return p.disk
}

// CheckKnobs refuses the knobs this engine cannot apply to a task: a disk
// limit without a disk to throttle, network shaping without /dev/net/tun
// for the delay line.
func (p *Platform) CheckKnobs(t model.Task, cols []model.Ratio) error {
	for _, c := range cols {
		k := c.Knobs
		if (k.DiskBps > 0 || k.DiskIOPS > 0) && p.Disk().Device == "" {
			return fmt.Errorf("the disk knob (column %s) cannot be applied on this engine: %s", c, p.Disk().Why)
		}
		if (k.Latency > 0 || k.Jitter > 0 || k.LossPct > 0) && t.Network != "none" && p.info.Local {
			if _, err := os.Stat("/dev/net/tun"); err != nil {
				return fmt.Errorf("the latency, jitter and loss knobs (column %s) need /dev/net/tun on the engine's host for their delay line, which it lacks: load the tun module", c)
			}
		}
	}
	return nil
}

// driverBinary is exe (the in-container program) when task images can run
// their steps through it: the engine is local (the binary is mounted from
// this host) and the binary is static; else why not. A test binary
// standing in for the console (runner.WorkloadConsole) is not headroom's
// main, which is what dispatches to the driver by name.
func (p *Platform) driverBinary(exe string) (string, string) {
	switch {
	case !p.info.Local:
		return "", "the engine is on another machine, and the step driver is a file of this one, mounted into each container"
	case exe == "":
		return "", "headroom's in-container program (" + runner.WorkloadProgram + ") could not be found or built: `make build` builds it"
	case strings.HasSuffix(exe, ".test"):
		return "", "a test binary stands in for headroom's in-container program"
	}
	if err := CheckDriverBinary(exe); err != nil {
		return "", err.Error()
	}
	return exe, ""
}

// Owned lists headroom's containers, then the trials' networks and
// volumes (removed after the containers that use them).
func (p *Platform) Owned(ctx context.Context) ([]runner.OwnedResource, error) {
	list, err := p.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", runner.LabelHeadroom))})
	if err != nil {
		return nil, err
	}
	var out []runner.OwnedResource
	images := map[string]map[string]string{}
	for _, c := range list {
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, owned(c.ID, name, "container", c.State, ownLabels(ctx, p.cli, c.ImageID, c.Labels, images)))
	}
	res, err := listTrialResources(ctx, p.cli)
	for _, r := range res {
		out = append(out, owned(r.ID, r.Name, r.Kind, "", r.Labels))
	}
	return out, err
}

func owned(id, name, kind, state string, l map[string]string) runner.OwnedResource {
	check := runner.OwnerCheck(l[runner.LabelOwner])
	return runner.OwnedResource{ID: id, Name: name, Kind: kind, State: state, Experiment: l[runner.LabelExperiment], Trial: l[runner.LabelTrial], Build: l[runner.LabelBuild], Root: l[runner.LabelExperimentsRoot],
		Kept: l[runner.LabelKept] != "", Owner: l[runner.LabelOwner], OwnerAlive: check.Alive, OwnerCheck: check}
}

// Remove removes a container (forcibly), a network or a volume. A network
// or volume still in use is left for a later pass, not an error.
func (p *Platform) Remove(ctx context.Context, o runner.OwnedResource) error {
	var err error
	switch o.Kind {
	case "container":
		err = p.cli.ContainerRemove(ctx, o.ID, removeOptions)
		// A removal already under way (the run that died had asked for it
		// just before) ends the same way.
		if IsGone(err) || (cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress")) {
			err = nil
		}
	default:
		err = removeTrialResource(ctx, p.cli, TrialResource{Kind: o.Kind, ID: o.ID, Name: o.Name})
	}
	if err != nil && !errors.Is(err, runner.ErrInUse) {
		return fmt.Errorf("remove %s %s: %w", o.Kind, o.Name, err)
	}
	return err
}

// Shell is `docker exec -it ID sh`, named as the console's own
// (ConsoleShell) in the engine's exec event, which the trial's record
// then says.
func (p *Platform) Shell(id string) ([]string, error) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		return nil, fmt.Errorf("the docker CLI is not installed")
	}
	argv := []string{docker, "exec", "-it"}
	// As the trial's steps run: where its step driver runs as root, they
	// run as the user its label names.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if info, err := p.cli.ContainerInspect(ctx, id); err == nil && info.Config != nil && info.Config.Labels[runner.LabelStepUser] != "" {
		argv = append(argv, "-u", info.Config.Labels[runner.LabelStepUser])
	}
	return append(argv, id, "sh", "-c", "exec sh", ConsoleShell), nil
}

// ConsoleShell is the console's shell's name ($0 of its `sh -c`), which
// the engine's exec event carries: a shell the user opened with the
// console's s key, told apart from someone else's exec in the record.
// Either runs inside the trial, so either makes it not the task's
// evidence.
const ConsoleShell = "headroom-console-shell"

// Reproduce is the `docker run` with the policy's effect, the container
// set up as the trial's is (ContainerFlags).
// A trial with a network has one of its own, as the command makes it
// first (a trial-only one internal).
func Reproduce(t model.Task, image string, p model.ResourcePolicy) string {
	flags := append(ContainerFlags(t), RunFlags(p)...)
	cmd := "docker run " + strings.Join(append(flags, diskMountFlags(t, image, p.Ratio.Knobs)...), " ") + " " + printable.ShellWord(image)
	if own := reproNetworkCreate(t); own != "" {
		cmd = own + " && " + cmd
	}
	if more := knobCommands(p.Ratio.Knobs); len(more) > 0 {
		cmd += "; then " + strings.Join(more, "; ")
	}
	return cmd
}

// ContainerFlags are the `docker run` flags of the task's container that
// are the same at every ratio, as the backend sets them (backend.go's
// create): the network, the user, and the profile's capabilities —
// hardened: every one dropped but the task's, no privilege gain; harbor:
// the engine's default set and Harbor's open-files limit; its compose
// host name; an empty volume at each of its harness's mounts. A task
// without a name (not known) gets the network alone.
func ContainerFlags(t model.Task) []string {
	if t.Name == "" {
		return []string{"--network none"}
	}
	var f []string
	switch {
	case reproNetworkCreate(t) != "":
		// A bridge of the trial's own (a phase that wants the network
		// while the task has none: detached until then), never the
		// engine's default one, where other containers are.
		f = append(f, "--network "+reproNetwork)
	case t.Network != "":
		f = append(f, "--network "+printable.ShellWord(t.Network))
	}
	if t.User != "" {
		f = append(f, "--user "+printable.ShellWord(t.User))
	}
	if t.Hostname != "" {
		f = append(f, "--hostname "+printable.ShellWord(t.Hostname))
	}
	// The steps' working directory and environment: without them the
	// command was not the container the trial ran in (the twenty-eighth
	// attacker's 7). A variable passed from the host is named, its value
	// taken from the shell the command is run in, never written here.
	if t.WorkDir != "" {
		f = append(f, "--workdir "+printable.ShellWord(t.WorkDir))
	}
	for _, kv := range t.Env {
		f = append(f, "--env "+printable.ShellWord(kv))
	}
	for _, e := range t.PassEnv {
		name, host := model.PassEnvNames(e)
		if name == host || !shellName.MatchString(host) {
			// A name that is no shell variable's (from a record made
			// elsewhere) is never put inside double quotes, where the
			// shell would run what it holds.
			f = append(f, "--env "+printable.ShellWord(name))
		} else {
			f = append(f, "--env "+printable.ShellWord(name)+`="$`+host+`"`)
		}
	}
	for _, at := range t.HarnessMounts {
		// An empty volume where the harness mounts its host's directory.
		f = append(f, "--mount "+printable.ShellWord("type=volume,dst="+at+",volume-nocopy"))
	}
	if t.Hardened() {
		f = append(f, "--cap-drop ALL")
	}
	for _, c := range t.Capabilities {
		f = append(f, "--cap-add "+printable.ShellWord(c))
	}
	if t.Hardened() {
		f = append(f, "--security-opt no-new-privileges")
	} else {
		f = append(f, fmt.Sprintf("--ulimit nofile=%d:%d", model.HarborNoFile, model.HarborNoFile))
	}
	return f
}

// shellName is a name a shell's "$NAME" expands and nothing more.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reproNetwork names the network a reproduce command makes for its
// container: a trial's own bridge has the trial's name, gone with it.
const reproNetwork = "headroom-repro"

// reproNetworkCreate is the command that makes the network of the trial's
// own that its container joins ("" when it joins none or is given one):
// for a trial-only network an internal bridge with no address on the
// host (trialNetworkOptions' closed network). Where the trial's container
// joins a closed network and an egress one of its own (mainEgress), the
// egress is what it reaches out by: a bridge of its own.
func reproNetworkCreate(t model.Task) string {
	switch {
	case t.Name == "":
		return ""
	case t.Network == model.NetworkTrialOnly:
		return "docker network create --internal -o " + noGatewayOption + "=true " + reproNetwork
	case ownBridge(t.Network), t.Network == "none" && t.PhaseWantsNetwork():
		return "docker network create " + reproNetwork
	}
	return ""
}

// RunFlags are the `docker run` flags with the policy's effect.
func RunFlags(p model.ResourcePolicy) []string {
	// Said from the engine's settings the trial is created with, so that
	// the flags shown are the settings given (one translation of a
	// policy, policyResources, not two to keep in step).
	r := policyResources(p)
	var f []string
	if r.Memory > 0 {
		f = append(f, "--memory="+strconv.FormatInt(r.Memory, 10),
			"--memory-swap="+strconv.FormatInt(r.MemorySwap, 10))
	}
	f = append(f, "--memory-reservation="+strconv.FormatInt(r.MemoryReservation, 10))
	if r.NanoCPUs > 0 {
		f = append(f, "--cpus="+strconv.FormatFloat(float64(r.NanoCPUs)/1e9, 'f', -1, 64))
	}
	f = append(f, fmt.Sprintf("--cpu-shares=%d", r.CPUShares))
	if r.PidsLimit != nil {
		f = append(f, fmt.Sprintf("--pids-limit=%d", *r.PidsLimit))
	}
	return append(f, knobFlags(p.Ratio.Knobs)...)
}

// policyResources is a policy as the engine's settings for the trial's
// container: the guarantee as a reservation and CPU shares, the hard
// limit as memory with swap at the same figure (without it the engine
// silently allows swap of twice the limit), the CPU limit, the pids
// limit. The container's create and RunFlags both read it.
func policyResources(p model.ResourcePolicy) container.Resources {
	res := container.Resources{MemoryReservation: p.GuaranteeBytes, CPUShares: cpuShares(p)}
	if p.PidsLimit > 0 {
		pids := p.PidsLimit
		res.PidsLimit = &pids
	}
	if p.HardLimitBytes > 0 {
		res.Memory, res.MemorySwap = p.HardLimitBytes, p.HardLimitBytes
	}
	if p.LimitCPUs > 0 {
		res.NanoCPUs = nanoCPUs(p)
	}
	return res
}

// cpuShares weights CPU by the guarantee (1024 per guaranteed CPU; at
// least 2, the kernel's floor).
func cpuShares(p model.ResourcePolicy) int64 {
	return max(int64(math.Round(p.GuaranteeCPUs*1024)), 2)
}

// nanoCPUs is the engine's CPU limit (0: none).
func nanoCPUs(p model.ResourcePolicy) int64 { return int64(math.Round(p.LimitCPUs * 1e9)) }

// Doctor checks the engine, cgroups, the workload image, and starts one
// tiny container to prove that limits apply and cgroups can be read. It
// builds no image (a build would also move the workload image's tag).
func (p *Platform) Doctor(ctx context.Context, exe string) []runner.Check {
	var out []runner.Check
	check := func(ok bool, name, info, fix string) {
		out = append(out, runner.Check{OK: ok, Name: name, Info: info, Fix: fix})
	}
	note := func(name, info string) { out = append(out, runner.Check{OK: true, Note: true, Name: name, Info: info}) }
	i := p.info
	check(true, "engine", fmt.Sprintf("Docker %s, API %s (negotiated), %s", i.Version, i.APIVersion, i.Details["os"]), "")
	check(true, "cgroups", fmt.Sprintf("v%s, %s driver", i.Details["cgroup_version"], i.Details["cgroup_driver"]), "")
	warn := func(name, info string) { out = append(out, runner.Check{OK: true, Warn: true, Name: name, Info: info}) }
	// What the host does not charge to a trial's limits (the tenth
	// attacker's items 4 and 5): a task can use more than its ratio gives
	// it, and its record cannot show it.
	if i.Details["cgroup_version"] == "1" {
		warn("socket memory", "cgroup v1 does not charge a container's TCP and UDP socket buffers to its memory limit (402 MiB held at a 64 MiB limit, the recorded peak 8.7 MiB): a task can exceed its ratio's memory that way, and its score and peak not show it; cgroup v2 charges them")
	}
	if i.Details["userns"] == "false" {
		warn("per-user counters", "the engine does not remap users (no userns-remap): every trial's root is the host's uid 0, and the kernel's per-user counters (inotify instances, pending signals, POSIX message queue bytes, pipe pages) are shared by every trial and every root process on the host; a trial that exhausts one fails its neighbour's step, recorded as the neighbour's own failure, so a score can move with what runs beside it (run such a task at --concurrency 1, or enable userns-remap; Harbor's containers share them the same way)")
	}
	if i.Details["storage_driver"] == "fuse-overlayfs" {
		warn("file-system work", "the fuse-overlayfs storage driver does a task's file-system work in a daemon outside the container's cgroup (2x the CPU limit was measured, recorded nowhere): a file-heavy task gets more CPU than its ratio, so its score is above what its limit alone gives; overlay2 does that work in the task's own cgroup")
	}
	// A task's storage (storage_mb): held where the driver can size a
	// container (storage.go), which overlay2 learns at the first refusal.
	if _, why := storageBound(1, i.Details["storage_driver"], i.Details["backing_fs"], nil); why != "" {
		note("storage", "a task's storage_mb is not bounded (as under Harbor's Docker environment), and run --apply-storage could not bound it here: "+why+"; each trial's record says what it wrote (its container's layer) and when that was more")
	} else {
		note("storage", "a task's storage_mb is not bounded (as under Harbor's Docker environment); run --apply-storage holds each container to it here, where the engine accepts it (overlay2 needs xfs with pquota: a refusal is learnt at the first trial and said in the records)")
	}
	tag, built, err := p.WorkloadImageBuilt(ctx, exe)
	if err != nil {
		check(false, "workload image", err.Error(), "build headroom with `make build` (CGO_ENABLED=0) and run `headroom images build`")
		return out
	}
	if !built {
		if tag == "" {
			tag = "the " + runner.WorkloadProgram + " program and its image:"
		}
		note("workload image", tag+" not built yet: the first run (or `headroom images build`) builds it from this headroom; doctor builds nothing")
		note("container checks", "skipped until that image exists: run `headroom images build`, then `headroom doctor`")
		return out
	}
	check(true, "workload image", tag, "")
	b, err := New(ctx, p.cli, Options{})
	if err != nil {
		check(false, "events", err.Error(), "")
		return out
	}
	defer b.Close()
	task := model.Task{Name: "doctor", Image: tag, Resources: model.Resources{CPUs: 0.5, MemoryBytes: 32 * model.MiB, PidsLimit: 64}, Network: "none",
		IdleCommand: []string{wire.Binary, wire.IdleMode}}
	tr := model.Trial{ID: "doctor", Task: "doctor", Ratio: model.Ratio{K: 1}, Policy: model.NewPolicy(task.Resources, model.Ratio{K: 1}, i.Host.CPUs)}
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: "doctor", Trial: tr, Task: task})
	if err != nil {
		check(false, "container", err.Error(), "")
		return out
	}
	info, ierr := p.cli.ContainerInspect(ctx, sb.ID())
	src := sb.SampleSource()
	// A driven container's limit is the ratio's and the driver's own
	// (model.DriverMemoryBytes): read back as anything else, doctor
	// failed every engine since the allowance came in.
	want := tr.Policy.HardLimitBytes
	if sb.StepRunner() == runner.StepsByDriver {
		want += model.DriverMemoryBytes
	}
	_, rmErr := sb.Remove(context.Background())
	check(ierr == nil && info.HostConfig.Memory == want && info.HostConfig.MemorySwap == want,
		"limits applied", "memory, swap and reservation read back from docker inspect", "the engine ignored the memory limit: enable the memory cgroup controller")
	if b.ReadsKernelLog() {
		check(true, "kernel log", "readable: OOM kills name the killed process", "")
	} else {
		note("kernel log", "not readable (run as root on the engine's host to name killed processes); kills are still caught")
	}
	check(src != "docker-stats", "memory sampling", src,
		"cgroup files unreadable (remote engine or unusual mount): headroom falls back to the 1 Hz stats stream, which misses short spikes; run headroom on the engine's host")
	var have []string
	for _, ref := range []string{DebianImage, DebianCacheImage} {
		if ok, _ := imageExists(ctx, p.cli, ref); ok {
			have = append(have, ref)
		}
	}
	if len(have) == 2 {
		check(true, "real-task images", strings.Join(have, ", "), "")
	} else {
		how := "`make real-images` (needs root and debootstrap"
		if _, err := exec.LookPath("debootstrap"); err != nil {
			how += ", which is not installed: `apt-get install debootstrap`"
		}
		note("real-task images", "not made yet; the real/* tasks and Dockerfiles FROM "+DebianImage+" need them: "+how+")")
	}
	check(rmErr == nil, "cleanup", "test container removed", "run `headroom clean`")
	// What the knobs need (docs/KNOBS.md): a disk to throttle, a tap
	// device for the delay line.
	if d := p.Disk(); d.Device != "" {
		where := "the container's root file system"
		if !d.RootThrottled {
			where = "a volume at the trial's working directory (the " + i.Details["storage_driver"] + " root file system is written from outside the container's cgroup)"
		}
		note("disk knob", "limits act on "+d.Device+", for "+where)
	} else {
		note("disk knob", "refused on this engine: "+d.Why)
	}
	if _, err := os.Stat("/dev/net/tun"); err == nil || !i.Local {
		note("network knobs", "shaped in each trial's network namespace by a helper container (tbf; a delay line for latency, jitter and loss)")
	} else {
		note("network knobs", "latency, jitter and loss refused: the host has no /dev/net/tun for their delay line (load the tun module); bandwidth works")
	}
	// Whether a kill can take headroom's step driver (model.CauseDriverKilled):
	// known once a run has tried (Options.OOMSpareMemo).
	if _, err := os.Stat(p.oomSpareMemo); p.oomSpareMemo != "" && err == nil {
		note("step driver", "not spared by the OOM killer: this engine refuses --oom-score-adj=-1000 (its runtime lacks CAP_SYS_RESOURCE, or it is rootless); a kill at a trial's limit can take the driver too, and that trial is driver-killed, not graded (a resume reruns it)")
	}
	// Where a task image's steps cannot be the driver's for headroom's
	// own reason (a binary that is not static, a remote engine): each
	// trial's record says so too (step_runner_why).
	if _, why := p.driverBinary(exe); exe != "" && why != "" {
		note("step driver", "task images' steps take the engine's exec, not headroom's step driver: "+why)
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", "cgroup.controllers")); err == nil && i.Details["cgroup_version"] == "1" && i.Local {
		check(false, "cgroup view", "engine says v1 but this host mounts v2", "run headroom on the engine's host")
	}
	return out
}
