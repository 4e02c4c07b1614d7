package cli

import (
	"testing"

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
