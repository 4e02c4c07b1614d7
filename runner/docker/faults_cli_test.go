//go:build faults

package docker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/store"
)

// The faults that are the headroom process's own (two of them on one
// store, headroom killed, its results' disk full) run the real binary, as
// a user would.

var (
	headroomOnce sync.Once
	headroomBin  string
	headroomErr  error
)

// headroomBinary builds the headroom command once for the suite.
func headroomBinary(t *testing.T) string {
	t.Helper()
	headroomOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hr-faults-bin")
		if err != nil {
			headroomErr = err
			return
		}
		headroomBin, headroomErr = enginetest.BuildHeadroom(dir)
	})
	if headroomErr != nil {
		t.Fatal(headroomErr)
	}
	return headroomBin
}

// headroomCmd is the binary with args against the engine at host.
func headroomCmd(t *testing.T, host string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(headroomBinary(t), args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host, "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ownersRunning lists the owner labels of the headroom containers running
// on cli.
func ownersRunning(cli *client.Client) map[string]int {
	list, err := cli.ContainerList(context.Background(), container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", runner.LabelHeadroom))})
	owners := map[string]int{}
	if err != nil {
		return owners
	}
	for _, c := range list {
		owners[c.Labels[runner.LabelOwner]]++
	}
	return owners
}

// tallyStore adds a row for the experiments under root: what each
// recorded, against the trials planned.
func tallyStore(t *testing.T, injected string, root string, planned int, cli *client.Client) *faultRow {
	t.Helper()
	return tallyStoreTask(t, injected, root, planned, cli, "")
}

// tallyStoreTask is tallyStore counting as leaked only the containers of
// task (on the shared engine, where other sessions' run); "" counts all.
func tallyStoreTask(t *testing.T, injected string, root string, planned int, cli *client.Client, task string) *faultRow {
	t.Helper()
	row := &faultRow{injected: injected, recorded: map[string]int{}, planned: planned}
	exps, err := store.List(root)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, e := range exps {
		results, torn, err := store.ReadTrials(e.Dir)
		if err != nil {
			t.Errorf("reading %s: %v", e.Dir, err)
		}
		if torn {
			row.torn++
		}
		for _, r := range results {
			got++
			row.recorded[recordedAs(r)]++
			if r.Outcome == "" {
				row.torn++
			}
			t.Logf("%s %s: %s / %s: %s", filepath.Base(e.Dir), r.ID, r.Outcome, r.Cause, r.Reason)
		}
	}
	row.lost = planned - got
	leftLabel := runner.LabelHeadroom
	if task != "" {
		leftLabel = runner.LabelTask + "=" + task
	}
	if left, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", leftLabel))}); err == nil {
		row.leaked = len(left)
	}
	faultMu.Lock()
	faultRows = append(faultRows, row)
	faultMu.Unlock()
	if row.lost != 0 || row.leaked > 0 || row.torn > 0 {
		t.Errorf("%s: %d lost, %d leaked, %d torn", injected, row.lost, row.leaked, row.torn)
	}
	return row
}

// slowTaskDir writes a one-step task whose step takes ms milliseconds.
func slowTaskDir(t *testing.T, name string, ms int) string {
	dir := t.TempDir()
	toml := noEnv(faultTask(name, "64M", 60, fmt.Sprintf(`{ duration_ms = %d, base_mb = 8 }`, ms)))
	if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testTwoProcesses runs two headroom sweeps into one --out root at once on
// the suite's own engine (headroom clean there touches nothing of anyone
// else's), starts the second while the first has trials running (its
// start-up reaper), and runs headroom clean while both have: both finish
// with every trial passed, report --list shows both, nothing is left.
func testTwoProcesses(t *testing.T) {
	cli, _ := ownEngine(t)
	host := cli.DaemonHost()
	root := t.TempDir()
	tasks := slowTaskDir(t, "two", 2500)
	const repeats = 4
	args := []string{"run", "--tasks-dir", tasks, "--tasks", fmt.Sprintf("faults/two-%d", os.Getpid()),
		"--ratios", "1", "--repeats", fmt.Sprint(repeats), "--concurrency", "2", "--out", root, "--floor", "1M", "--reserve", "1M"}
	a, aOut := headroomCmd(t, host, args...)
	b, bOut := headroomCmd(t, host, args...)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
	waitFor(t, "the first headroom's trial to run", 3*time.Minute, func() bool { return len(ownersRunning(cli)) >= 1 })
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Process.Kill(); b.Wait() })
	waitFor(t, "both headrooms' trials to run at once", 3*time.Minute, func() bool { return len(ownersRunning(cli)) >= 2 })
	clean, cleanOut := headroomCmd(t, host, "clean")
	if err := clean.Run(); err != nil {
		t.Errorf("headroom clean: %v\n%s", err, cleanOut)
	}
	t.Logf("headroom clean with both running:\n%s", cleanOut)
	if strings.Contains(cleanOut.String(), "removed") {
		t.Errorf("headroom clean removed a live run's container:\n%s", cleanOut)
	}
	errA, errB := a.Wait(), b.Wait()
	if errA != nil || errB != nil {
		t.Errorf("the sweeps: %v, %v\nfirst:\n%s\nsecond:\n%s", errA, errB, aOut, bOut)
	}
	list, listOut := headroomCmd(t, host, "report", "--list", "--out", root)
	if err := list.Run(); err != nil {
		t.Errorf("report --list: %v\n%s", err, listOut)
	}
	t.Logf("report --list:\n%s", listOut)
	exps, _ := store.List(root)
	if len(exps) != 2 {
		t.Errorf("%d experiments in the store, want 2", len(exps))
	}
	for _, e := range exps {
		if !strings.Contains(listOut.String(), filepath.Base(e.Dir)) {
			t.Errorf("report --list does not show %s", filepath.Base(e.Dir))
		}
	}
	row := tallyStore(t, "two-processes", root, 2*repeats, cli)
	if row.recorded["passed"] != 2*repeats {
		t.Errorf("recorded %v, want every trial of both passed", row.recorded)
	}
}

// buildTaskDir writes a Terminal-Bench 2.0 task directory whose Dockerfile
// takes a few seconds (a RUN sleep) on the local Debian image. Every
// layer carries a label of this test's, so whatever the build leaves,
// tagged or not, is found and removed.
func buildTaskDir(t *testing.T, cli *client.Client) (dir, name, label string) {
	t.Helper()
	if _, _, err := cli.ImageInspectWithRaw(context.Background(), DebianImage); err != nil {
		t.Skipf("no %s (make real-images): %v", DebianImage, err)
	}
	label = fmt.Sprintf("headroom-faults-build=%d", os.Getpid())
	name = fmt.Sprintf("faults/build-%d", os.Getpid())
	dir = t.TempDir()
	files := map[string]string{
		"task.toml":      fmt.Sprintf("[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\n", name),
		"instruction.md": "Write done to /app/out.txt.\n",
		// The RUN names this run: BuildKit caches a layer by its command (a
		// LABEL is no layer there), and a cached RUN is no build to kill.
		"environment/Dockerfile": fmt.Sprintf("FROM %s\nLABEL %s\nRUN sleep 8 && mkdir -p /app && echo %d\nWORKDIR /app\n", DebianImage, label, time.Now().UnixNano()),
		"solution/solve.sh":      "#!/bin/bash\necho done > /app/out.txt\n",
		"tests/test.sh":          "#!/bin/bash\nif grep -q done /app/out.txt; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
	}
	for p, s := range files {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { removeLabelled(cli, label) })
	return dir, name, label
}

// removeLabelled removes the containers and images (tagged or not) that
// carry label, and the networks of builds of the task named in it (a
// build killed with headroom leaves its own network to the next reap).
func removeLabelled(cli *client.Client, label string) {
	ctx := context.Background()
	if _, pid, ok := strings.Cut(label, "="); ok {
		if nets, err := cli.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelBuildOf))}); err == nil {
			for _, n := range nets {
				if strings.HasPrefix(n.Labels[LabelBuildOf], "headroom-task/faults-build-"+pid+":") {
					cli.NetworkRemove(ctx, n.ID)
				}
			}
		}
	}
	f := filters.NewArgs(filters.Arg("label", label))
	if list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f}); err == nil {
		for _, c := range list {
			cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		}
	}
	if imgs, err := cli.ImageList(ctx, image.ListOptions{All: true, Filters: f}); err == nil {
		// Children before parents: newest first.
		sort.Slice(imgs, func(i, j int) bool { return imgs[i].Created > imgs[j].Created })
		for _, im := range imgs {
			cli.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true, PruneChildren: true})
		}
	}
}

