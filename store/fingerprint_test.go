package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A resume compares each task as it loads now with what the manifest
// recorded when the experiment started, and says what changed.
func TestTaskEntryChanges(t *testing.T) {
	base := func() model.Task {
		return model.Task{Name: "s/x", Source: "x.toml", Image: "alpine", Capabilities: []string{"CHOWN"},
			Resources: model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB, PidsLimit: 1024},
			Verifier:  model.Step{Name: "verify", Argv: []string{"sh", "-c", "exit 1"}},
			Agents:    []model.Agent{{Name: "oracle", Steps: []model.Step{{Name: "solve", Argv: []string{"true"}}}}}}
	}
	entry := func(t model.Task, fingerprint bool) TaskEntry {
		e := NewTaskEntry(t, nil, 4)
		if fingerprint {
			e.Fingerprint = TaskFingerprint(t)
		}
		return e
	}
	for _, tc := range []struct {
		name        string
		edit        func(*model.Task)
		old         bool // a manifest from before fingerprints
		want, never []string
	}{
		{name: "same", edit: func(*model.Task) {}},
		{name: "same, old manifest", edit: func(*model.Task) {}, old: true},
		{name: "memory and verifier", edit: func(t *model.Task) {
			t.Resources.MemoryBytes = 512 * model.MiB
			t.Verifier.Argv = []string{"sh", "-c", "exit 0"}
		}, want: []string{"memory 64MiB → 512MiB", "verifier changed"}, never: []string{"resources changed"}},
		{name: "memory, old manifest", edit: func(t *model.Task) { t.Resources.MemoryBytes = 512 * model.MiB }, old: true, want: []string{"memory 64MiB → 512MiB"}},
		{name: "verifier, old manifest: not recorded", edit: func(t *model.Task) { t.Verifier.Argv = []string{"true"} }, old: true},
		{name: "cpus", edit: func(t *model.Task) { t.Resources.CPUs = 2 }, want: []string{"cpus 1 → 2"}},
		{name: "capabilities", edit: func(t *model.Task) { t.Capabilities = append(t.Capabilities, "SYS_PTRACE") }, want: []string{"environment changed"}},
		{name: "image", edit: func(t *model.Task) { t.Image = "debian" }, want: []string{"image or build changed"}},
		{name: "agent steps", edit: func(t *model.Task) { t.Agents[0].Steps[0].Argv = []string{"sleep", "1"} }, want: []string{"oracle agent's steps changed"}},
		{name: "agent removed", edit: func(t *model.Task) { t.Agents = nil }, want: []string{"oracle agent removed"}},
		{name: "timeouts", edit: func(t *model.Task) { t.AgentTimeout = 5 }, want: []string{"time limits changed"}},
		{name: "source moved only", edit: func(t *model.Task) { t.Source = "elsewhere/x.toml" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := entry(base(), !tc.old)
			now := base()
			tc.edit(&now)
			got := strings.Join(e.Changes(now), "; ")
			if len(tc.want) == 0 && got != "" {
				t.Errorf("changes %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("changes %q, want %q", got, w)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(got, n) {
					t.Errorf("changes %q hold %q", got, n)
				}
			}
		})
	}
}

// A task directory moved (or reached by another path) is the same task;
// a file its verifier or oracle uploads, edited, is not; and a manifest
// from before the files were hashed (its fingerprint of host paths)
// still resumes its unedited task.
func TestFingerprintHashesTheTaskFiles(t *testing.T) {
	mk := func(root, test string) model.Task {
		for p, body := range map[string]string{"tests/test.sh": test, "solution/solve.sh": "echo hi\n", "environment/Dockerfile": "FROM debian\n"} {
			full := filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return model.Task{Name: "h/x", Dir: root, Source: filepath.Join(root, "task.toml"), Build: &model.Build{Context: filepath.Join(root, "environment"), Dockerfile: "Dockerfile"},
			Verifier: model.Step{Name: "verify", Argv: []string{"bash", "/tests/test.sh"}, Files: []model.Upload{{From: filepath.Join(root, "tests"), To: "/tests"}, {To: "/tmp", Name: "x", Content: "inline"}}},
			Agents:   []model.Agent{{Name: "oracle", Steps: []model.Step{{Name: "solve", Argv: []string{"bash", "/solution/solve.sh"}, Files: []model.Upload{{From: filepath.Join(root, "solution"), To: "/solution"}}}}}}}
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "moved")
	orig := mk(a, "exit 0\n")
	entry := NewTaskEntry(orig, nil, 2)
	entry.Fingerprint = TaskFingerprint(orig)
	if ch := entry.Changes(mk(b, "exit 0\n")); len(ch) > 0 {
		t.Errorf("the same task moved: changes %v, want none", ch)
	}
	if ch := strings.Join(entry.Changes(mk(b, "exit 1\n")), "; "); !strings.Contains(ch, "verifier changed") {
		t.Errorf("tests/test.sh edited: changes %q, want the verifier changed", ch)
	}
	edited := mk(a, "exit 0\n")
	os.WriteFile(filepath.Join(a, "environment", "Dockerfile"), []byte("FROM alpine\n"), 0o644)
	if ch := strings.Join(entry.Changes(edited), "; "); !strings.Contains(ch, "image or build changed") {
		t.Errorf("the Dockerfile edited: changes %q, want the build changed", ch)
	}
	inline := mk(b, "exit 0\n")
	inline.Verifier.Files[1].Content = "other"
	os.WriteFile(filepath.Join(a, "environment", "Dockerfile"), []byte("FROM debian\n"), 0o644)
	if ch := strings.Join(entry.Changes(inline), "; "); !strings.Contains(ch, "verifier changed") {
		t.Errorf("an inline upload edited: changes %q, want the verifier changed", ch)
	}
	// A manifest written before: paths, no version mark.
	old := NewTaskEntry(orig, nil, 2)
	old.Fingerprint = fingerprintOf(orig)
	if ch := old.Changes(mk(a, "exit 0\n")); len(ch) > 0 {
		t.Errorf("an older manifest's unedited task: changes %v, want none", ch)
	}
}
