package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/agents"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
)

// calibrationExperiment writes an experiment of one task at 1x and
// uncapped: repeats 1–4 are killed at 1x and need 200 MiB uncapped; the
// last repeat is killed at 1x and, when cancelled is set, was cancelled
// uncapped (else it needs 210 MiB there).
func calibrationExperiment(t *testing.T, task model.Task, repeats int, cancelled bool) (root, id string) {
	t.Helper()
	root = t.TempDir()
	ratios := []model.Ratio{{K: 1}, model.Uncapped}
	m := store.Manifest{ID: "20261130-120000-ca11", Created: time.Now(), Status: "interrupted", Ratios: ratios, Repeats: repeats, Seed: 1,
		Tasks: []store.TaskEntry{store.NewTaskEntry(task, ratios, 2)}}
	// Where the task came from and its fingerprint, as a run records
	// them (the task as a resume reloads it).
	if abs, err := filepath.Abs(task.Source); err == nil {
		m.Tasks[0].SourcePath = abs
	}
	if tasks, err := agents.RecordedTasks(m); err == nil {
		m.Tasks[0].Fingerprint = store.TaskFingerprint(tasks[0])
	} else {
		t.Fatal(err)
	}
	e, err := store.Create(root, m)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for rep := 1; rep <= repeats; rep++ {
		for _, r := range ratios {
			tr := model.TrialResult{Trial: model.Trial{ID: "t" + r.String() + string(rune('0'+rep)), Task: task.Name, Agent: "oracle", Ratio: r, Repeat: rep, Seed: uint64(rep), Policy: model.NewPolicy(task.Resources, r, 2)},
				Start: t0, End: t0.Add(time.Second), Outcome: model.Passed, PeakWorkingSetBytes: int64(200+2*rep) * model.MiB}
			switch {
			case !r.Uncapped:
				tr.Outcome, tr.PeakWorkingSetBytes = model.OOMKilled, tr.Policy.HardLimitBytes
				tr.OOMs = []model.OOMEvent{{At: t0, Step: "solve", Source: "events"}}
			case rep == repeats && cancelled:
				tr.Outcome = model.Cancelled
			}
			if err := e.Append(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return root, m.ID
}

// copyTaskDir copies the Harbor example task into a temporary directory.
func copyTaskDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fit-model")
	if out, err := exec.Command("cp", "-r", "../examples/tasks/fit-model", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return dir
}

func loadTaskDir(t *testing.T, dir string) model.Task {
	t.Helper()
	l, err := taskfile.LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l.Task
}

// A trajectory killed at 1x whose uncapped run was cancelled is not
// "killed at every ratio tried": the cancelled run is not evidence.
func TestCalibrateCancelledIsNotEvidence(t *testing.T) {
	task := loadTaskDir(t, copyTaskDir(t))
	root, id := calibrationExperiment(t, task, 5, true)
	r := headroom(t, "calibrate", id, "--out", root)
	if r.code != 0 || strings.Contains(r.stdout, "every ratio tried") || !strings.Contains(r.stdout, "1 cancelled trial is not evidence") || !strings.Contains(r.stdout, "headroom run --resume "+id+" --out "+root) {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// calibrate --write on a Terminal-Bench 2.0 / Harbor task directory edits
// task.toml's [environment] memory_mb, keeps the rest of the file, and
// states the limit against the task's spec (64 MiB). memory_mb is Harbor's
// whole spec, so the 1x limit: it gets the recommended limit. Seen before:
// --write put the guarantee there, and 1x still failed 4 of 20 after it.
func TestCalibrateWritesHarborTaskToml(t *testing.T) {
	dir := copyTaskDir(t)
	task := loadTaskDir(t, dir)
	root, id := calibrationExperiment(t, task, 4, false)
	file := filepath.Join(dir, "task.toml")
	before, _ := os.ReadFile(file)
	r := headroom(t, "calibrate", id, "--out", root, "--write", "--target", "0.1%")
	after, _ := os.ReadFile(file)
	if r.code != 0 || !strings.Contains(r.stderr, "wrote "+file) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "target share failing at the limit 0.1%") {
		t.Errorf("--target 0.1%% not printed as such:\n%s", r.stdout)
	}
	// need max 208 MiB + 10% → 232 MiB = 3.6x the 64 MiB spec.
	if !strings.Contains(r.stdout, "232MiB (3.6x spec)") {
		t.Errorf("limit not stated against the spec:\n%s", r.stdout)
	}
	want := strings.Replace(string(before), "memory_mb = 64\n", "memory_mb = 232  # headroom calibrate "+id+": the 1x hard limit (memory_mb is the whole spec), raised from 64MiB; median need 204MiB (Kaplan–Meier, 4 of 8 runs censored)\n", 1)
	if string(after) != want {
		t.Errorf("task.toml after --write:\n%s\nwant:\n%s", after, want)
	}
	if !strings.Contains(r.stderr, "the recommended hard limit 232MiB") || !strings.Contains(r.stdout, " drawn ") {
		t.Errorf("--write does not say what it wrote and why, or the task is not read as drawing its size:\n%s%s", r.stdout, r.stderr)
	}
	if got := loadTaskDir(t, dir).Resources.MemoryBytes; got != 232*model.MiB {
		t.Errorf("reloaded memory %d", got)
	}
}

// An edit that cannot be made is an error: exit non-zero, file untouched.
func TestCalibrateWriteFailureExitsNonZero(t *testing.T) {
	dir := copyTaskDir(t)
	task := loadTaskDir(t, dir)
	root, id := calibrationExperiment(t, task, 4, false)
	file := filepath.Join(dir, "task.toml")
	if err := os.WriteFile(file, []byte("[environment]\nmemory = \"64M\"\nmemory_mb = 64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := headroom(t, "calibrate", id, "--out", root, "--write")
	after, _ := os.ReadFile(file)
	if r.code == 0 || !strings.Contains(r.stderr, "not written") || string(after) != "[environment]\nmemory = \"64M\"\nmemory_mb = 64\n" {
		t.Errorf("exit %d\n%s%s\nfile now:\n%s", r.code, r.stdout, r.stderr, after)
	}
}

// calibrate with no experiment says what it needs in its own words (it
// gave cobra's "accepts 1 arg(s), received 0"), exit 2.
func TestCalibrateNeedsAnExperiment(t *testing.T) {
	r := headroom(t, "calibrate")
	if r.code != 2 || !strings.Contains(r.stderr, "calibrate needs an experiment") || strings.Contains(r.stderr, "accepts 1 arg") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// --write-to writes the edited task file elsewhere, the task's own file
// untouched; the table shows the median's interval though runs failed at
// their limit (it showed none whenever one had), and the file's note gives
// the median as the table does (289M beside 288.4MiB before).
func TestCalibrateWriteToAndOneMedian(t *testing.T) {
	dir := copyTaskDir(t)
	task := loadTaskDir(t, dir)
	root, id := calibrationExperiment(t, task, 4, false)
	file := filepath.Join(dir, "task.toml")
	before, _ := os.ReadFile(file)
	to := filepath.Join(t.TempDir(), "calibrated.toml")
	r := headroom(t, "calibrate", id, "--out", root, "--write-to", to, "--target", "0.1%")
	after, _ := os.ReadFile(file)
	written, _ := os.ReadFile(to)
	if r.code != 0 || string(after) != string(before) || !strings.Contains(r.stderr, "wrote "+to) {
		t.Fatalf("exit %d, task.toml changed %v\n%s%s", r.code, string(after) != string(before), r.stdout, r.stderr)
	}
	if !strings.Contains(string(written), "memory_mb = 232  # headroom calibrate "+id) || !strings.Contains(string(written), "median need 204MiB") {
		t.Errorf("written file:\n%s", written)
	}
	if !strings.Contains(r.stdout, "204MiB (64MiB–?)") {
		t.Errorf("no median interval in the table:\n%s", r.stdout)
	}
}

// calibrate --write writes only into the task the experiment ran: one
// whose agent changed since (or whose recorded source now holds another
// task) is not written, exit 1, the file as it was. It rewrote a task
// changed since, as resume refuses to (the twenty-fifth attacker's 3).
func TestCalibrateWriteRefusesATaskChangedSince(t *testing.T) {
	dir := copyTaskDir(t)
	task := loadTaskDir(t, dir)
	root, id := calibrationExperiment(t, task, 4, false)
	file := filepath.Join(dir, "task.toml")
	before, _ := os.ReadFile(file)
	if err := os.WriteFile(filepath.Join(dir, "solution", "solve.sh"), []byte("#!/bin/bash\npython3 -c 'bytearray(90<<20)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := headroom(t, "calibrate", id, "--out", root, "--write", "--target", "0.1%")
	after, _ := os.ReadFile(file)
	if r.code != 1 || !strings.Contains(r.stderr, "the task changed since experiment "+id+" ran it (oracle agent's steps changed)") || string(after) != string(before) {
		t.Errorf("exit %d\n%s%s\nfile now:\n%s", r.code, r.stdout, r.stderr, after)
	}
	// The recorded source pointed at another task's file.
	other := copyTaskDir(t)
	otherFile := filepath.Join(other, "task.toml")
	text, _ := os.ReadFile(otherFile)
	renamed := strings.Replace(string(text), "name = \"examples/fit-model\"", "name = \"examples/victim\"", 1)
	if renamed == string(text) {
		t.Fatalf("the example's name is not where the test looks:\n%s", text)
	}
	if err := os.WriteFile(otherFile, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(root, id)
	m, err := store.ReadManifest(exp)
	if err != nil {
		t.Fatal(err)
	}
	m.Tasks[0].SourcePath = otherFile
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(exp, "manifest.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	r = headroom(t, "calibrate", id, "--out", root, "--write", "--target", "0.1%")
	if after, _ := os.ReadFile(otherFile); r.code != 1 || !strings.Contains(r.stderr, "now defines task examples/victim, not examples/fit-model") || string(after) != renamed {
		t.Errorf("another task's file: exit %d\n%s%s\nfile now:\n%s", r.code, r.stdout, r.stderr, after)
	}
}
