package taskfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

func loadTB1(t *testing.T, name string) model.Task {
	t.Helper()
	l, err := LoadTaskDir(filepath.Join("testdata/tb1dirs", name))
	if err != nil {
		t.Fatal(err)
	}
	return l.Task
}

// uploadNames lists what a step puts in the container: directories by
// their host base name, written files by name.
func uploadNames(st model.Step) []string {
	var out []string
	for _, u := range st.Files {
		switch {
		case u.From != "":
			out = append(out, filepath.Base(u.From))
		case u.Name != "":
			out = append(out, "embedded:"+u.Name)
		}
	}
	return out
}

// The instruction as terminal-bench's harness resolves it, never the word
// "base" (a key into descriptions).
func TestTB1Instruction(t *testing.T) {
	cases := []struct{ dir, starts string }{
		{"lcb-instruction-key", "LiveCodeBench Pro (Mini) - external judge."},
		{"descriptions-only", "Sort the input file in /app/data.txt"},
		{"deveval-own-scripts", "PRD: implement the shape classes."},
	}
	for _, c := range cases {
		task := loadTB1(t, c.dir)
		if !strings.HasPrefix(task.Instruction, c.starts) {
			t.Errorf("%s: instruction %q, want it to start %q", c.dir, task.Instruction, c.starts)
		}
		if !strings.HasPrefix(task.Description, c.starts[:20]) {
			t.Errorf("%s: description %q", c.dir, task.Description)
		}
	}
	y := tbOldTask{Instruction: "Do the thing.", Descriptions: []tbDescription{{Key: "base", Description: "other"}}}
	if got := y.instruction(); got != "Do the thing." {
		t.Errorf("a plain instruction beside descriptions: %q", got)
	}
	if got := (tbOldTask{}).instruction(); got != "" {
		t.Errorf("nothing at all: %q", got)
	}
}

// parser_name decides the verdict rule; pytest when absent.
func TestTB1VerdictRule(t *testing.T) {
	cases := map[string]string{
		"lcb-instruction-key": "parser:pytest",
		"deveval-own-scripts": "parser:pytest",
		"swebench-parser":     "parser:swebench",
	}
	for dir, want := range cases {
		task := loadTB1(t, dir)
		if got := task.Verdict.String(); got != want {
			t.Errorf("%s: verdict %s, want %s", dir, got, want)
		}
		if task.Verdict.Reward != nil {
			t.Errorf("%s: a reward rule on a terminal-bench task", dir)
		}
	}
	_, err := LoadTaskDir("testdata/tb1dirs/unimplemented-parser")
	if err == nil || !strings.Contains(err.Error(), "unimplemented-parser/task.yaml") || !strings.Contains(err.Error(), `parser_name "swelancer"`) {
		t.Errorf("swelancer: %v, want the file and field named", err)
	}
}

// The helper scripts the harness supplied reach the tests directory from
// headroom's own copies; a task's own file of that name wins.
func TestTB1HarnessScripts(t *testing.T) {
	listed := loadTB1(t, "descriptions-only")
	// Typed into the tests' pane: a login shell with the pane for its
	// output (model.Step.Terminal).
	if v := listed.Verifier; !v.LoginShell || !v.Terminal {
		t.Errorf("the verifier's step %q: login shell %v, terminal %v; want both", v.Name, v.LoginShell, v.Terminal)
	}
	oracle, _ := listed.Agent(AgentOracle)
	for _, st := range oracle.Steps {
		if !st.Terminal {
			t.Errorf("the oracle's step %q has no terminal", st.Name)
		}
	}
	if got := strings.Join(uploadNames(listed.Verifier), ","); got != "run-tests.sh,tests,embedded:setup-uv-pytest.sh,embedded:run-uv-pytest.sh" {
		t.Errorf("listed scripts: uploads %s", got)
	}
	for _, u := range listed.Verifier.Files {
		if u.Name == "" {
			continue
		}
		if u.To != TestsDir || !u.Executable || !strings.HasPrefix(u.Content, "#!/bin/bash") {
			t.Errorf("%s: to %s executable %v", u.Name, u.To, u.Executable)
		}
		if u.Name == "run-uv-pytest.sh" && !strings.Contains(u.Content, `uv run pytest "$TEST_DIR/test_outputs.py" -rA`) {
			t.Errorf("run-uv-pytest.sh does not run the task's tests with -rA:\n%s", u.Content)
		}
	}
	// No test_scripts: the scripts run-tests.sh names, except the one the
	// task ships itself.
	own := loadTB1(t, "deveval-own-scripts")
	if got := strings.Join(uploadNames(own.Verifier), ","); got != "run-tests.sh,tests,embedded:run-uv-pytest.sh" {
		t.Errorf("own scripts: uploads %s", got)
	}
	// Names no script: nothing supplied.
	if got := strings.Join(uploadNames(loadTB1(t, "lcb-instruction-key").Verifier), ","); got != "run-tests.sh" {
		t.Errorf("no scripts named: uploads %s", got)
	}
	_, err := LoadTaskDir("testdata/tb1dirs/unknown-script")
	if err == nil || !strings.Contains(err.Error(), `"setup-node-jest.sh"`) || !strings.Contains(err.Error(), "run-uv-pytest.sh, setup-uv-pytest.sh") {
		t.Errorf("unknown script: %v", err)
	}
}

