package taskfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload/wire"
)

func load(t *testing.T, path string) (Loaded, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(path, data)
}

func TestParseTerminalBenchStyle(t *testing.T) {
	l, err := load(t, "testdata/tasks/good/tb-style.toml")
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	if task.Name != "suite/tb-style" || task.Image != "alpine:3.20" || task.Resources.MemoryBytes != 2048*model.MiB || task.Resources.CPUs != 2 {
		t.Errorf("task %+v", task)
	}
	if task.AgentTimeout != 900*time.Second || task.VerifierTimeout != 600*time.Second {
		t.Errorf("timeouts %v %v", task.AgentTimeout, task.VerifierTimeout)
	}
	if !slices.Equal(task.IdleCommand, []string{"sleep", "infinity"}) || task.Network != "bridge" {
		t.Errorf("idle %v network %q", task.IdleCommand, task.Network)
	}
	if !slices.Equal(l.Ignored, []string{"environment.warp_drive", "future", "future.shiny"}) {
		t.Errorf("ignored keys %v, want the unknown ones only", l.Ignored)
	}
	if task.StorageBytes != 10240*model.MiB {
		t.Errorf("storage %d", task.StorageBytes)
	}
	if task.Agents[0].Steps[0].Show != "sh -c touch /tmp/done" {
		t.Errorf("show defaults to the command: %q", task.Agents[0].Steps[0].Show)
	}
}

func TestParseDefaultsAreFlagged(t *testing.T) {
	l, err := load(t, "testdata/tasks/good/defaults.toml")
	if err != nil {
		t.Fatal(err)
	}
	r := l.Task.Resources
	if r.MemoryBytes != model.DefaultMemoryBytes || r.CPUs != model.DefaultCPUs || r.PidsLimit != model.DefaultPidsLimit {
		t.Errorf("resources %+v, want defaults", r)
	}
	if !slices.Equal(r.Defaulted, []string{"memory", "cpus", "pids_limit"}) {
		t.Errorf("defaulted %v", r.Defaulted)
	}
	if l.Task.AgentTimeout != model.DefaultAgentTimeout || l.Task.Agents[0].Steps[0].Argv[0] != "/hr-workload" {
		t.Errorf("task %+v", l.Task)
	}
}

func TestParseErrorsNameFileLineAndField(t *testing.T) {
	tests := map[string]string{
		"syntax.toml":       "syntax.toml:4:",
		"both-memory.toml":  "sets both memory_mb and memory",
		"bad-workload.toml": `agent "a" step 1 workload: on_child_killed must be fail, continue or retry`,
		"wrong-type.toml":   "memory_mb",
	}
	for file, want := range tests {
		_, err := load(t, filepath.Join("testdata/tasks/broken", file))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: error %v, want it to name the file and contain %q", file, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", file, err)
		}
	}
}

func TestParseRejectsMissingPieces(t *testing.T) {
	base := "[task]\nname = \"x\"\n[environment]\nimage = \"builtin\"\nmemory = \"64M\"\n[verifier]\ncommand = [\"true\"]\n[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  command = [\"true\"]\n"
	tests := map[string]struct{ from, to, want string }{
		"no name":     {"name = \"x\"", "", "name is missing"},
		"no image":    {"image = \"builtin\"", "", "image is missing"},
		"tiny memory": {"64M", "1M", "at least 6MiB"},
		"bad memory":  {"64M", "lots", "not a memory size"},
		"no verifier": {"command = [\"true\"]\n[[agents]]", "[[agents]]", "[verifier] has no command"},
		"no agents":   {"[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  command = [\"true\"]\n", "", "no agents"},
		"agent twice": {"[[agents]]\nname = \"a\"", "[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  command = [\"true\"]\n[[agents]]\nname = \"a\"", "defined twice"},
		"bad timeout": {"[verifier]\n", "[verifier]\ntimeout_sec = -1\n", "timeout_sec"},
		"zero cpus":   {"memory = \"64M\"", "memory = \"64M\"\ncpus = 0", "cpus must be at least 0.01"},
		"tiny cpus":   {"memory = \"64M\"", "memory = \"64M\"\ncpus = 1e-12", "cpus must be at least 0.01 (the smallest CPU limit the engine takes) and at most 1024 (got 1e-12)"},
		// Out of range says what the range is (it said "more than 0").
		"huge cpus":                 {"memory = \"64M\"", "memory = \"64M\"\ncpus = 1e308", "cpus must be at least 0.01 (the smallest CPU limit the engine takes) and at most 1024 (got 1e+308)"},
		"huge memory":               {"64M", "99999999999999999999G", "is too large: the most is 1PiB"},
		"huge memory_mb":            {"memory = \"64M\"", "memory_mb = 99999999999", "memory_mb must be more than 0 and at most 1073741824 MiB"},
		"no steps":                  {"  [[agents.steps]]\n  command = [\"true\"]\n", "", "has no steps"},
		"both command":              {"  command = [\"true\"]\n", "  command = [\"true\"]\n  workload = { duration_ms = 1 }\n", "sets both command and workload"},
		"limit under the guarantee": {"memory = \"64M\"", "memory = \"64M\"\nmemory_limit = \"32M\"", "memory_limit (32MiB) is under the guarantee memory (64MiB)"},
		"bad limit":                 {"memory = \"64M\"", "memory = \"64M\"\nmemory_limit = \"lots\"", "memory_limit: "},
	}
	if _, err := Parse("ok.toml", []byte(base)); err != nil {
		t.Fatalf("base file must parse: %v", err)
	}
	for name, tt := range tests {
		src := strings.Replace(base, tt.from, tt.to, 1)
		if src == base {
			t.Fatalf("%s: replacement did not apply", name)
		}
		_, err := Parse("x.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", name, err, tt.want)
		}
	}
}

