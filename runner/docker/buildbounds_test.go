package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distribution/reference"
	"github.com/headroom-eval/headroom/model"
)

// A task's Dockerfile is built by the classic builder wherever it parses
// (only it takes a network of the build's own and a memory bound), with
// no network for a task with none and a bridge of its own for a task with
// one; a Dockerfile only BuildKit builds gets no network unless the run
// says --build-network, and then the engine's bridge, never silently. On
// main every build had the engine's default bridge and no bound.
func TestPlanBuild(t *testing.T) {
	kit := Builder{Name: BuilderBuildKit}
	old := Builder{Name: BuilderClassic, Reason: "the engine's API 1.38 is older than 1.39"}
	heredoc := "Dockerfile:3: heredoc in RUN"
	workdir := "Dockerfile:3: WORKDIR /app under USER nobody: BuildKit makes the directory the user's, the classic builder root's"
	for _, c := range []struct {
		name     string
		engine   Builder
		network  string
		build    model.Build
		memory   int64
		builder  string
		net      string
		bound    int64
		unbounds bool
	}{
		{"no network", kit, "none", model.Build{}, 128 * model.MiB, BuilderClassic, model.BuildNetworkNone, 2048 * model.MiB, false},
		{"trial-only", kit, model.NetworkTrialOnly, model.Build{}, 0, BuilderClassic, model.BuildNetworkNone, 2048 * model.MiB, false},
		{"network", kit, "bridge", model.Build{}, 4096 * model.MiB, BuilderClassic, model.BuildNetworkOwn, 4096 * model.MiB, false},
		{"network unset", kit, "", model.Build{}, 0, BuilderClassic, model.BuildNetworkOwn, 2048 * model.MiB, false},
		{"no network, --build-network", kit, "none", model.Build{WithNetwork: true}, 0, BuilderClassic, model.BuildNetworkOwn, 2048 * model.MiB, false},
		{"--build-memory 512M", kit, "none", model.Build{MemoryBytes: 512 * model.MiB}, 4096 * model.MiB, BuilderClassic, model.BuildNetworkNone, 512 * model.MiB, false},
		{"--build-memory none", kit, "none", model.Build{MemoryBytes: -1}, 0, BuilderClassic, model.BuildNetworkNone, 0, false},
		{"engine without BuildKit", old, "bridge", model.Build{}, 0, BuilderClassic, model.BuildNetworkOwn, 2048 * model.MiB, false},
		{"heredoc, network", kit, "bridge", model.Build{NeedsBuildKit: heredoc}, 0, BuilderBuildKit, model.BuildNetworkNone, 0, true},
		{"heredoc, no network", kit, "none", model.Build{NeedsBuildKit: heredoc}, 0, BuilderBuildKit, model.BuildNetworkNone, 0, true},
		{"heredoc, --build-network", kit, "none", model.Build{NeedsBuildKit: heredoc, WithNetwork: true}, 0, BuilderBuildKit, model.BuildNetworkEngine, 0, true},
		// Built otherwise by the classic builder: BuildKit, as Harbor,
		// where that costs no network; else the classic builder, saying so.
		{"differs, no network", kit, "none", model.Build{ClassicDiffers: workdir}, 0, BuilderBuildKit, model.BuildNetworkNone, 0, true},
		{"differs, network", kit, "bridge", model.Build{ClassicDiffers: workdir}, 0, BuilderClassic, model.BuildNetworkOwn, 2048 * model.MiB, false},
		{"differs, --build-network", kit, "bridge", model.Build{ClassicDiffers: workdir, WithNetwork: true}, 0, BuilderBuildKit, model.BuildNetworkEngine, 0, true},
		{"differs, engine without BuildKit", old, "none", model.Build{ClassicDiffers: workdir}, 0, BuilderClassic, model.BuildNetworkNone, 2048 * model.MiB, false},
	} {
		task := model.Task{Name: "t", Network: c.network, Resources: model.Resources{MemoryBytes: c.memory}}
		p := planBuild(c.engine, task, c.build)
		if p.Builder.Name != c.builder || p.Network != c.net || p.Memory != c.bound || (p.Unbounded != "") != c.unbounds {
			t.Errorf("%s: planBuild = builder %s, network %q, memory %d, unbounded %q; want %s, %q, %d, unbounded %v",
				c.name, p.Builder.Name, p.Network, p.Memory, p.Unbounded, c.builder, c.net, c.bound, c.unbounds)
		}
		if c.build.ClassicDiffers != "" && c.engine.Name == BuilderBuildKit && !strings.Contains(p.Builder.Reason+p.Unbounded, workdir) {
			t.Errorf("%s: the build does not say what the classic builder builds otherwise: %q %q", c.name, p.Builder.Reason, p.Unbounded)
		}
		if c.engine.Name == BuilderClassic && p.Builder.Reason != c.engine.Reason {
			t.Errorf("%s: the engine's own reason %q became %q", c.name, c.engine.Reason, p.Builder.Reason)
		}
		if mode := p.networkMode("headroom-build-x"); (p.Network == model.BuildNetworkOwn) != (mode == "headroom-build-x") || mode == "" || mode == "bridge" {
			t.Errorf("%s: network %q asks the engine for network mode %q", c.name, p.Network, mode)
		}
	}
}

