package parity

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fields(ds []diff) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.field)
	}
	slices.Sort(out)
	return out
}

// The checks find what a loader gets wrong, and nothing in a task read
// right: each case is a task as read, against the same files.
func TestChecksCatchMisreads(t *testing.T) {
	harbor := t.TempDir()
	write(t, harbor, map[string]string{
		"task.toml": `version = "1.0"
[verifier]
[agent]
timeout_sec = 900.0
[environment]
cpus = 2
memory_mb = 4096.0
docker_image = "alexgshaw/x:20251031"
allow_internet = false
workdir = "/app"
`,
		"instruction.md":                      "Do the thing.\n",
		"environment/docker-compose.yaml":     "services:\n  main:\n    working_dir: /app\n    environment:\n      - LANG=C.UTF-8\n  db:\n    image: postgres\n",
		"environment/data/docker-compose.yml": "services: {a: {}, b: {}}\n",
	})
	right := model.Task{
		Dir: harbor, Instruction: "Do the thing.", Image: "alexgshaw/x:20251031", Network: "none",
		Resources:    model.Resources{CPUs: 2, MemoryBytes: 4096 * model.MiB},
		AgentTimeout: 900 * time.Second, VerifierTimeout: 600 * time.Second,
		Env: []string{"LANG=C.UTF-8"},
	}
	ds, err := checkHarbor(right)
	if err != nil {
		t.Fatal(err)
	}
	// This task sets no workdir and no sidecars (fields the model is
	// gaining): those are all the checks find.
	if got, want := fields(ds), []string{"compose_working_dir", "sidecars", "workdir"}; !slices.Equal(got, want) {
		t.Errorf("a task read right but for its workdir and sidecars: %v, want %v", got, want)
	}

	wrong := right
	wrong.Resources = model.Resources{CPUs: 1, MemoryBytes: 2048 * model.MiB}
	wrong.AgentTimeout, wrong.VerifierTimeout = 600*time.Second, 300*time.Second
	wrong.Instruction, wrong.Image, wrong.Network = "base", "other", "bridge"
	wrong.Env = []string{"X=${Y:-z}"}
	ds, err = checkHarbor(wrong)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agent_timeout", "compose_environment", "compose_working_dir", "cpus", "docker_image", "env_template", "instruction", "memory", "network", "sidecars", "verifier_timeout", "workdir"}
	if got := fields(ds); !slices.Equal(got, want) {
		t.Errorf("a task read wrong: %v, want %v", got, want)
	}

	tb1 := t.TempDir()
	write(t, tb1, map[string]string{
		"task.yaml": `descriptions:
  - key: base
    description: Solve it.
parser_name: swebench
max_test_timeout_sec: 1800.0
`,
		"docker-compose.yaml": "services:\n  client:\n    build: {dockerfile: Dockerfile}\n",
	})
	ds, err = checkTB1(model.Task{Dir: tb1, Instruction: "base", AgentTimeout: 360 * time.Second, VerifierTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fields(ds), []string{"instruction", "parser", "verifier_timeout"}; !slices.Equal(got, want) {
		t.Errorf("a terminal-bench task read wrong: %v, want %v", got, want)
	}
}
