package agents

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Every shipped definition renders its install and run steps as the
// container gets them; the goldens are what `headroom agents show` prints.
func TestShippedDefinitionsRender(t *testing.T) {
	lib, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"aider", "claude-code", "codex", "gemini-cli", "goose", "opencode"}
	if got := strings.Join(lib.Names(), " "); got != strings.Join(want, " ") {
		t.Fatalf("shipped definitions %q, want %q", got, want)
	}
	for _, d := range lib.Defs {
		t.Run(d.Name, func(t *testing.T) {
			text, err := Describe(d)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", d.Name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != text {
				t.Errorf("%s differs from the golden (go test ./agents -update rewrites it):\n%s", d.Name, text)
			}
			if d.Needs == "" || len(d.PassEnv) == 0 {
				t.Errorf("%s does not say what it needs (network, keys)", d.Name)
			}
		})
	}
}

// The instruction reaches the run command as one shell word whatever
// quotes it holds, and a pin replaces the default version.
func TestRenderQuotesTheInstructionAndPinsTheVersion(t *testing.T) {
	lib, _ := Builtin()
	d, _ := lib.Find("claude-code")
	a, err := Render(d, model.Task{Name: "x", Instruction: "it's a `test` $HOME"}, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	run := a.Steps[0].Argv[1]
	if !strings.HasSuffix(run, `-p 'it'\''s a `+"`test`"+` $HOME'`) {
		t.Errorf("run command %q does not end with the quoted instruction", run)
	}
	if !strings.Contains(a.Install[0].Argv[1], "@anthropic-ai/claude-code@1.2.3") || a.Version != "1.2.3" {
		t.Errorf("pin not applied: %q", a.Install[0].Argv[1])
	}
	if !a.Install[0].Trace || !a.Steps[0].Trace || a.InstallTimeout != 10*time.Minute {
		t.Errorf("install/run not traced or install timeout %v", a.InstallTimeout)
	}
	if len(a.Install[0].PassEnv) != 0 || strings.Join(a.Steps[0].PassEnv, ",") != "ANTHROPIC_API_KEY" {
		t.Errorf("the key goes to the run step only: install %v, run %v", a.Install[0].PassEnv, a.Steps[0].PassEnv)
	}
}

func TestParseRejectsBadDefinitions(t *testing.T) {
	for _, c := range []struct{ name, toml, want string }{
		{"no name", "[run]\ncommand = 'x'\n", `name ""`},
		{"no run", "name = 'a'\n", "has no [run] command"},
		{"unknown key", "name = 'a'\nimage = 'x'\n[run]\ncommand = 'x'\n", "unknown key image"},
		{"bad template", "name = 'a'\n[run]\ncommand = '{{.Instruction'\n", "[run] command"},
		{"bad env", "name = 'a'\npass_env = ['A-B']\n[run]\ncommand = 'x'\n", `pass_env "A-B"`},
		{"bad file", "name = 'a'\n[files]\n'../x' = 'y'\n[run]\ncommand = 'x'\n", `[files] "../x"`},
		{"syntax", "name = 'a'\n[run\n", "a.toml:2"},
		{"unknown field in template", "name = 'a'\n[run]\ncommand = '{{.Model}}'\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse("a.toml", []byte(c.toml))
			if c.want == "" {
				// Parses; rendering says what is missing.
				if err != nil {
					t.Fatal(err)
				}
				if _, err := Render(d, model.Task{}, ""); err == nil || !strings.Contains(err.Error(), "Model") {
					t.Errorf("render error %v, want one naming .Model", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// Installed agents join every task with a shell, not the built-in image;
// their key is a secret TaskSecrets reads, and a missing one is named.
func TestApplyAddsInstalledAgents(t *testing.T) {
	dir := t.TempDir()
	def := "name = 'mine'\npass_env = ['HR_TEST_AGENT_KEY']\n[install]\nscript = 'echo install'\ntimeout_sec = 30\n[run]\ncommand = 'sh {{.FilesDir}}/agent.sh'\ntimeout_sec = 60\n[files]\n'agent.sh' = 'echo hi'\n"
	if err := os.WriteFile(filepath.Join(dir, "mine.toml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks := []model.Task{{Name: "a", Image: "img", AgentTimeout: time.Minute}, {Name: "b", Image: "builtin"}}
	s := DefaultSettings()
	s.Installed, s.AgentsDir, s.TimeoutScale = []string{"mine"}, dir, 2
	out, _, err := s.Apply(tasks)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := out[0].Agent("mine")
	if !ok || len(out[1].Agents) != 0 {
		t.Fatalf("agents %v / %v", out[0].AgentNames(), out[1].AgentNames())
	}
	if a.InstallTimeout != time.Minute || a.Timeout != 2*time.Minute || a.Steps[0].Show != "sh /headroom/agent/agent.sh" {
		t.Errorf("install %v run %v show %q", a.InstallTimeout, a.Timeout, a.Steps[0].Show)
	}
	t.Setenv("HR_TEST_AGENT_KEY", "")
	if _, problems := TaskSecrets(out[:1], map[string]string{}, nil); len(problems) != 1 || !strings.Contains(problems[0].Error(), "HR_TEST_AGENT_KEY is not set") {
		t.Errorf("problems %v", problems)
	}
	t.Setenv("HR_TEST_AGENT_KEY", "sk-long-enough")
	secrets := map[string]string{}
	if ok, problems := TaskSecrets(out[:1], secrets, nil); len(ok) != 1 || len(problems) != 0 || secrets["HR_TEST_AGENT_KEY"] != "sk-long-enough" {
		t.Errorf("ok %d problems %v", len(ok), problems)
	}
	if r := FromRecord(s.Record()); strings.Join(r.Installed, ",") != "mine" || r.AgentsDir != dir {
		t.Errorf("record round trip: %+v", r)
	}
	s.Installed = []string{"nobody"}
	if _, _, err := s.Apply(tasks); err == nil || !strings.Contains(err.Error(), "no agent definition named nobody") {
		t.Errorf("error %v", err)
	}
}

// On a multi-step task an installed agent installs once and runs once per
// step, each with that step's instruction.
func TestRenderPerPhase(t *testing.T) {
	lib, _ := Builtin()
	d, _ := lib.Find("codex")
	task := model.Task{Name: "x", Instruction: "whole", Phases: []model.Phase{{Name: "one", Instruction: "first"}, {Name: "two", Instruction: "second"}}}
	a, err := Render(d, task, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Install) != 1 || len(a.Steps) != 2 || a.Steps[0].Phase != "one" || a.Steps[1].Name != "two/agent" ||
		!strings.HasSuffix(a.Steps[1].Argv[1], "-- 'second'") || a.Steps[1].Files[0].Content != "second" {
		t.Errorf("install %d, steps %+v", len(a.Install), a.Steps)
	}
}
