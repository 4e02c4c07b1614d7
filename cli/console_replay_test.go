package cli

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/replay"
	"github.com/headroom-eval/headroom/ui"
)

// The console's --replay recordings are tasks with the replay agent, and
// its sweeps store each replay's comparison with its recording, as
// `headroom replay` does.
func TestConsoleReplaysCarryTheirComparison(t *testing.T) {
	set, err := loadReplays([]string{"../replay/testdata/harbor-job"}, nil, replay.Options{Binary: "/bin/hr-workload", Think: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.tasks) != 1 || set.tasks[0].Name != "heavy-install__Ab3dE" || len(set.tasks[0].Agents) != 1 || set.tasks[0].Agents[0].Name != replay.AgentName || len(set.refused) != 2 {
		t.Fatalf("tasks %+v refused %+v", set.tasks, set.refused)
	}
	l := &consolePort{out: t.TempDir(), annotate: set.annotate}
	s := l.sessionSpec(ui.LaunchSpec{Ratios: []model.Ratio{{K: 1}}, Repeats: 1, Concurrency: 1})
	if s.Annotate == nil {
		t.Fatal("the console's sweep does not annotate replays")
	}
	res := model.TrialResult{Trial: model.Trial{Task: "heavy-install__Ab3dE"}}
	s.Annotate(&res)
	if res.Replay == nil || res.Replay.Actions != 3 || res.Replay.Divergence == nil || res.Replay.Divergence.Kind != model.DivergedNotRun {
		t.Errorf("replay record %+v, want 3 actions, none run", res.Replay)
	}
	other := model.TrialResult{Trial: model.Trial{Task: "builtin/swe-edit"}}
	if s.Annotate(&other); other.Replay != nil {
		t.Errorf("a task that is not a replay got %+v", other.Replay)
	}
}

// A recording whose two actions are 100 years apart replays with that
// gap cut to the agent's own time limit (the task's 120 s), and says so
// in the listing and in each replayed trial's record: taken whole, it
// timed out at every ratio.
func TestReplayCapsAThinkTimeGapAtTheAgentsLimit(t *testing.T) {
	job := t.TempDir()
	src := "../replay/testdata/harbor-job"
	trial := filepath.Join(job, "heavy-install__Ab3dE")
	if err := os.MkdirAll(filepath.Join(trial, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.json", "heavy-install__Ab3dE/config.json", "heavy-install__Ab3dE/result.json", "heavy-install__Ab3dE/agent/trajectory.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "trajectory.json") {
			late := strings.Replace(string(b), "2026-11-30T12:00:13", "2126-11-30T12:00:13", 1)
			if late == string(b) {
				t.Fatal("the fixture's last step moved")
			}
			b = []byte(late)
		}
		if err := os.WriteFile(filepath.Join(job, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := recordedTasks("../replay/testdata/tasks", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	set, err := loadReplays([]string{job}, cat, replay.Options{Binary: "/bin/hr-workload", Think: 1})
	if err != nil || len(set.tasks) != 1 {
		t.Fatalf("tasks %+v refused %+v: %v", set.tasks, set.refused, err)
	}
	limit := set.tasks[0].AgentTimeout
	if limit != 120*time.Second {
		t.Fatalf("the task's agent limit is %s, want the fixture's 120s", limit)
	}
	capped := 0
	for _, s := range set.tasks[0].Agents[0].Steps {
		i := slices.Index(s.Argv, "--think")
		if i < 0 {
			continue
		}
		d, err := time.ParseDuration(s.Argv[i+1])
		if err != nil || d > limit {
			t.Errorf("step %q thinks %s before its next action, over the agent's %s limit", s.Name, s.Argv[i+1], limit)
		}
		if d == limit {
			capped++
		}
	}
	if capped != 1 {
		t.Errorf("%d gaps cut to the limit, want 1", capped)
	}
	var list strings.Builder
	listReplays(&list, set)
	res := model.TrialResult{Trial: model.Trial{Task: "heavy-install__Ab3dE"}}
	set.annotate(&res)
	for what, text := range map[string]string{"--list": list.String(), "the record": res.Replay.ThinkCapped} {
		if !strings.Contains(text, "1 recorded think-time gap (after action 2) longer than the agent's time limit (2m0s; the longest 876576h0m1s) cut to it") {
			t.Errorf("%s does not say the gap was cut: %q", what, text)
		}
	}
}
