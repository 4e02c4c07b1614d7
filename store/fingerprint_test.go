package store

import (
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
		}, want: []string{"memory 64MiB → 512MiB", "verifier command changed"}, never: []string{"resources changed"}},
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
