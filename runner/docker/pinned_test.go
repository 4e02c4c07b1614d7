package docker

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/headroom-eval/headroom/model"
)

// A trial's container is made from the image id the sweep checked
// (Task.PinnedImage), not its tag: a tag someone moves to another image
// while the sweep runs is not what later trials run (the twelfth
// attacker's 3: trials after a `docker tag` ran the planted image, and
// were recorded as the task's own failures). Here the tag points at the
// workload image, which has no shell, by the time the trial starts; the
// task's commands need the Debian image's sh, which it was pinned to.
func TestTrialRunsThePinnedImageNotTheTag(t *testing.T) {
	needEngine(t)
	needDebian(t)
	ctx := context.Background()
	tag := fmt.Sprintf("headroom-test-pinned:%d", os.Getpid())
	debian, _, err := testCli.ImageInspectWithRaw(ctx, DebianImage)
	if err != nil {
		t.Fatal(err)
	}
	if err := testCli.ImageTag(ctx, testImage, tag); err != nil { // the tag moved
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = testCli.ImageRemove(context.Background(), tag, image.RemoveOptions{}) }) // the tag only: the image is another's
	task := parseTask(t, `
[task]
name = "test/pinned"
[environment]
image = "`+tag+`"
memory = "64M"
idle_command = ["sleep", "infinity"]
[verifier]
command = ["sh", "-c", "test -f /etc/debian_version"]
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "shell"
  command = ["sh", "-c", "echo from debian"]
`)
	task.PinnedImage = debian.ID
	results, _ := sweep(t, newBackend(t, Options{ExecSteps: true}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, ctx, nil)
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	if r := results[0]; r.Outcome != model.Passed {
		t.Errorf("%s (%s): want passed, run from the pinned Debian image, not what the tag points at now", r.Outcome, r.Reason)
	}
}
