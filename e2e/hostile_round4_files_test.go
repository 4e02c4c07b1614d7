//go:build hostile

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
)

// Round four, the files a trial leaves: a separate verifier's artifacts
// (many entries), an image's VOLUME, a hard-linked lock.

// Item 5: a separate verifier's task whose agent makes 10,000 empty
// files in /logs/artifacts, under `[verifier] timeout_sec = 1.0`. Their
// copy out of the agent's container and into the verifier's was bounded
// by nothing and charged to nothing (the attacker's 44,852 took 85 s),
// and the verifier then ran with its whole second: passed, where
// Harbor's verifier, which transfers its artifacts within its timeout,
// times out. The copy now counts in the verifier's time (and a path of
// more than runner.MaxArtifactEntries entries is the task's failure:
// TestCopyOutBoundsEntries in runner/docker, on the real engine).
func TestHostileR4ArtifactEntries(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r4/sepmany"
	const files = 10000
	harborTask(t, tasks, "sepmany", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 600.0\n[verifier]\nenvironment_mode = \"separate\"\ntimeout_sec = 1.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n", name),
		"tests/Dockerfile":  "FROM " + docker.DebianImage + "\nCOPY test.sh /tests/test.sh\n",
		"solution/solve.sh": fmt.Sprintf("#!/bin/bash\nmkdir -p /logs/artifacts && cd /logs/artifacts && python3 -c 'for i in range(%d): open(\"f%%d\" %% i, \"w\").close()'\n", files),
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	start := time.Now()
	runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	took := time.Since(start).Round(time.Second)
	_, recs, leaked := records(t, out)
	lost, forged := 1-len(recs), 0
	said := "no record"
	const want = "while the artifacts (/logs/artifacts) were being copied"
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		said = fmt.Sprintf("%s %v %q (the run %s)", r["outcome"], r["cause"], reason, took)
		if r["outcome"] != "timeout" || r["cause"] != "verifier-timeout" || !strings.Contains(reason, want) {
			t.Errorf("%s: want timeout · verifier-timeout, its time run out %s", said, want)
			forged++
		}
	}
	letoutRow(t, fmt.Sprintf("a separate verifier's task (`[verifier] timeout_sec = 1.0`) whose solve.sh makes %d empty files in /logs/artifacts", files), said, lost, leaked, forged)
}

// volumeWatch records, from the engine's event stream, the volumes the
// engine mounted into containers of headroom's experiments: which
// volumes a trial's container had, whatever became of the container.
type volumeWatch struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	experiment map[string]string   // container id → its headroom.experiment label
	mounted    map[string][]string // container id → volume names
}

