package kube

import (
	"os"
	"testing"

	"github.com/headroom-eval/headroom/internal/enginetest"
)

// taskRepo is the repository the local engine tags task images in
// (runner/docker's TaskRepo, which this package does not import).
const taskRepo = "headroom-task"

// The task images these tests' own tasks build on the local engine
// before they go to the cluster (test/compose-sidecar and its service's)
// are removed once the tests have run, as runner/docker's tests remove
// theirs; one that was there before is left.
func TestMain(m *testing.M) {
	before := enginetest.TaskImages(taskRepo, "test-")
	code := m.Run()
	enginetest.RemoveNewImages(before, enginetest.TaskImages(taskRepo, "test-"))
	os.Exit(code)
}