// An image built with a network is not the image built without one: the
// tag differs, so neither is reused as the other.
func TestTaskImageTagByBuildNetwork(t *testing.T) {
	b := model.Build{Context: t.TempDir(), Dockerfile: "Dockerfile", Inline: "FROM scratch\n"}
	tags := map[string]string{}
	for _, n := range []string{"", model.BuildNetworkNone, model.BuildNetworkOwn, model.BuildNetworkEngine} {
		b.Network = n
		tag, err := TaskImageTag(context.Background(), "t", b)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := tags[tag]; dup {
			t.Errorf("build network %q and %q have the same tag %s", n, other, tag)
		}
		tags[tag] = n
	}
}

// A build killed at its memory bound says so, with the task, the bound
// and what lifts it; a failed RUN of a build without a network says why
// it had none and names --build-network; other failures are left as
// they are.
func TestExplainBounds(t *testing.T) {
	run := errors.New("The command '/bin/sh -c apt-get update' returned a non-zero code: 100")
	none := buildPlan{Task: "tb/fetches", Network: model.BuildNetworkNone, TaskNoNetwork: true, Memory: 2048 * model.MiB}
	for _, c := range []struct {
		name string
		plan buildPlan
		err  error
		oom  bool
		want []string
	}{
		{"oom", none, errors.New("The command '/bin/sh -c python3 big.py' returned a non-zero code: 137"), true,
			[]string{"the build of task tb/fetches was killed at its memory bound 2GiB", "--build-memory 4GiB", "--build-memory none", "big.py"}},
		{"no network", none, run, false,
			[]string{"the build of task tb/fetches had no network, because the task has none", "allow_internet = false", "--build-network", "apt-get update"}},
		{"buildkit, no network", buildPlan{Task: "tb/heredoc", Network: model.BuildNetworkNone, NeedsBuildKit: "Dockerfile:3: heredoc in RUN"},
			errors.New(`process "/bin/sh -c apt-get update" did not complete successfully: exit code: 100`), false,
			[]string{"the build of task tb/heredoc had no network, because its Dockerfile needs BuildKit (Dockerfile:3: heredoc in RUN)", "--build-network", "engine's default bridge"}},
	} {
		got := c.plan.explainBounds(c.err, c.oom).Error()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q\nlacks %q", c.name, got, w)
			}
		}
	}
	if got := none.explainBounds(run, false); !errors.Is(got, run) || !strings.HasPrefix(got.Error(), run.Error()+"; ") {
		t.Errorf("%q: the RUN step's own failure must come first", got)
	}
	for _, err := range []error{errors.New("pull access denied for nosuch"), errors.New("dockerfile parse error line 3: unknown instruction: EOF")} {
		if got := none.explainBounds(err, false); got != err {
			t.Errorf("%v became %v: only a failed RUN step is a build without a network", err, got)
		}
	}
	own := buildPlan{Task: "x", Network: model.BuildNetworkOwn}
	if got := own.explainBounds(run, false); got != run {
		t.Errorf("a build with a network of its own: %v became %v", run, got)
	}
}

