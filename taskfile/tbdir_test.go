package taskfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

func loadFixtures(t *testing.T) *Catalog {
	t.Helper()
	c := &Catalog{}
	if err := c.AddDir("testdata/tbdirs"); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTaskDirsMixedLoadWhatTheyCan(t *testing.T) {
	c := loadFixtures(t)
	var names []string
	for _, l := range c.Tasks {
		names = append(names, l.Task.Name+"("+l.Task.Format+")")
	}
	want := []string{
		"terminal-bench/with-db(harbor)",
		"harbor-defaults(harbor)",
		"terminal-bench/fit-small(harbor)",
		"terminal-bench/prebuilt(harbor)",
		"fixture/multi-step(harbor)",
		"terminal-bench/two-memories(harbor)",
		"old-hello(terminal-bench)",
		"own/quick(headroom)",
	}
	if !slices.Equal(names, want) {
		t.Errorf("loaded %v\nwant %v", names, want)
	}
	// Every broken task is reported with its path and what to do.
	wantProblems := []string{
		"harbor-broken-toml/task.toml:4: expected '.' or ']' to end table name",
		"harbor-no-environment: no environment: add environment/Dockerfile or set [environment] docker_image",
		"harbor-no-tests/tests/test.sh: missing: the verifier tests/test.sh",
		"old-bad-yaml/task.yaml: ",
		"old-multi/docker-compose.yaml:5: service server build: testdata/tbdirs/old-multi/server/Dockerfile does not exist",
	}
	if len(c.Problems) != len(wantProblems) {
		t.Errorf("%d problems, want %d: %v", len(c.Problems), len(wantProblems), c.Problems)
	}
	for i, w := range wantProblems {
		if i < len(c.Problems) && !strings.Contains(c.Problems[i].Error(), w) {
			t.Errorf("problem %d = %q\nwant it to contain %q", i, c.Problems[i], w)
		}
	}
	if i := slices.IndexFunc(c.Problems, func(e error) bool { return strings.Contains(e.Error(), "old-bad-yaml") }); i >= 0 {
		if !strings.Contains(c.Problems[i].Error(), "line 3") {
			t.Errorf("yaml error does not name the line: %v", c.Problems[i])
		}
	}
}

func TestHarborTaskDirectory(t *testing.T) {
	l, err := LoadTaskDir("testdata/tbdirs/harbor-dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	if len(l.Ignored) != 0 {
		t.Errorf("known Terminal-Bench keys listed as ignored: %v", l.Ignored)
	}
	// Host paths are absolute (a resume may run elsewhere); the source is as given.
	dir, _ := filepath.Abs("testdata/tbdirs/harbor-dockerfile")
	if task.Source != "testdata/tbdirs/harbor-dockerfile/task.toml" || task.Dir != dir {
		t.Errorf("source %q dir %q", task.Source, task.Dir)
	}
	if task.Resources.MemoryBytes != 512*model.MiB || task.Resources.CPUs != 1 || len(task.Resources.Defaulted) != 1 || task.Resources.Defaulted[0] != "pids_limit" {
		t.Errorf("resources %+v", task.Resources)
	}
	// Harbor's base compose file bind-mounts these whatever the task's.
	if !slices.Equal(task.HarnessMounts, []string{"/logs/verifier", "/logs/agent", "/logs/artifacts"}) {
		t.Errorf("harness mounts %q", task.HarnessMounts)
	}
	if task.StorageBytes != 10240*model.MiB || task.Network != "none" || task.AgentTimeout != 300*time.Second || task.VerifierTimeout != 120*time.Second {
		t.Errorf("storage %d network %s timeouts %v/%v", task.StorageBytes, task.Network, task.AgentTimeout, task.VerifierTimeout)
	}
	if task.Build == nil || task.Build.Context != filepath.Join(dir, "environment") || task.Build.Timeout != 900*time.Second || task.Image != "" {
		t.Errorf("build %+v image %q", task.Build, task.Image)
	}
	if !strings.HasPrefix(task.Instruction, "Fit the model") || !slices.Equal(task.Env, []string{"LANG=C.UTF-8"}) {
		t.Errorf("instruction %q env %v", task.Instruction, task.Env)
	}
	if got := task.AgentNames(); !slices.Equal(got, []string{AgentOracle, AgentNop}) {
		t.Fatalf("agents %v", got)
	}
	solve := task.Agents[0].Steps[0]
	if !solve.Trace || solve.Argv[0] != "/solution/solve.sh" || !slices.Equal(solve.Env, []string{"SOLVER=oracle"}) ||
		!slices.Contains(solve.Files, model.Upload{From: filepath.Join(dir, "solution"), To: "/solution"}) {
		t.Errorf("oracle step %+v", solve)
	}
	v := task.Verifier
	if !v.Trace || v.Argv[0] != "/tests/test.sh" || !slices.Contains(v.Files, model.Upload{From: filepath.Join(dir, "tests"), To: "/tests"}) ||
		!slices.Contains(v.Files, model.Upload{To: "/logs/verifier"}) || !slices.Equal(v.Env, []string{"PYTHONUNBUFFERED=1"}) ||
		!slices.Equal(v.PassEnv, []string{"OPENAI_API_KEY=HR_TEST_JUDGE_KEY"}) {
		t.Errorf("verifier %+v", v)
	}
	if task.Verdict.Reward == nil || task.Verdict.Reward.Dir != "/logs/verifier" || task.Verdict.Reward.Pass != 1 {
		t.Errorf("reward %+v", task.Verdict.Reward)
	}
}

func TestHarborMemoryFormsAndDefaults(t *testing.T) {
	l, err := LoadTaskDir("testdata/tbdirs/harbor-image")
	if err != nil {
		t.Fatal(err)
	}
	if l.Task.Image != "example/prebuilt:20251031" || l.Task.Build != nil || l.Task.Resources.MemoryBytes != 2<<30 ||
		l.Task.StorageBytes != 10<<30 || l.Task.Resources.CPUs != 2 || l.Task.Network != "bridge" {
		t.Errorf("task %+v", l.Task)
	}
	if got := l.Task.AgentNames(); !slices.Equal(got, []string{AgentNop}) {
		t.Errorf("a task without solution/ has agents %v, want only nop", got)
	}
	d, err := LoadTaskDir("testdata/tbdirs/harbor-defaults")
	if err != nil {
		t.Fatal(err)
	}
	r := d.Task.Resources
	if d.Task.Name != "harbor-defaults" || r.MemoryBytes != model.DefaultMemoryBytes || r.CPUs != model.DefaultCPUs {
		t.Errorf("defaults %+v", d.Task)
	}
	if !slices.Equal(r.Defaulted, []string{"memory", "cpus", "pids_limit", "allow_internet"}) {
		t.Errorf("defaulted %v", r.Defaulted)
	}
}

func TestOlderTerminalBenchDirectory(t *testing.T) {
	l, err := LoadTaskDir("testdata/tbdirs/old-hello")
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	dir, _ := filepath.Abs("testdata/tbdirs/old-hello")
	if !slices.Equal(l.Ignored, []string{"future_field"}) {
		t.Errorf("ignored %v, want only the unknown key", l.Ignored)
	}
	if task.AgentTimeout != 180*time.Second || task.VerifierTimeout != 30*time.Second || task.Verdict.Reward != nil {
		t.Errorf("timeouts %v %v reward %v", task.AgentTimeout, task.VerifierTimeout, task.Verdict.Reward)
	}
	if task.Build == nil || task.Build.Context != dir || !strings.Contains(task.Instruction, "hello.txt") {
		t.Errorf("build %+v instruction %q", task.Build, task.Instruction)
	}
	if !slices.Equal(task.Resources.Defaulted, []string{"memory", "cpus", "pids_limit", "allow_internet"}) {
		t.Errorf("defaulted %v", task.Resources.Defaulted)
	}
	v := task.Verifier
	if v.Argv[0] != "/tests/run-tests.sh" || !slices.Contains(v.Env, "TEST_DIR=/tests") ||
		!slices.Contains(v.Files, model.Upload{From: filepath.Join(dir, "run-tests.sh"), To: "/tests"}) ||
		!slices.Contains(v.Files, model.Upload{From: filepath.Join(dir, "tests"), To: "/tests"}) {
		t.Errorf("verifier %+v", v)
	}
	if o, ok := task.Agent(AgentOracle); !ok || o.Steps[0].Argv[0] != "/solution/solution.sh" {
		t.Errorf("oracle %+v", o)
	}
}

// Tasks are addressable by full name and by directory name.
func TestFindByNameAndDirectory(t *testing.T) {
	c := loadFixtures(t)
	for _, n := range []string{"terminal-bench/fit-small", "fit-small", "harbor-dockerfile", "old-hello"} {
		if _, err := c.Find(n); err != nil {
			t.Errorf("Find(%q): %v", n, err)
		}
	}
}

// FuzzTaskDir loads arbitrary task.toml and task.yaml bytes as task
// directories: errors are fine, panics are not.
func FuzzTaskDir(f *testing.F) {
	for _, p := range []string{"harbor-dockerfile/task.toml", "harbor-image/task.toml", "harbor-broken-toml/task.toml", "old-hello/task.yaml", "old-bad-yaml/task.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata/tbdirs", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.HasSuffix(p, ".yaml"), data)
	}
	// Numbers written as strings, read as the harness's pydantic reads them.
	f.Add(false, []byte("[agent]\ntimeout_sec = \"20\"\n[environment]\nmemory_mb = '64'\ncpus = { x = \"1\" }\n[environment.healthcheck]\ncommand = \"true\"\nretries = \"4.5\"\n"))
	f.Add(true, []byte("instruction: x\nmax_agent_timeout_sec: \" 60 \"\nmax_test_timeout_sec: '1e3'\n"))
	f.Fuzz(func(t *testing.T, yaml bool, data []byte) {
		dir := t.TempDir()
		name := "task.toml"
		if yaml {
			name = "task.yaml"
			_ = os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
			_ = os.WriteFile(filepath.Join(dir, "run-tests.sh"), []byte("true\n"), 0o644)
		} else {
			_ = os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
			_ = os.WriteFile(filepath.Join(dir, "tests", "test.sh"), []byte("true\n"), 0o644)
			_ = os.WriteFile(filepath.Join(dir, "instruction.md"), []byte("x\n"), 0o644)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := LoadTaskDir(dir)
		if err == nil {
			if err := l.Task.Validate(); err != nil {
				t.Fatalf("loaded a task that does not validate: %v", err)
			}
		}
	})
}

// A task directory given as "." (validate run inside it) is named by its
// own directory, as the harnesses name it from the resolved path: it was
// named ".".
func TestTaskDirGivenAsDotIsNamedByItsDirectory(t *testing.T) {
	old, err := filepath.Abs("testdata/tbdirs/old-hello")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{harborDir(t, "version = \"1.0\"\n[environment]\ndocker_image = \"img\"\nmemory_mb = 256\n"), "task"},
		{old, "old-hello"},
	} {
		t.Chdir(c.dir)
		l, err := LoadTaskDir(".")
		if err != nil {
			t.Fatal(err)
		}
		if l.Task.Name != c.want {
			t.Errorf("%s loaded as .: named %q, want %q", c.dir, l.Task.Name, c.want)
		}
	}
}

