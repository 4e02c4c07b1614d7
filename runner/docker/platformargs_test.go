package docker

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A classic build is given only the platform arguments its Dockerfile
// declares: given all eight it warned "[Warning] One or more build-args
// [TARGETVARIANT …] were not consumed" on every build, and a new user
// read it as the task's problem.
func TestPlatformArgsOnlyThoseDeclared(t *testing.T) {
	needEngine(t)
	declared := declaredArgs(model.Build{Inline: "FROM x\narg TARGETARCH\n  ARG A=1 BUILDOS\nRUN echo ARG TARGETOS\n"})
	if want := []string{"A", "BUILDOS", "TARGETARCH"}; !slices.Equal(slices.Sorted(maps.Keys(declared)), want) {
		t.Errorf("declared %v, want %v", slices.Sorted(maps.Keys(declared)), want)
	}
	own := "mine"
	got := platformArgs(context.Background(), testCli, map[string]*string{"TARGETARCH": &own, "X": &own}, declared)
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"BUILDOS", "TARGETARCH", "X"}) || *got["TARGETARCH"] != "mine" || *got["BUILDOS"] != "linux" {
		t.Errorf("build args %v; want BUILDOS (linux), the task's TARGETARCH and X", keys)
	}
}

// A Dockerfile that declares ARG TARGETARCH still reads the engine's
// architecture under the classic builder.
func TestClassicBuildReadsADeclaredPlatformArg(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := harborTaskOf(t, filepath.Join(t.TempDir(), "platform-arg"), map[string]string{
		"task.toml":              "schema_version = \"1.1\"\n[task]\nname = \"test/platform-arg\"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\n",
		"instruction.md":         "Nothing.\n",
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nARG TARGETARCH\nRUN test -n \"$TARGETARCH\" && echo \"$TARGETARCH\" > /arch\n",
		"solution/solve.sh":      "#!/bin/bash\ntrue\n",
		"tests/test.sh":          "#!/bin/bash\nif test -s /arch; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	removeImageAfter(t, task.Image)
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	if r := results[0]; r.Outcome != model.Passed {
		t.Errorf("%s (%s), want passed: /arch holds the engine's architecture", r.Outcome, r.Reason)
	}
}
