package taskfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Harbor's and terminal-bench's models are pydantic's, in lax mode: a
// numeric field takes a number written as a string. headroom refused
// such a task at its line, a task its harness runs; it reads them now,
// as the harness does, with a warning at each line. What pydantic would
// refuse (a fraction for an integer field, a word) is still refused, and
// headroom's own format stays strict.
func TestNumbersWrittenAsStringsAsTheHarnessReadsThem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lax")
	files := map[string]string{
		"task.toml":              "schema_version = \"1.1\"\n[task]\nname = \"x/lax\"\n[agent]\ntimeout_sec = \"20\"\n[verifier]\ntimeout_sec = ' 30.5 '\n[environment]\nmemory_mb = \"64\"\ncpus = \"1.5\"\n[environment.healthcheck]\ncommand = \"true\"\nretries = \"4\"\n",
		"instruction.md":         "Do it.\n",
		"environment/Dockerfile": "FROM x\n",
		"tests/test.sh":          "#!/bin/bash\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk := l.Task
	if tk.AgentTimeout != 20*time.Second || tk.VerifierTimeout != 30500*time.Millisecond || tk.Resources.MemoryBytes != 64*model.MiB || tk.Resources.CPUs != 1.5 || tk.Healthcheck == nil || tk.Healthcheck.Retries != 4 {
		t.Errorf("agent %s verifier %s memory %d cpus %g healthcheck %+v", tk.AgentTimeout, tk.VerifierTimeout, tk.Resources.MemoryBytes, tk.Resources.CPUs, tk.Healthcheck)
	}
	warned := strings.Join(l.Warnings, "\n")
	for _, want := range []string{"task.toml:5: agent.timeout_sec = \"20\": a number written as a string, read as 20, as Harbor's model reads it", "task.toml:7: verifier.timeout_sec = ' 30.5 '", "task.toml:13: environment.healthcheck.retries"} {
		if !strings.Contains(warned, want) {
			t.Errorf("warnings lack %q:\n%s", want, warned)
		}
	}
	for bad, want := range map[string]string{
		"retries = \"4.5\"":   "task.toml:13: environment.healthcheck.retries takes a whole number",
		"retries = \"four\"":  "task.toml:13: environment.healthcheck.retries takes a whole number",
		"retries = \"4\"\n#x": "",
	} {
		text := strings.Replace(files["task.toml"], "retries = \"4\"", bad, 1)
		if err := os.WriteFile(filepath.Join(dir, "task.toml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTaskDir(dir)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
	// headroom's own format is its own: strict.
	if _, err := Parse("t.toml", []byte("[task]\nname = \"x/t\"\n[environment]\nimage = \"builtin\"\ncpus = \"1\"\n")); err == nil || !strings.Contains(err.Error(), "t.toml:5: environment.cpus takes a number") {
		t.Errorf("headroom TOML: %v", err)
	}

	// terminal-bench's task.yaml.
	tb := filepath.Join(t.TempDir(), "tb")
	if err := os.CopyFS(tb, os.DirFS("../examples/tasks/hello-old")); err != nil {
		t.Fatal(err)
	}
	yaml := "instruction: hi\nmax_agent_timeout_sec: \"60\"\nmax_test_timeout_sec: '45.5'\n"
	if err := os.WriteFile(filepath.Join(tb, "task.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = LoadTaskDir(tb)
	if err != nil {
		t.Fatal(err)
	}
	if l.Task.AgentTimeout != time.Minute || l.Task.VerifierTimeout != 45500*time.Millisecond || !strings.Contains(strings.Join(l.Warnings, "\n"), "task.yaml:2: max_agent_timeout_sec: \"60\": a number written as a string, read as 60") {
		t.Errorf("task.yaml: agent %s verifier %s warnings %q", l.Task.AgentTimeout, l.Task.VerifierTimeout, l.Warnings)
	}
}
