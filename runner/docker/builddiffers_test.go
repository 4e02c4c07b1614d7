package docker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
)

// Dockerfiles the engine's classic builder builds otherwise than BuildKit,
// Harbor's builder: headroom built them with the classic builder and
// scored the difference (the twenty-first attacker's 1 and 3). A task
// with no network is built with BuildKit, as Harbor builds it; each passes
// only so (on the classic builder: the agent cannot write its working
// directory; the build fails; a file the Dockerfile's own ignore file
// leaves out is in the image).
func TestDockerfilesTheClassicBuilderBuildsOtherwise(t *testing.T) {
	needEngine(t)
	needDebian(t)
	useFrontend(t)
	test := "#!/bin/bash\nif grep -qx 42 /work/answer && ! test -e /ctx/hidden.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
	for _, c := range []struct {
		name, dockerfile string
		more             map[string]string
	}{
		{"workdir-under-user", "FROM headroom-debian:bookworm\nUSER nobody\nWORKDIR /work\n", nil},
		{"unused-stage", "FROM headroom-debian:bookworm AS debugtools\nRUN exit 3\nFROM headroom-debian:bookworm\nRUN mkdir -m 777 /work\n", nil},
		{"empty-wildcard", "FROM headroom-debian:bookworm\nCOPY *.whl /opt/wheels/\nRUN mkdir -m 777 /work\n", nil},
		{"own-ignore-file", "FROM headroom-debian:bookworm\nCOPY . /ctx\nRUN mkdir -m 777 /work\n",
			map[string]string{"environment/hidden.txt": "the answer key\n", "environment/Dockerfile.dockerignore": "hidden.txt\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "differs-" + c.name
			files := map[string]string{
				"task.toml": "schema_version = \"1.1\"\n[task]\nname = \"test/" + name + "\"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n" +
					"[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n",
				"instruction.md":         "Write 42 to /work/answer.\n",
				"environment/Dockerfile": c.dockerfile,
				"solution/solve.sh":      "#!/bin/bash\necho 42 > /work/answer\n",
				"tests/test.sh":          test,
			}
			for k, v := range c.more {
				files[k] = v
			}
			task := harborTaskOf(t, filepath.Join(t.TempDir(), name), files)
			removeImageAfter(t, task.Image)
			if task.Build == nil || task.Build.ClassicDiffers == "" {
				t.Fatalf("the loader did not see that the classic builder builds it otherwise: %+v", task.Build)
			}
			results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
			r := results[0]
			var out []string
			for _, s := range r.Steps {
				out = append(out, s.Name+": "+s.Output)
			}
			if r.Outcome != model.Passed {
				t.Errorf("%s (%s), want passed, as built by Harbor's BuildKit (%s)\n%s", r.Outcome, r.Reason, task.Build.ClassicDiffers, strings.Join(out, "\n"))
			}
		})
	}
}

// On an engine before Docker 23 headroom's own Dockerfile frontend asks
// the engine's BuildKit for what it does not know: `COPY --exclude`
// copied the file it excludes and `COPY --chmod=u+x` made the mode 0,
// and the build said it succeeded (the twenty-first attacker's 2). Such
// a build is refused there, naming the line; octal --chmod builds.
func TestNewerBuildKitSyntaxRefusedOnAnOldEngine(t *testing.T) {
	needEngine(t)
	needDebian(t)
	useFrontend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	builder, err := chooseEngineBuilder(ctx, testCli)
	if err != nil {
		t.Fatal(err)
	}
	if builder.Frontend == nil {
		t.Skipf("this engine's own Dockerfile frontend builds: %s", builder)
	}
	for _, c := range []struct{ name, copy, refused string }{
		{"exclude", "COPY --exclude=hidden.txt . /ctx", "Dockerfile:2: COPY --exclude needs the BuildKit of Docker 23 or later"},
		{"chmod-symbolic", "COPY --chmod=u+x,g+x run.sh /opt/run.sh", "Dockerfile:2: COPY --chmod=u+x,g+x (not in octal) needs"},
		{"chmod-octal", "COPY --chmod=750 run.sh /opt/run.sh", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "newer-"+c.name)
			writeTaskFiles(t, dir, map[string]string{
				"task.toml":              "schema_version = \"1.1\"\n[task]\nname = \"test/newer-" + c.name + "\"\n[environment]\nallow_internet = false\n",
				"instruction.md":         "Nothing.\n",
				"environment/Dockerfile": "FROM headroom-debian:bookworm\n" + c.copy + "\n",
				"environment/hidden.txt": "key\n",
				"environment/run.sh":     "#!/bin/sh\n",
				"tests/test.sh":          "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
			})
			l, err := taskfile.LoadTaskDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			tag, err := TaskImageTag(ctx, l.Task.Name, *l.Task.Build)
			if err != nil {
				t.Fatal(err)
			}
			removeImageAfter(t, tag)
			_, err = EnsureTaskImage(ctx, testCli, l.Task, func(l string) { t.Log(l) })
			switch {
			case c.refused == "" && err != nil:
				t.Errorf("octal --chmod: %v", err)
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
				t.Errorf("%v; want refused: %q", err, c.refused)
			}
		})
	}
}