// The classic build's progress is followed for the RUN containers it
// starts, whose OOM events are the build's.
func TestStepTracker(t *testing.T) {
	var s stepTracker
	for _, l := range []string{"Step 1/3 : FROM headroom-debian:bookworm", "---> 0123456789ab", "Step 3/3 : RUN python3 -c 'x'", "---> Running in f18058fd3442", "allocated"} {
		s.line(l)
	}
	if len(s.ids) != 1 || s.ids[0] != "f18058fd3442" {
		t.Errorf("tracked ids %v, want [f18058fd3442]", s.ids)
	}
}

// The classic builder gets the context as headroom tars it, so the
// context's .dockerignore is applied there, as the docker CLI applies it
// and BuildKit's frontend does: a Dockerfile that BuildKit built
// before builds the same files now. The Dockerfile and .dockerignore
// always go.
func TestTarContextHonoursDockerignore(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		".dockerignore":   "# comment\nsecrets\n*.log\n!keep.log\nDockerfile\n",
		"Dockerfile":      "FROM scratch\n",
		"app/main.py":     "print(1)\n",
		"secrets/key":     "KEY\n",
		"build.log":       "noise\n",
		"keep.log":        "kept\n",
		"app/debug.log":   "nested logs stay: *.log is the root's\n",
		"secrets2/readme": "not secrets/\n",
	} {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := tarContext(&buf, dir, "", "Dockerfile"); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got[strings.TrimSuffix(h.Name, "/")] = true
	}
	for name, want := range map[string]bool{".dockerignore": true, "Dockerfile": true, "app/main.py": true, "keep.log": true,
		"app/debug.log": true, "secrets2/readme": true, "secrets/key": false, "secrets": false, "build.log": false} {
		if got[name] != want {
			t.Errorf("%s in the context sent: %v, want %v (sent %v)", name, got[name], want, got)
		}
	}
}