// taggedTaskImages lists the headroom-task tags of images carrying label.
func taggedTaskImages(cli *client.Client, label string) []string {
	imgs, _ := cli.ImageList(context.Background(), image.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", label))})
	var tags []string
	for _, im := range imgs {
		for _, tag := range im.RepoTags {
			if strings.HasPrefix(tag, TaskRepo+":") || strings.HasPrefix(tag, TaskRepo+"/") {
				tags = append(tags, tag)
			}
		}
	}
	return tags
}

// testKilledDuringBuild SIGKILLs headroom while its task image builds
// (the Dockerfile's RUN is running, as its build's progress says, with
// either builder: BuildKit runs no container the engine lists): no image
// is tagged, no build container is left, and the next run builds it and
// runs the trial.
func testKilledDuringBuild(t *testing.T) {
	cli := testCli
	host := cli.DaemonHost()
	dir, name, label := buildTaskDir(t, cli)
	root := t.TempDir()
	args := []string{"run", "--tasks-dir", dir, "--tasks", name, "--agents", "oracle", "--ratios", "1", "--repeats", "1",
		"--out", root, "--floor", "1M", "--reserve", "1M"}
	a, _ := headroomCmd(t, host, args...)
	aOut := &syncBuffer{}
	a.Stdout, a.Stderr = aOut, aOut
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
	f := filters.NewArgs(filters.Arg("label", label))
	waitFor(t, "the Dockerfile's RUN to start", 3*time.Minute, func() bool { return strings.Contains(aOut.String(), "RUN sleep 8") })
	a.Process.Kill()
	a.Wait()
	t.Logf("killed during the build; it had said:\n%s", aOut)
	// The engine ends the build when its client goes; its RUN container is
	// removed. Wait for that (the sleep ends within 8 s in any case).
	var left []string
	waitFor(t, "the build's container to go", time.Minute, func() bool {
		list, _ := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
		left = left[:0]
		for _, c := range list {
			left = append(left, fmt.Sprintf("%s %v %s %q", c.ID[:12], c.Names, c.State, c.Command))
		}
		if len(left) > 0 {
			t.Logf("left: %v", left)
		}
		return len(left) == 0
	})
	if tags := taggedTaskImages(cli, label); len(tags) > 0 {
		t.Errorf("a half-built image is tagged: %v", tags)
	}
	b, bOut := headroomCmd(t, host, args...)
	if err := b.Run(); err != nil {
		t.Errorf("the run after the kill: %v\n%s", err, bOut)
	}
	if tags := taggedTaskImages(cli, label); len(tags) != 1 {
		t.Errorf("after the second run the task's image is tagged %v, want one %s tag", tags, TaskRepo)
	}
	row := tallyStoreTask(t, "headroom-killed (image-build)", root, 1, cli, name)
	if row.recorded["passed"] != 1 {
		t.Errorf("recorded %v, want the trial passed", row.recorded)
	}
}

// syncBuffer is a buffer a running command writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tmux runs a tmux command on the server at socket sock, the test's own.
func tmux(t *testing.T, sock string, args ...string) string {
	out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
	if err != nil {
		t.Logf("tmux %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// testKilledWithConsoleOpen runs `headroom demo` (the console, running a
// sweep) in a terminal (tmux) on the suite's own engine and SIGKILLs it
// once it has recorded a trial and has trials running; then opens the
// console again (its start-up reaper removes the dead one's containers),
// closes it, and resumes the experiment headless: nothing torn, nothing
// left, the experiment complete.
func testKilledWithConsoleOpen(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	cli, _ := ownEngine(t)
	host := cli.DaemonHost()
	root := t.TempDir()
	// The tmux servers' sockets are in a directory of the test's own.
	sock := filepath.Join(t.TempDir(), "tmux")
	// The reopened console gets a server of its own: a new session on a
	// server still shutting down fails.
	sock2 := sock + "-again"
	t.Cleanup(func() {
		exec.Command("tmux", "-S", sock, "kill-server").Run()
		exec.Command("tmux", "-S", sock2, "kill-server").Run()
	})
	bin := headroomBinary(t)
	const repeats = 2
	console := func(args string) string {
		return fmt.Sprintf("exec env DOCKER_HOST=%s NO_COLOR=1 %s %s --out %s --reserve 1M 2>>%s/console.log", host, bin, args, root, root)
	}
	tmux(t, sock, "new-session", "-d", "-x", "140", "-y", "45", console(fmt.Sprintf("demo --repeats %d --concurrency 3", repeats)))
	pid := tmux(t, sock, "list-panes", "-F", "#{pane_pid}")
	t.Logf("the console is pid %s", pid)
	var expDir string
	recorded := func() int {
		exps, _ := store.List(root)
		if len(exps) == 0 {
			return 0
		}
		expDir = exps[0].Dir
		res, _, _ := store.ReadTrials(expDir)
		return len(res)
	}
	waitFor(t, "the console's sweep to record a trial with others running", 4*time.Minute, func() bool {
		return recorded() > 0 && len(ownersRunning(cli)) > 0
	})
	var p int
	fmt.Sscan(pid, &p)
	if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	tmux(t, sock, "kill-server")
	left := ownersRunning(cli)
	t.Logf("killed with %d trial(s) recorded; running on the engine: %v", recorded(), left)
	if len(left) == 0 {
		t.Fatal("no trial was running when the console was killed")
	}
	// Open the console again: its start-up reaper removes what the dead
	// one left.
	tmux(t, sock2, "new-session", "-d", "-x", "140", "-y", "45", console(""))
	said := func() string { b, _ := os.ReadFile(filepath.Join(root, "console.log")); return string(b) }
	// A container the engine was still creating when the console died
	// (this engine's vfs copies the image for each) can appear after the
	// reaper's pass, as created: the resume below removes it when it
	// wants its name again, and tallyStore checks that nothing is left.
	waitFor(t, "the reopened console to reap the dead one's containers and say so", 2*time.Minute, func() bool {
		list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", runner.LabelHeadroom))})
		if err != nil || !strings.Contains(said(), "removed leftover container") {
			return false
		}
		for _, c := range list {
			if c.State != "created" {
				return false
			}
		}
		return true
	})
	tmux(t, sock2, "kill-server")
	t.Logf("the consoles said:\n%s", said())
	// Resume the experiment headless: it completes.
	resume, out := headroomCmd(t, host, "run", "--resume", filepath.Base(expDir), "--out", root, "--floor", "1M", "--reserve", "1M")
	if err := resume.Run(); err != nil {
		// Trials the showcase OOM-kills make the exit code non-zero; the
		// records are what counts.
		t.Logf("resume: %v", err)
	}
	t.Logf("resume:\n%s", out)
	row := tallyStore(t, "headroom-killed (console)", root, 3*repeats, cli)
	if row.recorded["passed"] == 0 && row.recorded[string("own-limit")] == 0 {
		t.Errorf("recorded %v", row.recorded)
	}
}

// testKilledDuringAppend SIGKILLs a headless sweep once it has recorded a
// trial and, since a kill cannot be timed inside the record's one write,
// leaves what such a kill would: the first half of a record, without its
// newline, at the end of trials.jsonl. The resume cuts it, reruns that
// trial, and the experiment ends complete with no torn record.
func testKilledDuringAppend(t *testing.T) {
	cli := testCli
	name := fmt.Sprintf("faults/torn-%d", os.Getpid())
	tasks := slowTaskDir(t, "torn", 1500)
	root := t.TempDir()
	const repeats = 4
	a, aOut := headroomCmd(t, cli.DaemonHost(), "run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "1",
		"--repeats", fmt.Sprint(repeats), "--concurrency", "2", "--out", root, "--floor", "1M", "--reserve", "1M")
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait(); removeLabelled(cli, runner.LabelTask+"="+name) })
	var expDir string
	waitFor(t, "the sweep to record a trial", 3*time.Minute, func() bool {
		exps, _ := store.List(root)
		if len(exps) == 0 {
			return false
		}
		expDir = exps[0].Dir
		res, _, _ := store.ReadTrials(expDir)
		return len(res) > 0
	})
	a.Process.Kill()
	a.Wait()
	path := filepath.Join(expDir, "trials.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(first[:len(first)/2])
	f.Close()
	if _, torn, _ := store.ReadTrials(expDir); !torn {
		t.Fatalf("the half record is not seen as torn")
	}
	t.Logf("killed; the sweep had said:\n%s", aOut)
	resume, out := headroomCmd(t, cli.DaemonHost(), "run", "--resume", filepath.Base(expDir), "--out", root, "--floor", "1M", "--reserve", "1M")
	if err := resume.Run(); err != nil {
		t.Errorf("resume: %v\n%s", err, out)
	}
	row := tallyStoreTask(t, "headroom-killed (record-append)", root, repeats, cli, name)
	if row.recorded["passed"] != repeats {
		t.Errorf("recorded %v, want all %d passed", row.recorded, repeats)
	}
}

// testResultsDiskFull sweeps into --out on a small tmpfs (80 MiB: an
// experiment needs 64 MiB free to start) of the test's
// own, fills it once a trial is recorded, and checks headroom stops with
// a non-zero exit saying how to resume, that every trial it reported is
// recorded whole, and that the resume after space is freed completes.
func testResultsDiskFull(t *testing.T) {
	cli := testCli
	root := t.TempDir()
	if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "size=80m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(root, syscall.MNT_DETACH) })
	name := fmt.Sprintf("faults/outfull-%d", os.Getpid())
	tasks := slowTaskDir(t, "outfull", 1500)
	const repeats = 6
	a, aOut := headroomCmd(t, cli.DaemonHost(), "run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "1",
		"--repeats", fmt.Sprint(repeats), "--concurrency", "2", "--out", root, "--floor", "1M", "--reserve", "1M")
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait(); removeLabelled(cli, runner.LabelTask+"="+name) })
	var expDir string
	waitFor(t, "the sweep to record a trial", 3*time.Minute, func() bool {
		exps, _ := store.List(root)
		if len(exps) == 0 {
			return false
		}
		expDir = exps[0].Dir
		res, _, _ := store.ReadTrials(expDir)
		return len(res) > 0
	})
	// Fill what is left.
	filler := filepath.Join(root, "filler")
	fill, _ := os.Create(filler)
	chunk := make([]byte, 64<<10)
	for {
		if _, err := fill.Write(chunk); err != nil {
			break
		}
	}
	fill.Close()
	err := a.Wait()
	t.Logf("the sweep on a full disk said:\n%s", aOut)
	if err == nil {
		t.Errorf("the sweep exited 0 on a full disk")
	}
	if !strings.Contains(aOut.String(), "--resume") {
		t.Errorf("it did not say how to resume")
	}
	res, torn, rerr := store.ReadTrials(expDir)
	if torn || rerr != nil {
		t.Errorf("after the full disk: torn %v, %v", torn, rerr)
	}
	have := map[string]bool{}
	for _, r := range res {
		have[r.ID] = true
	}
	// Every trial it reported finished as passed is recorded.
	for _, l := range strings.Split(aOut.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(f[0], "[") && f[1] == "passed" && !have[f[2]] {
			t.Errorf("reported %s passed, not recorded", f[2])
		}
	}
	t.Logf("%d of %d trials recorded when the disk filled", len(res), repeats)
	os.Remove(filler)
	resume, out := headroomCmd(t, cli.DaemonHost(), "run", "--resume", filepath.Base(expDir), "--out", root, "--floor", "1M", "--reserve", "1M")
	if err := resume.Run(); err != nil {
		t.Errorf("resume: %v\n%s", err, out)
	}
	row := tallyStoreTask(t, "results-disk-full", root, repeats, cli, name)
	if row.recorded["passed"] != repeats {
		t.Errorf("recorded %v, want all %d passed", row.recorded, repeats)
	}
}
