package docker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// The agent replaced /tests with a file: the verifier's copy in is the
// task's doing (runner.ErrTaskInterfered), not the engine's (issue #40,
// item 12: the trial was engine-lost). Under the step driver and the
// engine's exec alike.
func TestCopyInOverAFileTheTaskLeft(t *testing.T) {
	needDebian(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "test.sh"), []byte("#!/bin/sh\n"), 0o755)
	for _, exec := range []bool{false, true} {
		b := newBackend(t, Options{ExecSteps: exec})
		task := model.Task{Name: "test/tests-a-file", Image: DebianImage, IdleCommand: []string{"sleep", "infinity"}, Network: "none",
			Resources: model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}}
		task.SetProfile(model.ProfileHarbor)
		tr := model.Trial{ID: "tests-a-file", Task: task.Name, Ratio: model.Uncapped, Policy: model.NewPolicy(task.Resources, model.Uncapped, 2)}
		sb, err := b.Start(context.Background(), runner.StartRequest{Experiment: testExperimentPrefix, Trial: tr, Task: task})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range sb.Samples() {
			}
		}()
		if r, err := sb.Exec(context.Background(), []string{"sh", "-c", "rm -rf /tests; echo x > /tests"}, nil, "", func(string, string) {}); err != nil || r.ExitCode != 0 {
			t.Fatalf("exec: %v %+v", err, r)
		}
		err = sb.CopyIn(context.Background(), []model.Upload{{From: filepath.Join(dir, "tests"), To: "/tests"}})
		if !errors.Is(err, runner.ErrTaskInterfered) {
			t.Errorf("exec steps %v: copy in over the task's file: %v, want the task's doing", exec, err)
		}
		sb.Remove(context.Background())
	}
}
