package importer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
)

// Two Harbor jobs at two resource settings become one experiment with
// two ratios: Harbor's Docker default is 1x (each container limited to
// its task's spec), GKE's memory_limit_multiplier 3 is 3x. Each trial's
// exception becomes its outcome where it tells; what Harbor does not
// record is said, not invented.
func TestHarborJobsAtTwoSettings(t *testing.T) {
	im, err := Harbor([]string{"testdata/harbor/tb2-docker-1x", "testdata/harbor/tb2-gke-3x"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := im.Manifest
	if got := []model.Ratio{{K: 1}, {K: 3}}; len(m.Ratios) != 2 || m.Ratios[0] != got[0] || m.Ratios[1] != got[1] {
		t.Fatalf("ratios %v, want 1x and 3x", m.Ratios)
	}
	if len(im.Trials) != 36 || m.Trials != 36 || m.Repeats != 3 || len(m.Tasks) != 6 {
		t.Fatalf("%d trials (manifest %d), repeats %d, %d tasks: want 36, 3 repeats, 6 tasks", len(im.Trials), m.Trials, m.Repeats, len(m.Tasks))
	}
	count := map[model.Outcome]int{}
	for _, r := range im.Trials {
		if r.Ratio.K == 1 {
			count[r.Outcome]++
		}
		if r.Imported == nil || r.Imported.Harness != "harbor" || !strings.Contains(strings.Join(r.Imported.Unknown, ","), "memory trace") {
			t.Fatalf("%s: imported %+v, want the job named and the unknowns listed", r.ID, r.Imported)
		}
		if r.Agent != "terminus-2@anthropic/claude-sonnet-4-5" || r.PeakWorkingSetBytes != 0 || r.KernelPeakBytes != 0 || r.Samples != 0 {
			t.Fatalf("%s: agent %q peaks %d/%d samples %d: want the model in the agent, no invented telemetry", r.ID, r.Agent, r.PeakWorkingSetBytes, r.KernelPeakBytes, r.Samples)
		}
	}
	if count[model.OOMKilled] != 3 || count[model.Timeout] != 1 || count[model.InfraError] != 1 {
		t.Errorf("1x outcomes %v: want 3 oom-killed (exit 137), 1 timeout, 1 infra-error (environment)", count)
	}
	var env, oom model.TrialResult
	for _, r := range im.Trials {
		if r.Cause == model.CauseEnvironment {
			env = r
		}
		if r.Outcome == model.OOMKilled && oom.ID == "" {
			oom = r
		}
	}
	if !strings.Contains(env.Reason, "EnvironmentStartTimeoutError") || env.Imported.Exception != "EnvironmentStartTimeoutError" {
		t.Errorf("environment failure: %s %q", env.Outcome, env.Reason)
	}
	if !strings.Contains(oom.Reason, "exited 137") || !strings.Contains(oom.Reason, "not known") || oom.Cause != model.CauseNone {
		t.Errorf("exit 137: cause %q reason %q: want the kill said, its limit not claimed", oom.Cause, oom.Reason)
	}
	phases := map[string]bool{}
	for _, s := range oom.Steps {
		phases[s.Phase] = true
		if s.ExitUnknown == "" || s.End.Before(s.Start) {
			t.Errorf("step %+v: want Harbor's timing with the exit status unknown", s)
		}
	}
	if !phases[model.PhaseAgent] || !phases[model.PhaseVerifier] {
		t.Errorf("phases %v: want the agent's and the verifier's durations", phases)
	}
	if len(m.Imported) != 2 || m.Imported[1].Settings != "gke, memory_limit_multiplier=3" {
		t.Errorf("sources %+v", m.Imported)
	}
}

// An absolute override whose tasks cannot be read is a named
// configuration, not a made-up multiple.
func TestHarborOverrideIsANamedConfiguration(t *testing.T) {
	j := harborJob{dir: "jobs/big", results: []harborResult{{}}, files: []string{"x"}}
	mem := 8192.0
	j.results[0].Config.Environment.OverrideMemoryMB = &mem
	r, s := harborJobRatio(j, map[string]*model.Resources{})
	if r.Name != "docker-override_memory_mb8192" || s != "docker, override_memory_mb=8192" {
		t.Errorf("ratio %v settings %q", r, s)
	}
}

// Bad or partial job directories: one clear line each, and nothing is
// written.
func TestHarborBadDirectories(t *testing.T) {
	root := t.TempDir()
	_, err := Harbor([]string{"testdata/bad/empty-job", "testdata/bad/broken-json", "testdata/bad/partial", "testdata/bad/no-such-dir"}, Options{})
	probs, ok := err.(Problems)
	if !ok {
		t.Fatalf("error %v, want problems", err)
	}
	want := []string{"empty-job: not a Harbor job directory", "broken-json/fix-git__aaaaaaa/result.json: not a Harbor trial result: line", "partial: 1 trial never finished", "no-such-dir: "}
	if len(probs) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d lines", probs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(probs[i], w) || strings.Contains(probs[i], "\n") {
			t.Errorf("problem %d %q, want one line with %q", i, probs[i], w)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Errorf("something was written: %v", entries)
	}
	im, err := Harbor([]string{"testdata/bad/partial"}, Options{AllowPartial: true})
	if err != nil || len(im.Trials) != 1 || len(im.Notes) != 1 || !strings.Contains(im.Notes[0], "1 unfinished trial left out") {
		t.Errorf("--allow-partial: %d trials, notes %q, %v", len(im.Trials), im.Notes, err)
	}
}

// Write is all or nothing: the experiment appears whole or not at all,
// and opens as any experiment does.
func TestWriteWholeOrNothing(t *testing.T) {
	root := t.TempDir()
	im, err := Harbor([]string{"testdata/harbor/tb2-gke-3x"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := Write(root, im)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := store.ReadTrials(dir)
	if err != nil || len(got) != 18 {
		t.Fatalf("read back %d trials, %v", len(got), err)
	}
	list, _ := store.List(root)
	if len(list) != 1 || list[0].Manifest.ID != im.Manifest.ID {
		t.Errorf("listing %v, want the import alone (no staging directory left)", list)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("root holds %v", entries)
	}
	// A root where the experiment cannot go: nothing is left half-made.
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.MkdirAll(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if _, err := Write(ro, im); err == nil {
			t.Errorf("wrote under a read-only root")
		}
		if entries, _ := os.ReadDir(ro); len(entries) != 0 {
			t.Errorf("a failed write left %v", entries)
		}
	}
}

// A terminal-bench 1 run: resolved is passed, its failure modes the
// outcomes they name, under the harness's container (CPU scale, 1x).
func TestTerminalBenchRun(t *testing.T) {
	im, err := TerminalBench([]string{"testdata/tb1/2026-11-22__10-00-00"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if im.Manifest.Scale != model.ScaleCPU || len(im.Manifest.Ratios) != 1 || im.Manifest.Ratios[0] != (model.Ratio{K: 1}) {
		t.Errorf("scale %q ratios %v, want cpu at 1x", im.Manifest.Scale, im.Manifest.Ratios)
	}
	var got []string
	for _, r := range im.Trials {
		got = append(got, string(r.Outcome))
	}
	if strings.Join(got, " ") != "passed failed passed timeout failed timeout" {
		t.Errorf("outcomes %v", got)
	}
	if _, err := TerminalBench([]string{"testdata/harbor/tb2-gke-3x"}, Options{}); err == nil || !strings.Contains(err.Error(), "not a terminal-bench run directory") {
		t.Errorf("a Harbor job as a terminal-bench run: %v", err)
	}
}

// A killed import's staging directory is removed by the next import: a
// `kill -9` left .importing-N behind for good (the twenty-fourth
// attacker's). One whose import still holds it, and one made a moment
// ago (not yet locked), stay.
func TestWriteRemovesAKilledImportsStage(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-2 * time.Minute)
	for _, name := range []string{".importing-dead", ".importing-live", ".importing-young"} {
		if err := os.MkdirAll(filepath.Join(root, name, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
		if name != ".importing-young" {
			if err := os.Chtimes(filepath.Join(root, name), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	lk, err := store.LockExperiment(filepath.Join(root, ".importing-live"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	im, err := Harbor([]string{"testdata/harbor/tb2-gke-3x"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(root, im); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{".importing-live", ".importing-young", im.Manifest.ID}; !slices.Equal(names, want) {
		t.Errorf("root holds %q, want %q", names, want)
	}
}

// The task directory a Harbor trial's spec is read from is the trial's
// (by name) and is said: the same job imported 32x or 2x by whichever
// task directory lay under the working directory, and nothing said which
// (the twenty-sixth attacker's 3). From the directory Harbor ran in
// (jobs/<job>'s grandparent) when the working directory has none.
func TestHarborTaskDirIsTheTrialsAndSaid(t *testing.T) {
	root := t.TempDir()
	job := filepath.Join(root, "jobs", "2026-12-07__05-00-00")
	task := filepath.Join(root, "tasks", "fix-git")
	for p, text := range map[string]string{
		filepath.Join(task, "task.toml"):              "[environment]\nmemory_mb = 1024\n",
		filepath.Join(task, "instruction.md"):         "do it\n",
		filepath.Join(task, "environment/Dockerfile"): "FROM x\n",
		filepath.Join(task, "tests/test.sh"):          "#!/bin/bash\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var r harborResult
	r.TaskName = "fix-git"
	r.Config.Task.Path = "tasks/fix-git"
	t.Chdir(t.TempDir()) // a working directory with no tasks/
	dir, l, err := taskfile.FindRecordedTaskDir(job, r.Config.Task.Path, r.TaskName)
	if err != nil || dir != task || l.Task.Resources.MemoryBytes != 1024*model.MiB {
		t.Errorf("found %q (%v), want %s", dir, err, task)
	}
	r.TaskName = "another-task"
	if dir, _, err := taskfile.FindRecordedTaskDir(job, r.Config.Task.Path, r.TaskName); err == nil {
		t.Errorf("another task's directory %s taken for the trial's", dir)
	} else if !strings.Contains(err.Error(), "holds task fix-git, not another-task") {
		t.Errorf("another task's directory: %v", err)
	}
}