func watchVolumes(t *testing.T) *volumeWatch {
	t.Helper()
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &volumeWatch{cancel: cancel, done: make(chan struct{}), experiment: map[string]string{}, mounted: map[string][]string{}}
	msgs, errs := cli.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)), filters.Arg("type", string(events.VolumeEventType)),
		filters.Arg("event", "create"), filters.Arg("event", "mount"))})
	go func() {
		defer close(w.done)
		defer cli.Close()
		for {
			select {
			case m := <-msgs:
				w.mu.Lock()
				switch {
				case m.Type == events.ContainerEventType && m.Action == "create":
					if id := m.Actor.Attributes[runner.LabelExperiment]; id != "" {
						w.experiment[m.Actor.ID] = id
					}
				case m.Type == events.VolumeEventType && m.Action == "mount":
					c := m.Actor.Attributes["container"]
					w.mounted[c] = append(w.mounted[c], m.Actor.ID)
				}
				w.mu.Unlock()
			case <-errs:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(w.stop)
	return w
}

func (w *volumeWatch) stop() {
	w.cancel()
	<-w.done
}

// volumesOf is every volume the engine mounted into a container of
// experiment id (the events of a create come before its mounts').
func (w *volumeWatch) volumesOf(id string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for c, vols := range w.mounted {
		if w.experiment[c] == id {
			out = append(out, vols...)
		}
	}
	return out
}

// volumesLeft counts the volumes of experiment id still on the engine
// and removes them (each was mounted by headroom's container of that
// experiment, made for this test's run: this test's own).
func volumesLeft(t *testing.T, w *volumeWatch, id string) (left int, names []string) {
	t.Helper()
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, v := range w.volumesOf(id) {
		names = append(names, v)
		if _, err := cli.VolumeInspect(context.Background(), v); err == nil {
			left++
			if err := cli.VolumeRemove(context.Background(), v, true); err != nil {
				t.Errorf("removing the volume %s the test's trial left: %v", v, err)
			}
		}
	}
	return left, names
}

// Item 7: a task whose image declares `VOLUME /data` left an unlabelled
// anonymous volume behind every trial (20 MB each there), which `headroom
// clean` cannot find; a kept container's, after clean removed it, the
// same. A trial's container now goes with its anonymous volumes, and
// clean's removal of a kept one too.
func TestHostileR4ImageVolume(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r4/imagevolume"
	harborTask(t, tasks, "imagevolume", name, map[string]string{
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nRUN mkdir /data && head -c 1048576 /dev/zero > /data/blob\nVOLUME /data\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	w := watchVolumes(t)
	var said []string
	lost, leaked := 0, 0
	for _, keep := range []bool{false, true} {
		out := filepath.Join(root, fmt.Sprintf("out-keep-%v", keep))
		args := oracleArgs(tasks, name, out)
		if keep {
			args = append(args, "--keep")
		}
		run := runBin(t, bin, nil, args...)
		dir, recs, _ := records(t, out)
		id := filepath.Base(dir)
		lost += 1 - len(recs)
		what := "the run"
		if keep {
			clean := runBin(t, bin, nil, "clean", "--out", out)
			if clean.code != 0 {
				t.Errorf("clean --out %s: exit %d:\n%s", out, clean.code, clean.stderr)
			}
			what = "the run with --keep, then `clean --out`"
		}
		if n := containersLeft(t, id); n > 0 {
			t.Errorf("%s: %d container(s) of experiment %s left", what, n, id)
			leaked += n
			removeExperimentContainers(id)
		}
		w.stop() // every event of the run has come by the end of its removal
		left, names := volumesLeft(t, w, id)
		if len(names) == 0 {
			t.Errorf("%s (exit %d): the engine reported no volume mounted into experiment %s's containers: the image's VOLUME /data was not seen, and the row proves nothing", what, run.code, id)
			lost++
		}
		if left > 0 {
			t.Errorf("%s: %d anonymous volume(s) of its trial left on the engine (%s)", what, left, strings.Join(names, ", "))
		}
		leaked += left
		said = append(said, fmt.Sprintf("%s: %d of its trial's %d volume(s) left", what, left, len(names)))
		if !keep {
			w = watchVolumes(t)
		}
	}
	letoutRow(t, "a Harbor task whose environment/Dockerfile says `VOLUME /data` (1 MiB in it), run; then run with --keep and `clean --out`", strings.Join(said, "; "), lost, leaked, 0)
}

// Item 8: a user's file hard-linked as <experiment>/lock (O_NOFOLLOW
// refuses only symbolic links): while the run writes, a second `run
// --resume` showed the file's text as the lock's holder; after it,
// `run --resume` truncated the file and wrote its own holder into it,
// then emptied it. The lock file is now made afresh, never written where
// it is, and a holder is read only from a file of one link.
func TestHostileR4LockHardLink(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	user := filepath.Join(root, "user-file")
	secret := "IMPORTANT user data " + randomHex(8) + "\n"
	if err := os.WriteFile(user, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	tasks := slowTasks(t, 2500)
	out := filepath.Join(root, "out")
	plant := func(dir string) {
		t.Helper()
		lock := filepath.Join(dir, "lock")
		if err := os.Remove(lock); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.Link(user, lock); err != nil {
			t.Fatal(err)
		}
	}
	leaked, forged := 0, 0
	var said []string

	a, dir := startSweep(t, bin, tasks, out, 2, 1)
	a.waitLine(`^\[1/2\] `, 3*time.Minute)
	plant(dir)
	second := runBin(t, bin, nil, "run", "--resume", dir, "--out", out)
	if second.code != 2 || !strings.Contains(second.stderr, "is being written by") {
		t.Errorf("resume while the run writes, its lock hard-linked to a user's file: exit %d, want 2:\n%s", second.code, second.stderr)
		forged++
	}
	if strings.Contains(second.stdout+second.stderr, "IMPORTANT user data") {
		t.Errorf("the refused resume printed the user's hard-linked file as the holder:\n%s", second.stderr)
		leaked++
	}
	said = append(said, fmt.Sprintf("while the run writes: the resume refused, exit %d: %q", second.code, firstLineWith(second.stderr, "being written by")))
	if code := a.wait(5 * time.Minute); code != 0 {
		t.Errorf("the first run: exit %d:\n%s", code, a.stderr())
	}

	plant(dir)
	third := runBin(t, bin, nil, "run", "--resume", dir, "--out", out)
	// Every trial has its record: the resume takes the lock, then says
	// there is nothing to rerun (exit 2).
	if !strings.Contains(third.stderr, "nothing to rerun") {
		t.Errorf("resume of the finished experiment, its lock hard-linked to a user's file: exit %d, want \"nothing to rerun\":\n%s", third.code, third.stderr)
	}
	got, err := os.ReadFile(user)
	if err != nil || string(got) != secret {
		t.Errorf("the user's file hard-linked as %s/lock after `run --resume`: %q (%v), want it untouched (%q)", dir, got, err, secret)
		leaked++
	}
	said = append(said, fmt.Sprintf("after it: the resume %q, exit %d; the user's file %d bytes of its %d, unchanged: %v", firstLineWith(third.stderr, "nothing to rerun"), third.code, len(got), len(secret), string(got) == secret))
	lines, ids := distinct(trialLines(t, dir))
	letoutRow(t, "a user's file hard-linked as <experiment>/lock while `run` (2 trials) writes, then `run --resume` of it; then again after the run ended",
		strings.Join(said, "; "), 2-ids+lines-ids, leaked+containersLeft(t, filepath.Base(dir)), forged)
}