// A Harbor task.toml's memory and storage strings are read as Harbor's
// EnvironmentConfig reads them: G, M or K (any case) after a number,
// whole MiB by truncation, the string over memory_mb where both are
// given (said in a warning). headroom's own syntax read "0.2G" as
// 204.8 MiB where Harbor runs 204, took "2GB" and "1.5GiB" that Harbor
// refuses, and refused both keys given (the thirty-fourth attacker's 3).
func TestHarborMemoryStringsAsHarborReadsThem(t *testing.T) {
	for _, c := range []struct {
		env  string
		mib  int64
		warn string
		err  string
	}{
		{`memory = "0.2G"`, 204, "", ""},
		{`memory = "300.7M"`, 300, "", ""},
		{`memory = "0.999G"`, 1022, "", ""},
		{`memory = " 2g "`, 2048, "", ""},
		{`memory = "524288K"`, 512, "", ""},
		{"memory_mb = 1024\nmemory = \"2G\"", 2048, "sets both memory_mb and memory: Harbor takes memory", ""},
		{`memory = "\uff11G"`, 1024, "", ""},
		{`memory = "1G\u001f"`, 1024, "", ""},
		{`memory = "0x1p1G"`, 0, "", `is not a size Harbor reads`},
		{`memory = "2GB"`, 0, "", `memory: "2GB" is not a size Harbor reads`},
		{`memory = "1.5GiB"`, 0, "", `memory: "1.5GiB" is not a size Harbor reads`},
	} {
		dir := harborDir(t, "version = \"1.0\"\n[environment]\ndocker_image = \"img\"\n"+c.env+"\n")
		l, err := LoadTaskDir(dir)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "task.toml:") {
				t.Errorf("%s: %v, want refused at its line with %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.env, err)
			continue
		}
		if got := l.Task.Resources.MemoryBytes; got != c.mib*model.MiB {
			t.Errorf("%s: %s, want %d MiB", c.env, model.FormatBytes(got), c.mib)
		}
		if w := strings.Join(l.Warnings, "; "); (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) {
			t.Errorf("%s: warnings %q, want %q", c.env, w, c.warn)
		}
	}
	// A fractional cpus runs as given, said as a deviation (Harbor's
	// model takes a whole number and refuses it).
	l, err := LoadTaskDir(harborDir(t, "version = \"1.0\"\n[environment]\ndocker_image = \"img\"\ncpus = 0.5\n"))
	if err != nil || !slices.Contains(deviationNames(l.Task), "fractional cpus") {
		t.Errorf("cpus = 0.5: %v, deviations %v", err, deviationNames(l.Task))
	}
}
