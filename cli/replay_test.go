package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// The vertical slice on the real engine: a Harbor trajectory (terminus
// keystrokes) and a terminal-bench cast whose recorded sessions hold
// 250 MiB in one command, replayed in the task's own image. Uncapped
// they follow their recordings and pass; at 1x the kernel kills in the
// install action, the trial names it as where the replay parted, and the
// report counts the recorded passes that fail here.
func TestReplayDivergesAtTheInstallAt1xAndPassesUncapped(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	r := headroomWithin(t, 8*time.Minute, "replay", "../replay/testdata/harbor-job", "../replay/testdata/tb-run", "--ratios", "1,uncapped", "--concurrency", "2", "--out", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, refused := range []string{"heavy-install__NoTraj: no agent/trajectory.json", "heavy-install__Edits: the agent used tools that are not a shell", "heavy-install.2-of-2.run: an installed agent"} {
		if !strings.Contains(r.stderr, refused) {
			t.Errorf("stderr does not refuse %q:\n%s", refused, r.stderr)
		}
	}
	dir := onlyExperiment(t, root)
	trials, _, err := store.ReadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	install := "head -c 250M /dev/zero | tail -n 1 > /dev/null && echo inst…"
	seen := 0
	for _, tr := range trials {
		rp := tr.Replay
		if rp == nil || rp.Actions != 3 || rp.RecordedOutcome != "passed" {
			t.Errorf("%s at %s: replay record %+v", tr.Task, tr.Ratio, rp)
			continue
		}
		seen++
		if tr.Ratio.Uncapped {
			if tr.Outcome != model.Passed || rp.Ran != 3 || (rp.Divergence != nil && rp.Divergence.Kind != model.DivergedOutput) {
				t.Errorf("%s uncapped: %s, %+v %+v; want passed, following the recording", tr.Task, tr.Outcome, rp, rp.Divergence)
			}
			continue
		}
		d := rp.Divergence
		if tr.Outcome != model.OOMKilled || d == nil || d.Action != 2 || d.Kind != model.DivergedOOM || d.Command != install || !strings.Contains(d.Detail, "tail killed") {
			t.Errorf("%s at 1x: %s, divergence %+v; want oom-killed at action 2 (the install), tail killed", tr.Task, tr.Outcome, d)
		}
		if tr.KilledInStep != install {
			t.Errorf("%s at 1x: killed in step %q, want the install action", tr.Task, tr.KilledInStep)
		}
	}
	if seen != 4 {
		t.Errorf("%d replayed trials, want 2 recordings × 2 ratios", seen)
	}
	for _, want := range []string{"Replayed recordings: the same actions under each ratio", "at 1x: 2 of 2 replays of recorded passes failed here: machine failures by construction", "at uncapped: 0 of 2", "heavy-install__Ab3dE: diverged at action 2/3 `" + install + "`: OOM-killed (tail killed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	noContainersLeft(t, strings.TrimPrefix(dir, root+"/"))
}

func TestReplayRefusesWhatCannotReplay(t *testing.T) {
	r := headroom(t, "replay", "../replay/testdata/harbor-job/heavy-install__NoTraj")
	if r.code != 2 || !strings.Contains(r.stderr, "no agent/trajectory.json: openhands wrote no ATIF trajectory") || !strings.Contains(r.stderr, "nothing to replay") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	r = headroom(t, "replay", "../replay/testdata/tasks")
	if r.code != 2 || !strings.Contains(r.stderr, "holds no Harbor trial") {
		t.Errorf("a tasks directory: exit %d\n%s", r.code, r.stderr)
	}
	r = headroom(t, "replay", "../replay/testdata/tb-run", "--think-time", "fast")
	if r.code != 2 || !strings.Contains(r.stderr, "--think-time: think time \"fast\"") {
		t.Errorf("bad think time: exit %d\n%s", r.code, r.stderr)
	}
	r = headroom(t, "replay", "../replay/testdata/harbor-job", "../replay/testdata/tb-run", "--list")
	if r.code != 0 || !strings.Contains(r.stdout, "heavy-install__Ab3dE: 3 actions, keystrokes (terminus-2), task heavy-install, recorded passed") || !strings.Contains(r.stdout, "2 replay, 3 cannot") {
		t.Errorf("--list: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A trial_name holding a newline and escape sequences forged a line
// ("experiment FAKE") in --list and the progress lines; the trial is now
// refused in one line that names result.json and trial_name.
func TestReplayRefusesATrialNameThatForgesALine(t *testing.T) {
	job := filepath.Join(t.TempDir(), "job")
	if err := os.CopyFS(job, os.DirFS("../replay/testdata/harbor-job")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(job, "heavy-install__Ab3dE", "result.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"trial_name": "heavy-install__Ab3dE"`, `"trial_name": "x\u001b]0;PWNED\u0007\u001b[2J\nexperiment FAKE\r"`, 1))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := headroom(t, "replay", job, "--list")
	for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
		if strings.HasPrefix(line, "experiment FAKE") {
			t.Errorf("a forged line: %q", line)
		}
	}
	if r.code != 0 || !strings.Contains(r.stderr, "result.json's trial_name") || !strings.Contains(r.stdout, "0 replay, 3 cannot") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A recording whose config.task.path holds another task than the one it
// ran is refused by name, as import refuses to read its spec there: the
// directory's task was replayed as the recording's (the two looked in
// near-identical lists, one of them checking the name).
func TestReplayRefusesATaskPathHoldingAnotherTask(t *testing.T) {
	data := filepath.Join(t.TempDir(), "testdata")
	if err := os.CopyFS(data, os.DirFS("../replay/testdata")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(data, "harbor-job", "heavy-install__Ab3dE", "result.json")
	text, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(text), `"task_name": "heavy-install"`, `"task_name": "renamed-task"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := headroom(t, "replay", filepath.Join(data, "harbor-job"), "--list")
	if want := "tasks/heavy-install holds task test/heavy-install, not renamed-task"; !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "heavy-install__Ab3dE:") {
		t.Errorf("exit %d, want the trial refused with %q\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
}