// `tasks validate DIR/task.yaml` (or task.toml) validates the task
// directory, not the file as headroom's own TOML.
func TestLoadFileOfATaskDirectory(t *testing.T) {
	l, err := LoadFile("testdata/tb1dirs/swebench-parser/task.yaml")
	if err != nil || l.Task.Format != model.FormatTerminalBench || l.Task.Verdict.Parser != "swebench" {
		t.Errorf("task.yaml: %+v, %v", l.Task.Verdict, err)
	}
	harbor, err := os.ReadDir("testdata/tbdirs/harbor-defaults")
	if err != nil || len(harbor) == 0 {
		t.Fatal(err)
	}
	l, err = LoadFile("testdata/tbdirs/harbor-defaults/task.toml")
	if err != nil || l.Task.Format != model.FormatHarbor || l.Task.Verdict.Kind() != model.VerdictReward {
		t.Errorf("task.toml: format %q verdict %s, %v", l.Task.Format, l.Task.Verdict, err)
	}
	l, err = LoadFile("testdata/tasks/good/defaults.toml")
	if err != nil || l.Task.Format != model.FormatHeadroom || l.Task.Verdict.Kind() != model.VerdictExitCode {
		t.Errorf("headroom TOML: format %q verdict %s, %v", l.Task.Format, l.Task.Verdict, err)
	}
	if _, err := LoadFile("testdata/tb1dirs/unknown-script/task.yaml"); err == nil || !strings.Contains(err.Error(), "setup-node-jest.sh") {
		t.Errorf("a broken task directory's task.yaml: %v", err)
	}
	// Another file of a task directory is no task file: read as TOML, a
	// new user's instruction.md was "expected '.' or '=', but got '/'".
	if _, err := LoadFile("testdata/tbdirs/harbor-defaults/instruction.md"); err == nil || !strings.Contains(err.Error(), "not a task file: give its directory, testdata/tbdirs/harbor-defaults") {
		t.Errorf("a task directory's instruction.md: %v", err)
	}
}

// run_tests_in_same_shell: true is a difference the audit lists (headroom
// runs the tests in a fresh shell); false is none.
func TestTB1SameShellDeviation(t *testing.T) {
	has := func(task model.Task) bool {
		for _, d := range task.Deviations {
			if d.What == "tests in a fresh shell" {
				return true
			}
		}
		return false
	}
	if !has(loadTB1(t, "deveval-own-scripts")) {
		t.Error("run_tests_in_same_shell: true is not listed as a deviation")
	}
	if has(loadTB1(t, "swebench-parser")) {
		t.Error("run_tests_in_same_shell: false is listed as a deviation")
	}
}

// terminal-bench 1's harness runs the compose file's cpus with no memory
// limit: the audit says so, and which sweep gives that container.
func TestTB1HarnessResourcesListed(t *testing.T) {
	l, err := LoadTaskDir("testdata/tb1dirs/compose-cpus")
	if err != nil {
		t.Fatal(err)
	}
	tk := l.Task
	if tk.Harness == nil || tk.Harness.CPUs != 1 || tk.Harness.MemoryBytes != 0 {
		t.Fatalf("harness %v, want cpus 1 and no memory limit", tk.Harness)
	}
	var got string
	for _, d := range tk.AllDeviations() {
		if d.What == "harness resources differ" {
			got = d.Detail
		}
	}
	if !strings.Contains(got, "cpus 1, no memory limit") || !strings.Contains(got, "--scale cpu --ratios 1x reproduces it") {
		t.Errorf("deviation %q, want the harness's cpus 1 / no memory limit and --scale cpu --ratios 1x", got)
	}
}

// A terminal-bench 1 task with solution.yaml (the oracle's commands, as
// the harness types them into its pane) has an oracle where each command
// is typed with its Enter: one script of those lines, said in the
// deviations; one that types keys without Enter has none, and says why.
func TestTB1SolutionYAML(t *testing.T) {
	for _, c := range []struct {
		yaml, dev string
		oracle    bool
	}{
		{"- command: \"echo 'Hello, world!' > /app/hello.txt\"\n  min_timeout_sec: 0.1\n  block: true\n  append_enter: true\n- command: cd /app\n  append_enter: true\n", "solution.yaml run as a script", true},
		{"- command: vim x\n  append_enter: true\n- command: \":wq\"\n  append_enter: false\n", "no oracle: solution.yaml types keys", false},
		{"- command: ls\n", "no oracle: solution.yaml types keys", false},
	} {
		dir := t.TempDir()
		for name, body := range map[string]string{
			"task.yaml":     "instruction: Say hello.\n",
			"Dockerfile":    "FROM debian\n",
			"run-tests.sh":  "#!/bin/bash\necho ok\n",
			"solution.yaml": c.yaml,
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l, err := LoadTaskDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		oracle, ok := l.Task.Agent(AgentOracle)
		devs := deviations(l.Task)
		if ok != c.oracle || !slices.ContainsFunc(devs, func(d string) bool { return strings.HasPrefix(d, c.dev) }) {
			t.Errorf("%q: oracle %v, deviations %q; want oracle %v and %q", c.yaml, ok, devs, c.oracle, c.dev)
		}
		if ok {
			if f := oracle.Steps[0].Files; len(f) != 1 || f[0].Content != "#!/bin/bash\necho 'Hello, world!' > /app/hello.txt\ncd /app\n" || !oracle.Steps[0].LoginShell || !oracle.Steps[0].Terminal {
				t.Errorf("the oracle's script: %+v", oracle.Steps[0])
			}
		}
	}
}
