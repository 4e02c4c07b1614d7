package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/headroom-eval/headroom/model"
)

// Two builds of one uncached task at once (two headroom runs) each tag
// their image; the one tagged first was left untagged on the engine, the
// size of the task's environment, and nothing of headroom's ever took it
// away (the sixteenth attacker's 9). Now the second waits for the first
// (lockBuild) and finds its image cached. The task's Dockerfile labels
// its images with this test's own mark: what the test looks for, and
// removes, is only what it built. (Checking after its build alone, the
// loser missed a tag taken after it looked: a CI rehearsal's failure.)
func TestConcurrentBuildsLeaveNoImage(t *testing.T) {
	needDebian(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mark := fmt.Sprintf("%d", time.Now().UnixNano())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM "+DebianImage+"\nLABEL headroom-test-mark="+mark+"\nRUN sleep 2 && head -c 16 /dev/urandom | od -x > /marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := model.Task{Name: "test/lost-build-" + mark, Build: &model.Build{Context: dir, Dockerfile: "Dockerfile"}}
	ours := filters.NewArgs(filters.Arg("label", "headroom-test-mark="+mark))
	t.Cleanup(func() {
		imgs, _ := testCli.ImageList(context.Background(), image.ListOptions{All: true, Filters: ours})
		for _, im := range imgs {
			_, _ = testCli.ImageRemove(context.Background(), im.ID, image.RemoveOptions{Force: true, PruneChildren: true})
		}
	})
	var wg sync.WaitGroup
	tags, errs := make([]string, 2), make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tags[i], errs[i] = EnsureTaskImage(ctx, testCli, task, func(l string) { t.Logf("build %d: %s", i, l) })
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || tags[0] != tags[1] {
		t.Fatalf("builds: %q %v, %q %v", tags[0], errs[0], tags[1], errs[1])
	}
	dangling := ours.Clone()
	dangling.Add("dangling", "true")
	left, err := testCli.ImageList(ctx, image.ListOptions{Filters: dangling})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%d untagged image(s) of the task left on the engine: %v", len(left), left[0].ID)
	}
}