// A classic build's coloured stderr reaches progress (and a failed
// build's last lines in the record) as its text.
func TestBuildStreamLosesColourCodes(t *testing.T) {
	var got []string
	stream := `{"stream":"\u001b[91mKilled\n\u001b[0m"}` + "\n" + `{"stream":"\u001b[91m    raise URLError(err)\n\u001b[0m"}` + "\n"
	if err := readBuildStream(strings.NewReader(stream), func(l string) { got = append(got, l) }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "Killed|raise URLError(err)" {
		t.Errorf("lines %q, want [Killed raise URLError(err)]", got)
	}
}

// A task's name makes a tag the engine takes, whatever separators it
// runs together: `cpus___1e_12` made "invalid reference format", and
// the task never built.
func TestTaskImageTagIsAValidReference(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	valid := regexp.MustCompile(`^headroom-task/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*:[0-9a-f]+$`)
	for _, name := range []string{"atk6/n-cpus___1e_12", "a..b", "a._-b", "x/__y__", "-._a", "ok/name-1.2_3", "a--b", "a__b"} {
		tag, err := TaskImageTag(context.Background(), name, model.Build{Context: dir, Dockerfile: "Dockerfile"})
		if err != nil {
			t.Fatal(err)
		}
		if !valid.MatchString(tag) {
			t.Errorf("task %q: tag %q is not a reference the engine takes", name, tag)
		}
	}
}

// A task's name of any length makes a tag the engine takes: one of 242
// characters passed `tasks validate`, then its build failed with
// "repository name must not be more than 255 characters". A name that
// fits keeps its tag as before (a cached image stays cached); a longer
// one is cut, and a digest of the whole name keeps two long names alike
// at their start apart. The engine's own parser (with the "docker.io/"
// an older engine counts) takes every tag.
func TestTaskImageTagOfALongName(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := func(name string) string {
		t.Helper()
		s, err := TaskImageTag(context.Background(), name, model.Build{Context: dir, Dockerfile: "Dockerfile"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fits := strings.Repeat("a", 231) // 255 − len("docker.io/headroom-task/")
	if got := tag(fits); !strings.HasPrefix(got, "headroom-task/"+fits+":") {
		t.Errorf("a name of 231 characters: %q, want it whole", got)
	}
	long := strings.Repeat("swe-bench__astropy.", 20) // 380 characters
	seen := map[string]string{}
	for _, name := range []string{long + "a", long + "b", strings.Repeat("x", 242), "dir/" + strings.Repeat("y", 1000) + "/sidecar"} {
		got := tag(name)
		repo, _, _ := strings.Cut(got, ":")
		if len("docker.io/"+repo) > 255 {
			t.Errorf("%d characters: repository %d long with docker.io/", len(name), len(repo))
		}
		if _, err := reference.ParseNormalizedNamed(got); err != nil {
			t.Errorf("%d characters: %q: %v", len(name), got, err)
		}
		if other, dup := seen[repo]; dup {
			t.Errorf("%q and %q share the image %s", other[:20], name[:20], repo)
		}
		seen[repo] = name
	}
}

// A build's RUN steps are held to a CPU bound as to a memory one: the
// larger of one core and the task's cpus, --build-cpus's where the run
// gives it, none with --build-cpus none; BuildKit applies none and says
// so. On 2abd0ba a RUN step's cgroup read a quota of -1 (none) whatever
// the task's cpus.
func TestPlanBuildCPU(t *testing.T) {
	kit := Builder{Name: BuilderBuildKit}
	heredoc := "Dockerfile:3: heredoc in RUN"
	for _, c := range []struct {
		name          string
		cpus          float64
		build         model.Build
		want          float64
		period, quota int64
		says          string
	}{
		{"default, a small task", 0.5, model.Build{}, 1, 100_000, 100_000, "at most 1 CPU (--build-cpus)"},
		{"default, a task of 4", 4, model.Build{}, 4, 100_000, 400_000, "at most 4 CPU (--build-cpus)"},
		{"--build-cpus 0.5", 2, model.Build{CPUs: 0.5}, 0.5, 100_000, 50_000, "at most 0.5 CPU (--build-cpus)"},
		{"--build-cpus none", 2, model.Build{CPUs: -1}, 0, 0, 0, "no CPU bound (--build-cpus none)"},
		{"heredoc: BuildKit", 1, model.Build{NeedsBuildKit: heredoc}, 0, 0, 0, "no memory or CPU bound: its Dockerfile needs BuildKit (" + heredoc + "), and the engine's BuildKit applies no memory or CPU bound: its RUN steps are not held to 2GiB and 1 CPU"},
	} {
		p := planBuild(kit, model.Task{Name: "t", Network: "none", Resources: model.Resources{CPUs: c.cpus, MemoryBytes: 128 * model.MiB}}, c.build)
		period, quota := p.cpuQuota()
		if p.CPUs != c.want || period != c.period || quota != c.quota || !strings.Contains(p.says(), c.says) {
			t.Errorf("%s: CPUs %v, quota %d/%d, says %q; want %v, %d/%d, saying %q", c.name, p.CPUs, quota, period, p.says(), c.want, c.quota, c.period, c.says)
		}
	}
}

// A .dockerignore is read as a task's files are (the seventh attacker's
// finding 2): a FIFO hung the whole run in its open, deaf to signals,
// and a link to /proc/self/fd/0 read headroom's own stdin. Each is now
// refused at once, naming the file; a link inside the context is read.
func TestDockerignoreIsReadAsATaskFile(t *testing.T) {
	dir := t.TempDir()
	ignore := filepath.Join(dir, ".dockerignore")
	check := func(what, want string) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			done <- tarContext(io.Discard, dir, "", "Dockerfile")
		}()
		select {
		case err := <-done:
			if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("%s: %v; want %q", what, err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the context's walk still waits after 20 s", what)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ignore, 0o644); err != nil {
		t.Fatal(err)
	}
	check("a FIFO", ".dockerignore is not a regular file")
	os.Remove(ignore)
	if err := os.Symlink("/proc/self/fd/0", ignore); err != nil {
		t.Fatal(err)
	}
	check("a link to headroom's stdin", "outside")
	os.Remove(ignore)
	if err := os.WriteFile(filepath.Join(dir, "ignore.txt"), []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ignore.txt", ignore); err != nil {
		t.Fatal(err)
	}
	check("a link inside the context", "")
}
