package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
)

// A task image is built again when an image its Dockerfile builds FROM
// is: keyed by its context alone, a task FROM a local base rebuilt from
// `echo v1` to `echo v2` kept its v1 image, and every trial graded the
// old environment (the fifteenth attacker's 2), where Harbor's `docker
// compose build` builds on the base as the engine holds it now.
func TestTaskImageFollowsItsBase(t *testing.T) {
	needEngine(t)
	needDebian(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	base := fmt.Sprintf("headroom-test-base-%d:1", time.Now().UnixNano())
	buildBase := func(v string) {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM "+DebianImage+"\nRUN echo "+v+" > /marker\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := buildContext(ctx, testCli, base, model.Build{Context: dir, Dockerfile: "Dockerfile"}, func(string) {}); err != nil {
			t.Fatal(err)
		}
	}
	buildBase("v1")
	removeImageAfter(t, base)

	dir := filepath.Join(t.TempDir(), "onbase")
	writeTaskFiles(t, dir, map[string]string{
		"task.toml":              "schema_version = \"1.1\"\n[task]\nname = \"test/onbase\"\n[environment]\nmemory_mb = 64\nallow_internet = false\n",
		"instruction.md":         "Do it.\n",
		"environment/Dockerfile": "FROM " + base + "\nRUN cat /marker\n",
		"tests/test.sh":          "#!/bin/bash\ngrep -q v2 /marker && echo 1 > /logs/verifier/reward.txt\n",
	})
	l, err := taskfile.LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &Platform{cli: testCli}
	prepare := func() (string, string) {
		t.Helper()
		var lines []string
		tag, err := p.PrepareImage(ctx, l.Task, false, func(s string) { lines = append(lines, s) })
		if err != nil {
			t.Fatal(err)
		}
		removeImageAfter(t, tag)
		return tag, strings.Join(lines, "\n")
	}
	first, _ := prepare()
	again, said := prepare()
	if again != first || strings.Contains(said, "building ") {
		t.Fatalf("the same base: %s then %s, built again: %q", first, again, said)
	}
	buildBase("v2")
	after, said := prepare()
	if after == first || !strings.Contains(said, "building ") || !strings.Contains(said, "v2") {
		t.Errorf("the base rebuilt: image %s (before %s), progress %q; want a new build on the v2 base", after, first, said)
	}
}