// memory_limit is the task's own 1x hard limit apart from its guarantee:
// ratios scale it, and the guarantee stays.
func TestMemoryLimitIsScaledByTheRatio(t *testing.T) {
	src := "[task]\nname = \"x\"\n[environment]\nimage = \"builtin\"\nmemory = \"320M\"\nmemory_limit = \"520M\"\n[verifier]\ncommand = [\"true\"]\n[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  command = [\"true\"]\n"
	l, err := Parse("x.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	res := l.Task.Resources
	if res.MemoryBytes != 320*model.MiB || res.MemoryLimitBytes != 520*model.MiB {
		t.Fatalf("resources %+v", res)
	}
	p := model.NewPolicy(res, model.Ratio{K: 2}, 2)
	if p.GuaranteeBytes != 320*model.MiB || p.HardLimitBytes != 1040*model.MiB || model.MemoryLimitAt(p, model.Ratio{K: 1}) != 520*model.MiB {
		t.Errorf("2x policy %+v: want the guarantee kept and the limit 2 × 520 MiB", p)
	}
	if u := model.NewPolicy(res, model.Uncapped, 2); u.HardLimitBytes != 0 || model.MemoryLimitAt(u, model.Ratio{K: 1.5}) != 780*model.MiB {
		t.Errorf("uncapped policy %+v: predictions at 1.5x must read 780 MiB", u)
	}
}

func TestBuiltinCatalog(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tasks) < 6 {
		t.Fatalf("%d built-in tasks, want at least 6", len(c.Tasks))
	}
	var real []string
	for _, l := range c.Tasks {
		if NeedsRealImage(l.Task) {
			real = append(real, l.Task.Name+":"+l.Task.Image)
			continue
		}
		if len(real) > 0 {
			t.Errorf("%s comes after the real tasks %v: the synthetic catalog comes first", l.Task.Name, real)
		}
		// No built-in task reaches beyond its trial: no network, or only
		// its services' (an internal one).
		offline := l.Task.Network == "none" || (l.Task.Network == model.NetworkTrialOnly && len(l.Task.Sidecars) > 0)
		if !IsBuiltin(l.Task) || l.Task.Image != BuiltinImage || !offline || len(l.Ignored) > 0 {
			t.Errorf("%s: builtin %v image %s network %s ignored %v", l.Task.Name, IsBuiltin(l.Task), l.Task.Image, l.Task.Network, l.Ignored)
		}
		if l.Task.Resources.MemoryBytes > 512*model.MiB {
			t.Errorf("%s: spec %s is too big for a quick sweep", l.Task.Name, model.FormatBytes(l.Task.Resources.MemoryBytes))
		}
	}
	if !slices.Equal(real, []string{"real/bn-fit-install-fetch:builtin-debian", "real/bn-fit-install:builtin-debian-cache"}) {
		t.Errorf("real tasks %v", real)
	}
	// The real ones are chosen by name only: the default is the synthetic set.
	def, err := c.Select(nil)
	if err != nil || len(def) != len(c.Tasks)-2 {
		t.Errorf("default selection has %d tasks (%v), want %d", len(def), err, len(c.Tasks)-2)
	}
	bn, err := c.Find("bn-fit-modify")
	if err != nil || !slices.Equal(bn.AgentNames(), []string{"heavy", "lean"}) {
		t.Errorf("bn-fit-modify: %v %v", bn.AgentNames(), err)
	}
}

