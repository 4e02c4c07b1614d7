package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Platform is the port a backend implements: the place trials run (a
// Docker Engine, a Kubernetes cluster) and everything headroom asks of it
// outside a trial. session and cli speak to this alone; adding a backend
// is one package that implements it plus one Register line.
type Platform interface {
	// Describe says what the platform is and what it holds, for the
	// manifest, doctor and capacity.
	Describe() PlatformInfo

	// ImageBuilder: the images its trials run, made where they run.
	ImageBuilder
	// PrepareSidecars makes the image of each compose sidecar of the task,
	// naming the prepared image in the task.
	PrepareSidecars(ctx context.Context, task *model.Task, progress func(string)) error

	// Sandboxes opens the backend that starts trials' sandboxes.
	Sandboxes(ctx context.Context, opts SandboxOptions) (Backend, error)

	// Owned lists what headroom made on the platform (containers, pods,
	// networks, volumes), labelled with their experiment and trial.
	Owned(ctx context.Context) ([]OwnedResource, error)
	// Remove removes one of them (gone already is not an error).
	Remove(ctx context.Context, o OwnedResource) error

	// Shell is the command that opens an interactive shell in a running
	// trial's sandbox (by Sandbox.ID).
	Shell(sandboxID string) ([]string, error)

	// Doctor checks what a sweep needs of the platform, one line each.
	Doctor(ctx context.Context, exe string) []Check

	// Close releases the platform's clients.
	Close() error
}

// ImageBuilder makes the images trials run: headroom's own and the
// tasks'. A platform is one for its own sandboxes (the Docker engine
// builds where its containers run); a backend whose sandboxes run
// elsewhere (a cluster's pods) is given one at registration (the local
// Docker engine's, docker.OpenBuilder) and moves what it built to where
// the sandboxes run.
type ImageBuilder interface {
	// WorkloadImage makes sure headroom's own image (the built-in tasks'
	// workload and step driver) is where trials can run it, building it
	// from exe (the in-container program, runner.WorkloadBinary) when
	// missing or force; it returns the reference trials use.
	WorkloadImage(ctx context.Context, exe string, force bool, progress func(string)) (string, error)
	// WorkloadImageBuilt says whether that image is there, building nothing
	// (exe "": the program itself is still to be built, so the image is too).
	WorkloadImageBuilt(ctx context.Context, exe string) (ref string, built bool, err error)
	// PrepareImage makes a task's image available (a built-in name, a
	// Dockerfile build, a pull or a push) and returns the reference its
	// trials run; force remakes a built-in image that exists.
	PrepareImage(ctx context.Context, task model.Task, force bool, progress func(string)) (string, error)
	// ImageReady says, preparing nothing, which image a task would run
	// and whether it is there already.
	ImageReady(ctx context.Context, task model.Task) (ref string, ready bool)
	// ImageID is a prepared image's id where it was built (an error
	// naming the reference when it is not there).
	ImageID(ctx context.Context, ref string) (string, error)

	// Close releases the builder's clients.
	Close() error
}

// ImageConfig is what an image says of how its container runs: what a
// backend that cannot inspect where its sandboxes run (a cluster's node)
// needs to run them as the engine would.
type ImageConfig struct {
	Entrypoint, Cmd []string
	// User is its USER ("" for root).
	User string
	// SetsHome: its ENV sets HOME (a step run as another user keeps it).
	SetsHome bool
}

// ImageInspector is an ImageBuilder that can say a built image's config
// (the local Docker engine's).
type ImageInspector interface {
	ImageConfig(ctx context.Context, ref string) (ImageConfig, error)
}

// OpenImageBuilder connects to an ImageBuilder, when one is first needed.
type OpenImageBuilder func(ctx context.Context) (ImageBuilder, error)

// PlatformInfo is what a platform says about itself.
type PlatformInfo struct {
	// Backend is the registered name ("docker", "kubernetes").
	Backend string
	// Version and APIVersion are the engine's or cluster's.
	Version, APIVersion string
	// Where names the endpoint (a socket, an API server and namespace).
	Where string
	// Details are backend-specific facts for the manifest (cgroup
	// version and driver, storage driver, OS, node names...).
	Details map[string]string
	// Host is the machine (or the largest node) trials run on.
	Host HostInfo
	// Local says the trials run on this machine, so this machine's memory
	// and load are theirs (admission and the noise readings use them).
	Local bool
	// AdmitsItself says the platform admits trials by their guarantees on
	// its own (Kubernetes' scheduler): headroom then only caps how many
	// run at once, and a trial that cannot be placed waits there.
	AdmitsItself bool
}

// HostInfo is the machine trials run on.
type HostInfo struct {
	Hostname              string
	Kernel                string
	CPUs                  int
	MemoryBytes           int64
	AvailableBytesAtStart int64
}

// SandboxOptions tune a platform's trial sandboxes.
type SandboxOptions struct {
	// SampleEvery is the memory sampling period (default 50 ms: 20 Hz).
	SampleEvery time.Duration
	// Keep leaves finished trials' sandboxes for inspection.
	Keep bool
	// ForceStats samples through the platform's stats API instead of the
	// cgroup files.
	ForceStats bool
	// ExecSteps runs every step with the platform's exec, never the step
	// driver.
	ExecSteps bool
	// ApplyStorage holds each trial's container to its task's storage
	// where the engine can size one (Harbor's Docker environment never
	// does: off by default, as there).
	ApplyStorage bool
	// Exe is the in-container program (runner.WorkloadBinary: the step
	// driver and probe where the platform can use it; "" when it cannot be).
	Exe string
	// HelperImage is headroom's workload image, for the knobs' helper
	// and neighbour containers ("" when the sweep turns none).
	HelperImage string
}

// KnobChecker is a platform that can say, before a sweep starts, which
// of its columns' knobs it cannot apply to a task: such a sweep is
// refused rather than run with a knob silently doing nothing.
type KnobChecker interface {
	CheckKnobs(task model.Task, cols []model.Ratio) error
}

// OwnedResource is one resource headroom made on a platform and still owns (a
// container, pod, network or volume, labelled with its experiment, trial
// and owning process): what Platform.Owned lists for the reaper, `headroom
// clean` and the console's list of what it reaped, and what Platform.Remove
// takes.
type OwnedResource struct {
	ID, Name          string
	Kind              string // "container", "pod", "network", "volume"...
	Experiment, Trial string
	// Build is the image a build's own network was made for (LabelBuild):
	// no experiment's or trial's. Root is the experiments root of the run
	// it was built for (LabelExperimentsRoot; "" when none).
	Build, Root string
	State       string
	// Kept: left on purpose (--keep); only `headroom clean` removes it.
	Kept bool
	// Owner is the headroom process that made it ("host:pid:start") and
	// OwnerAlive whether that process still runs; OwnerCheck is the
	// check's evidence and time (OwnerCheck), which a removal logs.
	Owner      string
	OwnerAlive bool
	OwnerCheck OwnerStatus
	// Removed is when a reaper or clean removed it (zero: not removed).
	Removed time.Time
}

// Check is one doctor line: ok or not, what was found, and what to do.
type Check struct {
	OK   bool
	Note bool // informational: neither a pass nor a failure
	// Warn: nothing is broken, but what it says changes what a score
	// taken here means (doctor's "warn").
	Warn       bool
	Name, Info string
	Fix        string
}

// PlatformOption is one setting a backend takes (a flag on the commands
// that connect: --kubeconfig, --namespace...).
type PlatformOption struct {
	Name, Usage, Default string
}

// BackendDef registers a backend: its name, its settings and how to
// connect to it.
type BackendDef struct {
	Name    string
	Summary string
	Options []PlatformOption
	// Reproduce is the command that runs a task's image under a policy
	// outside headroom (docker run flags, a pod's resources), with the
	// container set up as the task's profile sets it (user, capabilities,
	// no privilege gain); it needs no connection, so `tasks show` can
	// print it. A task without a name (not known) gives the policy alone.
	Reproduce func(t model.Task, image string, p model.ResourcePolicy) string
	// ContainerArgs are the backend's own settings for the task's
	// container, the same at every ratio (--user, --cap-drop ...), for
	// people; nil shows none.
	ContainerArgs func(t model.Task) []string
	// PolicyArgs are the backend's own settings for a policy (docker run
	// flags; a pod's requests and limits), for people.
	PolicyArgs func(p model.ResourcePolicy) []string
	// PolicyArgsName names them ("docker run flags", "pod resources").
	PolicyArgsName string
	// Noun names the platform in a sentence ("Docker engine",
	// "kubernetes cluster").
	Noun string
	// ConnectFix says what to do when it does not answer (doctor).
	ConnectFix string
	// Places says its scheduler places the trials on nodes of their own:
	// this host's load is not theirs, headroom's --reserve does not
	// apply, and what a trial may have is the node's, read on connect.
	Places bool
	// CPUCap says why a CPU limit above the host's CPUs is capped ("Docker
	// refuses more").
	CPUCap string
	// Open connects with the settings (by option name; unset ones hold
	// their defaults).
	Open func(ctx context.Context, settings map[string]string) (Platform, error)
}

var registry struct {
	sync.Mutex
	defs map[string]BackendDef
}

// Register makes a backend available by name (main registers them all).
func Register(d BackendDef) {
	registry.Lock()
	defer registry.Unlock()
	if registry.defs == nil {
		registry.defs = map[string]BackendDef{}
	}
	registry.defs[d.Name] = d
}

// Backends lists the registered backends by name.
func Backends() []BackendDef {
	registry.Lock()
	defer registry.Unlock()
	var out []BackendDef
	for _, d := range registry.defs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// BackendNames lists the registered backends' names, sorted.
func BackendNames() []string {
	var names []string
	for _, d := range Backends() {
		names = append(names, d.Name)
	}
	return names
}

// Open connects to the named backend with settings (missing ones take
// the option's default).
func Open(ctx context.Context, name string, settings map[string]string) (Platform, error) {
	registry.Lock()
	d, ok := registry.defs[name]
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("no backend %q: use one of %s", name, strings.Join(BackendNames(), ", "))
	}
	s := map[string]string{}
	for _, o := range d.Options {
		s[o.Name] = o.Default
	}
	for k, v := range settings {
		if v == "" {
			continue
		}
		if !slices.ContainsFunc(d.Options, func(o PlatformOption) bool { return o.Name == k }) {
			continue // another backend's setting
		}
		s[k] = v
	}
	return d.Open(ctx, s)
}

// Lookup finds a registered backend by name.
func Lookup(name string) (BackendDef, bool) {
	registry.Lock()
	defer registry.Unlock()
	d, ok := registry.defs[name]
	return d, ok
}

// ReproduceWith is the named backend's command that runs an image under a
// policy outside headroom ("" when the backend says none).
func ReproduceWith(backend string, t model.Task, image string, p model.ResourcePolicy) string {
	if d, ok := Lookup(backend); ok && d.Reproduce != nil {
		return d.Reproduce(t, image, p)
	}
	return ""
}

// ErrInUse is what Platform.Remove says of a network or volume something
// still uses: a later pass removes it.
var ErrInUse = errors.New("still in use")

// SettingError is a backend setting that cannot be right whatever the
// platform says (a namespace name Kubernetes refuses): a usage error.
type SettingError struct{ Err error }

func (e SettingError) Error() string { return e.Err.Error() }
func (e SettingError) Unwrap() error { return e.Err }