func TestCatalogDirFindAndSelect(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddDir("testdata/tasks"); err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) != 4 {
		t.Errorf("problems %v, want the 4 broken files", c.Problems)
	}
	if _, err := c.Find("suite/tb-style"); err != nil {
		t.Error(err)
	}
	if tk, err := c.Find("tb-style"); err != nil || tk.Name != "suite/tb-style" {
		t.Errorf("short name: %v %v", tk.Name, err)
	}
	if _, err := c.Find("defaults"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("two tasks end in /defaults: %v", err)
	}
	if _, err := c.Find("nope"); err == nil || !strings.Contains(err.Error(), "failed to load") {
		t.Errorf("unknown task error should mention the failed files: %v", err)
	}
	all, err := c.Select(nil)
	if err != nil || len(all) != 3 {
		t.Errorf("with a tasks dir, no names selects the dir's tasks: %d %v", len(all), err)
	}
	if err := (&Catalog{}).AddDir("testdata/nowhere"); err == nil {
		t.Error("missing directory accepted")
	}
}

func FuzzParseTaskFile(f *testing.F) {
	for _, p := range []string{"testdata/tasks/good/tb-style.toml", "testdata/tasks/good/defaults.toml", "testdata/tasks/broken/syntax.toml", "builtin/bn-fit-modify.toml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse("fuzz.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := l.Task.Validate(); err != nil {
			t.Fatalf("parsed task fails validation: %v", err)
		}
	})
}

func TestLockdownDefaultsAndOverrides(t *testing.T) {
	l, err := load(t, "testdata/tasks/good/tb-style.toml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Task.Network != "bridge" || !slices.Equal(l.Task.Capabilities, model.DefaultCapabilities) || l.Task.User != "" {
		t.Errorf("allow_internet = true, a real image: network %s caps %v user %q", l.Task.Network, l.Task.Capabilities, l.Task.User)
	}
	l, _ = load(t, "testdata/tasks/good/defaults.toml")
	if l.Task.Network != "none" || len(l.Task.Capabilities) != 0 || l.Task.User != BuiltinUser {
		t.Errorf("built-in: network %s caps %v user %q", l.Task.Network, l.Task.Capabilities, l.Task.User)
	}
	src := "[task]\nname = \"x\"\n[environment]\nimage = \"img\"\nmemory = \"64M\"\nuser = \"1000\"\ncapabilities = [\"cap_sys_ptrace\", \"CHOWN\"]\n[verifier]\ncommand = [\"true\"]\n[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  command = [\"true\"]\n"
	l, err = Parse("x.toml", []byte(src))
	if err != nil || l.Task.User != "1000" || !slices.Contains(l.Task.Capabilities, "SYS_PTRACE") || len(l.Task.Capabilities) != len(model.DefaultCapabilities)+1 {
		t.Errorf("overrides: %+v %v", l.Task, err)
	}
	if _, err := Parse("x.toml", []byte(strings.Replace(src, "cap_sys_ptrace", "sys ptrace; rm", 1))); err == nil || !strings.Contains(err.Error(), "not a capability name") {
		t.Errorf("bad capability: %v", err)
	}
}

// The committed corpus of broken task files: each NAME.toml fails with a
// one-line message that names the file and contains NAME.want.
func TestBrokenCorpusMessages(t *testing.T) {
	files, _ := filepath.Glob("testdata/broken/*.toml")
	if len(files) < 10 {
		t.Fatalf("%d broken files", len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(strings.TrimSuffix(f, ".toml") + ".want")
		if err != nil {
			t.Fatalf("%s has no .want: %v", f, err)
		}
		_, err = load(t, f)
		w := strings.TrimSpace(string(want))
		if err == nil || !strings.Contains(err.Error(), w) || !strings.HasPrefix(err.Error(), f) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n got %v\nwant one line starting with the path, containing %q", f, err, w)
		}
	}
}

// A built-in step's label is what its output says it is: the "build"
// style prints CMake's lines, so its step is a make; parallel-build-retry
// said `cargo build` over `Building C object CMakeFiles/...`.
func TestBuiltinLabelsMatchTheirOutput(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string][]string{"build": {"make", "cmake"}, "pip": {"pip"}, "apt": {"apt"}}
	for _, l := range c.Tasks {
		steps := []model.Step{l.Task.Verifier}
		for _, a := range l.Task.Agents {
			steps = append(steps, a.Steps...)
		}
		for _, s := range steps {
			i := slices.Index(s.Argv, "--profile")
			if i < 0 || i+1 >= len(s.Argv) {
				continue
			}
			var p wire.Profile
			if err := json.Unmarshal([]byte(s.Argv[i+1]), &p); err != nil {
				t.Fatalf("%s %s: %v", l.Task.Name, s.Name, err)
			}
			want, ok := tools[p.Style]
			if !ok {
				continue
			}
			if !slices.ContainsFunc(want, func(tool string) bool { return strings.Contains(s.Show, tool) }) {
				t.Errorf("%s step %s: shown as %q, but its %s output is %v's", l.Task.Name, s.Name, s.Show, p.Style, want)
			}
		}
		if strings.Contains(l.Task.Description+l.Task.Verifier.Show, "cargo") {
			t.Errorf("%s: names cargo, whose output the workload never prints", l.Task.Name)
		}
	}
}
