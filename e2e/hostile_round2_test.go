//go:build hostile

package e2e

// The hostile-input suite's second round (issue #40): each row injects
// for real through the binary under test (hostileBin: this tree's, or
// HEADROOM_HOSTILE_BIN's to show it failing on a build without the fix)
// and reports input | recorded | lost | leaked | forged, each of which
// must be 0.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
)

// ownContainer starts a container of the test's own (the Debian image,
// sleeping) with args before the image, removed when the test ends; it
// returns its id.
func ownContainer(t *testing.T, args ...string) string {
	t.Helper()
	run := append(append([]string{"run", "-d", "--label", "headroom-e2e-h40=1"}, args...), docker.DebianImage, "sleep", "600")
	out, err := exec.Command("docker", run...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v %s", run, err, out)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
	return id
}

// Item 1: a task file puts its container in a network namespace that is
// not the trial's: the host's (headroom TOML, and a Harbor task.toml
// with allow_internet = false), or another container's. A server bound
// to the host's 127.0.0.1 and the other container's address must reach
// nothing headroom writes or prints; validate and run refuse headroom's
// own files, naming the file and line. A Harbor task.toml's `network` is
// a key Harbor does not read: ignored, as Harbor ignores it (validate
// says so), and its trial runs in its own namespace.
func TestHostileNetworkNotTheTrials(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	secret := "HOSTILE-NET-HOSTLOCAL-" + randomHex(8)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, secret)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	other := ownContainer(t, "--network", "bridge")
	ipOut, err := exec.Command("docker", "inspect", "-f", "{{.NetworkSettings.IPAddress}}", other).Output()
	otherIP := strings.TrimSpace(string(ipOut))
	if err != nil || otherIP == "" {
		t.Fatalf("the other container's address: %q %v", ipOut, err)
	}
	readHost := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3; cat /proc/net/fib_trie | grep -v 127.0.0 | head -40", port)
	headroomTask := func(name, network string) string {
		return fmt.Sprintf("[task]\nname = %q\n[environment]\nimage = %q\nmemory = \"64M\"\nnetwork = %q\n[verifier]\ncommand = [\"sh\", \"-c\", \"true\"]\n[[agents]]\nname = \"oracle\"\n  [[agents.steps]]\n  name = \"probe\"\n  command = [\"bash\", \"-c\", %q]\n",
			name, docker.DebianImage, network, readHost)
	}
	type input struct {
		name, dir, file string
		ignored         bool // a key its harness does not read: not applied
	}
	var inputs []input
	for _, c := range []struct{ name, network string }{{"hostile-net/host", "host"}, {"hostile-net/container", "container:" + other}} {
		dir := filepath.Join(root, strings.ReplaceAll(c.name, "/", "-"))
		os.MkdirAll(dir, 0o755)
		file := filepath.Join(dir, "probe.toml")
		if err := os.WriteFile(file, []byte(headroomTask(c.name, c.network)), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{name: c.name, dir: dir, file: file})
	}
	hdir := filepath.Join(root, "harbor")
	harborTask(t, hdir, "host", "hostile-net/harbor-host", map[string]string{
		"task.toml":         "schema_version = \"1.1\"\n[task]\nname = \"hostile-net/harbor-host\"\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\nnetwork = \"host\"\n",
		"solution/solve.sh": "#!/bin/bash\n" + readHost + "\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-net/harbor-host") })
	inputs = append(inputs, input{"hostile-net/harbor-host", hdir, filepath.Join(hdir, "host", "task.toml"), true})

	leaked, forged := 0, 0
	var said []string
	for _, in := range inputs {
		v := runBin(t, bin, nil, "tasks", "validate", in.dir)
		out := filepath.Join(root, "out-"+filepath.Base(in.dir))
		run := runBin(t, bin, nil, "run", "--tasks-dir", in.dir, "--tasks", in.name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
		texts := map[string]string{"validate": v.stdout + v.stderr, "run": run.stdout + run.stderr}
		for _, needle := range []string{secret, otherIP} {
			if n, where := countIn(needle, experimentFiles(t, out), texts); n > 0 {
				t.Errorf("%s: %q (from a namespace not the trial's) is in %v", in.name, needle, where)
				leaked += n
			}
		}
		if in.ignored {
			// Not applied: the trial ran in its own namespace (what it
			// read there reached nothing above), the key said ignored.
			if v.code != 0 || !strings.Contains(v.stdout+v.stderr, "ignored key environment.network") || run.code != 0 {
				t.Errorf("%s: validate exit %d, run exit %d, want the key said ignored and the trial run in its own namespace:\n%s\n%s", in.name, v.code, run.code, texts["validate"], texts["run"])
				forged++
			}
			continue
		}
		made, _ := filepath.Glob(filepath.Join(out, "*", "trials.jsonl"))
		if len(made) > 0 {
			t.Errorf("%s: a trial ran in a namespace not its own: %v", in.name, made)
			leaked += len(made)
		}
		at := in.file + ":"
		if v.code == 0 || !strings.Contains(v.stdout+v.stderr, at) || !strings.Contains(v.stdout+v.stderr, "is refused") {
			t.Errorf("%s: validate exit %d, want a refusal naming %s<line>:\n%s", in.name, v.code, at, texts["validate"])
			forged++
		}
		if run.code == 0 || !strings.Contains(run.stderr, at) {
			t.Errorf("%s: run exit %d, want a refusal naming %s<line>:\n%s", in.name, run.code, at, texts["run"])
			forged++
		}
		line := firstLineWith(texts["validate"], "is refused")
		if i := strings.Index(line, "is refused"); i >= 0 {
			line = line[:i+len("is refused")] + " …"
		}
		said = append(said, line)
	}
	letoutRow(t, "`[environment] network = \"host\"` (headroom TOML; Harbor task.toml with allow_internet = false) reading a server on the host's 127.0.0.1, and `network = \"container:<id>\"` of another container, reading its address",
		fmt.Sprintf("headroom's files: validate and run refuse each before any container, naming file:line: %q; the Harbor file's key ignored, as Harbor ignores it (\"ignored key environment.network\"), its trial in its own namespace", said[0]), 0, leaked, forged)
}

// firstLineWith is text's first line holding needle, or "".
func firstLineWith(text, needle string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, needle) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// Item 2: compose sidecars of a Harbor task (its harbor profile) and a
// headroom task's [[services]] (hardened). Every container of the trial
// gets the task's profile (hardened: no capability but its own, no
// privilege gain) and a memory and pids bound, and the record says each
// sidecar's bound. Read from the engine (--keep keeps the stopped
// containers to inspect; the test removes them).
func TestHostileSidecarUnbounded(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	harbor := "hostile-side/harbor"
	hdir := filepath.Join(root, "harbor")
	harborTask(t, hdir, "side", harbor, map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    build:\n      context: .\n  side:\n    image: " + docker.DebianImage + "\n    command: [\"sleep\", \"infinity\"]\n  capped:\n    image: " + docker.DebianImage + "\n    command: [\"sleep\", \"infinity\"]\n    mem_limit: 96m\n",
	})
	t.Cleanup(func() { removeTaskImages(t, harbor) })
	own := "hostile-side/headroom"
	odir := filepath.Join(root, "own")
	os.MkdirAll(odir, 0o755)
	os.WriteFile(filepath.Join(odir, "side.toml"), []byte(fmt.Sprintf("[task]\nname = %q\n[environment]\nimage = %q\nmemory = \"64M\"\n[verifier]\ncommand = [\"sh\", \"-c\", \"true\"]\n[[agents]]\nname = \"oracle\"\n  [[agents.steps]]\n  name = \"noop\"\n  command = [\"true\"]\n[[services]]\nname = \"tomlside\"\nimage = %q\ncommand = [\"sleep\", \"infinity\"]\n", own, docker.DebianImage, docker.DebianImage)), 0o644)
	leaked := 0
	var seen []string
	var outcomes []any
	for _, c := range []struct{ dir, name string }{{hdir, harbor}, {odir, own}} {
		out := filepath.Join(root, "out-"+filepath.Base(c.dir))
		run := runBin(t, bin, nil, "run", "--tasks-dir", c.dir, "--tasks", c.name, "--agents", "oracle", "--ratios", "1x", "--repeats", "1", "--keep", "--out", out)
		dir, recs, _ := records(t, out)
		id := filepath.Base(dir)
		t.Cleanup(func() { removeExperimentContainers(id) })
		if run.code != 0 || len(recs) != 1 {
			t.Fatalf("%s: run exit %d, %d records:\n%s", c.name, run.code, len(recs), run.stderr)
		}
		outcomes = append(outcomes, recs[0]["outcome"])
		for _, k := range experimentList(t, id, false) {
			svc := k.Labels[docker.LabelService]
			if svc == "" {
				continue
			}
			info, err := exec.Command("docker", "inspect", "-f", "{{json .HostConfig.CapDrop}} {{json .HostConfig.SecurityOpt}} {{.HostConfig.Memory}} {{.HostConfig.PidsLimit}}", k.ID).Output()
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(info))
			hardened := svc == "tomlside"
			want := map[string]string{"side": "1073741824", "capped": "100663296", "tomlside": "1073741824"}[svc]
			ok := f[2] == want && f[3] == "1024" && (!hardened || f[0] == `["ALL"]` && strings.Contains(f[1], "no-new-privileges"))
			if !ok {
				t.Errorf("sidecar %s (hardened %v): CapDrop %s, SecurityOpt %s, Memory %s, PidsLimit %s; want memory %s, pids 1024 (and, hardened, [\"ALL\"], no-new-privileges)", svc, hardened, f[0], f[1], f[2], f[3], want)
				leaked++
			}
			seen = append(seen, fmt.Sprintf("%s: cap-drop %s, %s, memory %s, pids %s", svc, f[0], f[1], f[2], f[3]))
		}
		sides, _ := recs[0]["sidecars"].([]any)
		for _, s := range sides {
			if m, _ := s.(map[string]any); m["limit_bytes"] == nil || m["pids_limit"] == nil {
				t.Errorf("%s: the record gives no bound for %v", c.name, m)
				leaked++
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("kept sidecars: %v, want 3", seen)
	}
	letoutRow(t, "compose sidecars of a Harbor task (harbor profile, 1x): `side` with no limit, `capped` with mem_limit 96m; a headroom task's `[[services]]` (hardened)",
		fmt.Sprintf("trials %v; each sidecar with its task's profile and a bound: %s; the record gives each its limit_bytes and pids_limit", outcomes, strings.Join(seen, "; ")),
		0, leaked, 0)
}

// quickTask writes a headroom task (the Debian image, one step running
// command) named name as dir/file.toml.
func quickTask(t *testing.T, dir, name, command string) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+".toml")
	body := fmt.Sprintf("[task]\nname = %q\n[environment]\nimage = %q\nmemory = \"64M\"\n[verifier]\ncommand = [\"sh\", \"-c\", \"true\"]\n[[agents]]\nname = \"oracle\"\n  [[agents.steps]]\n  name = \"work\"\n  command = [\"bash\", \"-c\", %q]\n",
		name, docker.DebianImage, command)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// containerExists says whether the engine still has container id.
func containerExists(id string) bool {
	return exec.Command("docker", "inspect", "-f", "{{.Id}}", id).Run() == nil
}

// Item 3: the start-up reaper and other people's containers. Beside a
// run's start: three containers labelled `headroom` that no headroom
// made (no owner label; created, running, exited), one of a dead owner
// in another experiments root, and one of a dead owner under the run's
// own root whose image says `LABEL headroom.kept=1`. Only the last is a
// leftover of this root.
func TestHostileReaperOthersContainers(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	out := filepath.Join(root, "out")
	ownExp, otherExp := "20261202-000000-h40own", "20261202-000000-h40other"
	os.MkdirAll(filepath.Join(out, ownExp), 0o755)
	img := "headroom-e2e-h40-kept:" + randomHex(4)
	build := exec.Command("docker", "build", "-t", img, "-")
	build.Stdin = strings.NewReader("FROM " + docker.DebianImage + "\nLABEL headroom.kept=1\n")
	if o, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v %s", img, err, o)
	}
	t.Cleanup(func() { exec.Command("docker", "image", "rm", "-f", img).Run() })
	ended := exec.Command("true")
	ended.Run()
	// This host, boot and pid namespace: a pid that has ended.
	parts := strings.Split(runner.Owner(), ":")
	parts[1], parts[2] = strconv.Itoa(ended.Process.Pid), "1"
	deadOwner := strings.Join(parts, ":")
	task := quickTask(t, filepath.Join(root, "tasks"), "hostile-reap/quick", "true")
	make := func(create bool, labels ...string) string {
		args := []string{"--label", "headroom=1"}
		for _, l := range labels {
			args = append(args, "--label", l)
		}
		if create {
			full := append(append([]string{"create", "--label", "headroom-e2e-h40=1"}, args...), docker.DebianImage, "sleep", "600")
			o, err := exec.Command("docker", full...).CombinedOutput()
			if err != nil {
				t.Fatalf("docker create: %v %s", err, o)
			}
			id := strings.TrimSpace(string(o))
			t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })
			return id
		}
		return ownContainer(t, args...)
	}
	others := map[string]string{
		"created, no owner label":  make(true, "headroom.experiment="+ownExp),
		"running, no owner label":  make(false, "headroom.experiment="+ownExp),
		"exited, no owner label":   make(false, "headroom.experiment="+ownExp),
		"dead owner, another root": make(true, "headroom.experiment="+otherExp, "headroom.trial=t0001", "headroom.owner="+deadOwner),
	}
	exec.Command("docker", "stop", "-t", "0", others["exited, no owner label"]).Run()
	keptArgs := []string{"create", "--label", "headroom-e2e-h40=1", "--label", "headroom=1", "--label", "headroom.experiment=" + ownExp, "--label", "headroom.trial=t0001", "--label", "headroom.owner=" + deadOwner, img, "sleep", "600"}
	o, err := exec.Command("docker", keptArgs...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker create: %v %s", err, o)
	}
	leftover := strings.TrimSpace(string(o))
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", leftover).Run() })

	run := runBin(t, bin, nil, "run", "--tasks-dir", filepath.Dir(task), "--tasks", "hostile-reap/quick", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	if run.code != 0 {
		t.Errorf("run exit %d:\n%s", run.code, run.stderr)
	}
	leaked := 0
	var removed []string
	for what, id := range others {
		if !containerExists(id) {
			t.Errorf("the run's reaper removed a container no headroom made or of another root: %s", what)
			removed = append(removed, what)
			leaked++
		}
	}
	if containerExists(leftover) {
		t.Errorf("the dead owner's leftover under the run's root, its image saying headroom.kept=1, was left (kept by its image)")
		leaked++
	}
	reapLine := firstLineWith(run.stderr, "removed leftover")
	letoutRow(t, "a run starting beside containers labelled `headroom` no headroom made (no owner label: created, running, exited), a dead owner's in another experiments root, and a dead owner's under its own root from an image with `LABEL headroom.kept=1`",
		fmt.Sprintf("the 4 others' left (removed: %v); the image-kept leftover removed: %q", removed, reapLine),
		0, leaked, 0)
}

// Item 4: the verifier leaves its reward.txt as a symbolic link: to a
// file saying 1 (a verdict the path itself does not hold), and to
// /proc/1/environ (the step driver is PID 1: only it may read that).
// Under the step driver and under --exec-steps alike the trial fails,
// naming the link, and nothing of PID 1's environment reaches a record.
func TestHostileRewardLink(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	for name, target := range map[string]string{"hostile-reward/link-to-one": "/tmp/one", "hostile-reward/link-to-environ": "/proc/1/environ"} {
		harborTask(t, tasks, filepath.Base(name), name, map[string]string{
			"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /tmp/one\nln -sf " + target + " /logs/verifier/reward.txt\n",
		})
	}
	t.Cleanup(func() { removeTaskImages(t, "hostile-reward/") })
	forged, leaked, lost := 0, 0, 0
	var said []string
	for _, runner := range [][]string{nil, {"--exec-steps"}} {
		out := filepath.Join(root, fmt.Sprintf("out%d", len(runner)))
		args := append([]string{"run", "--tasks-dir", tasks, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out}, runner...)
		run := runBin(t, bin, nil, args...)
		_, recs, left := records(t, out)
		leaked += left
		lost += 2 - len(recs)
		for _, r := range recs {
			reason, _ := r["reason"].(string)
			if r["outcome"] == "passed" {
				t.Errorf("%v %s passed through a link to a file saying 1", runner, r["task"])
				forged++
			}
			if strings.Contains(reason, "HEADROOM_TRIAL=") || strings.Contains(reason, "PATH=") {
				t.Errorf("%v %s: PID 1's environment in the reason: %q", runner, r["task"], reason)
				leaked++
			}
			if !strings.Contains(reason, "symbolic link") {
				t.Errorf("%v %s: %s %q, want the link named", runner, r["task"], r["outcome"], reason)
			}
			said = append(said, fmt.Sprintf("%s %s", r["outcome"], reason))
		}
		if run.code != 0 && run.code != 1 {
			t.Errorf("run %v exit %d:\n%s", runner, run.code, run.stderr)
		}
	}
	letoutRow(t, "the verifier's reward.txt a symbolic link to a file saying 1, and to /proc/1/environ, under the step driver and --exec-steps",
		fmt.Sprintf("4 trials, each %q", said[0]), lost, leaked, forged)
}

// Item 5: a --pass-env secret of 54 characters reaches the reward: the
// agent leaves it in a file and the verifier writes that as reward.txt.
// The reason quotes the reward cut at 40 characters; no piece of the
// secret of 12 characters or more may be in any record, log or line.
func TestHostileSecretCutBeforeMasking(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-secret/cut"
	harborTask(t, tasks, "cut", name, map[string]string{
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\ncp /tmp/s /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	secret := "SeCrEt" + randomHex(24)
	out := filepath.Join(root, "out")
	run := runBin(t, bin, []string{"HOSTILE_CUT=" + secret}, "run", "--tasks-dir", tasks, "--tasks", name, "--agent-command", `printf '%s\n' "$HOSTILE_CUT" > /tmp/s`, "--agents", "command", "--pass-env", "HOSTILE_CUT", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	_, recs, left := records(t, out)
	texts := []map[string]string{experimentFiles(t, out), {"run stdout": run.stdout, "run stderr": run.stderr}}
	leaked := 0
	for i := 0; i+12 <= len(secret); i += 6 {
		n, where := countIn(secret[i:i+12], texts...)
		if n > 0 {
			t.Errorf("characters %d–%d of the secret are in %v", i, i+12, where)
		}
		leaked += n
	}
	reason := ""
	if len(recs) == 1 {
		reason, _ = recs[0]["reason"].(string)
	}
	letoutRow(t, "a 54-character --pass-env secret written by the verifier as reward.txt (the reason quotes a reward cut at 40 characters)",
		fmt.Sprintf("%d trial failed: %q", len(recs), reason), 1-len(recs), leaked+left, 0)
}

// Item 6: a finished experiment's trials.jsonl replaced by a link to
// /dev/zero, and by a FIFO nobody writes, given to `report` (under a 2
// GiB address-space bound and a 60 s deadline, so that a build that
// reads it whole cannot take the shared machine's memory). Each must be
// refused at once, naming the file; a hang or an exhaustion counts lost.
func TestHostileReportReadsAnything(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	task := quickTask(t, filepath.Join(root, "tasks"), "hostile-store/quick", "true")
	out := filepath.Join(root, "out")
	if r := runBin(t, bin, nil, "run", "--tasks-dir", filepath.Dir(task), "--ratios", "uncapped", "--repeats", "1", "--out", out); r.code != 0 {
		t.Fatalf("run exit %d:\n%s", r.code, r.stderr)
	}
	dir, _ := onlyExperiment(t, out)
	lost := 0
	var said []string
	for _, c := range []struct {
		what string
		make func(p string) error
	}{
		{"a link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		exp := filepath.Join(root, "copy-"+strings.ReplaceAll(c.what, " ", "-"), filepath.Base(dir))
		os.MkdirAll(filepath.Dir(exp), 0o755)
		if o, err := exec.Command("cp", "-a", dir, filepath.Dir(exp)+"/").CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, o)
		}
		for _, f := range []string{"trials.jsonl", "trials.summary"} {
			os.Remove(filepath.Join(exp, f))
		}
		if err := c.make(filepath.Join(exp, "trials.jsonl")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-c", `ulimit -v 2097152; exec "$0" report "$1"`, bin, exp)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		start := time.Now()
		o, err := cmd.CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		took := time.Since(start)
		switch {
		case hung:
			t.Errorf("report of trials.jsonl as %s hung (killed after %s)", c.what, took.Round(time.Second))
			lost++
		case err == nil || !strings.Contains(string(o), "trials.jsonl is not a regular file"):
			t.Errorf("report of trials.jsonl as %s: %v after %s:\n%.600s", c.what, err, took.Round(time.Millisecond), o)
			lost++
		}
		said = append(said, fmt.Sprintf("%s: %s in %s", c.what, firstLineWith(string(o), "trials.jsonl"), took.Round(time.Millisecond)))
	}
	letoutRow(t, "`report` of an experiment whose trials.jsonl is a link to /dev/zero, and a FIFO",
		strings.Join(said, "; "), lost, 0, 0)
}

// Item 8: the experiment's lock file deleted while its run (4 trials,
// concurrency 1) runs, after its first record, then `run --resume` of it:
// the resume must be refused, the run go on alone.
func TestHostileLockFileDeleted(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := slowTasks(t, 2500)
	out := filepath.Join(t.TempDir(), "out")
	a, dir := startSweep(t, bin, tasks, out, 4, 1)
	a.waitLine(`^\[1/4\] `, 3*time.Minute)
	if err := os.Remove(filepath.Join(dir, "lock")); err != nil {
		t.Fatal(err)
	}
	second := runBin(t, bin, nil, "run", "--resume", dir, "--out", out)
	if second.code != 2 || !strings.Contains(second.stderr, "is being written by") {
		t.Errorf("resume after the lock file was deleted: exit %d, want 2:\n%s", second.code, second.stderr)
	}
	if code := a.wait(5 * time.Minute); code != 0 {
		t.Errorf("the first run: exit %d:\n%s", code, a.stderr())
	}
	lines, ids := distinct(trialLines(t, dir))
	letoutRow(t, "the experiment's `lock` file deleted while its `run` (4 trials) runs, then `run --resume` of it",
		fmt.Sprintf("the resume refused, exit %d: %q; the run went on: %d records for %d trials", second.code, firstLineWith(second.stderr, "being written by"), lines, ids),
		4-ids+lines-ids, containersLeft(t, filepath.Base(dir)), 0)
}

// jsonLines counts the lines of the file at p (0 if it is not there).
func jsonLines(p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// Item 9: while a run (4 trials, concurrency 1) runs, after its first
// record: trials.jsonl renamed to trials.jsonl.bak; and, in another run,
// trials/ moved aside and replaced by a link to a directory outside.
// Lost: trials the run said passed whose record is neither in
// trials.jsonl nor where the run's error says they are; leaked: files
// written through the link.
func TestHostileRecordsFileReplaced(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := slowTasks(t, 2500)
	root := t.TempDir()
	out := filepath.Join(root, "out")
	passed := regexp.MustCompile(`(?m)^\[\d+/4\] passed`)

	a, dir := startSweep(t, bin, tasks, out, 4, 1)
	a.waitLine(`^\[1/4\] `, 3*time.Minute)
	if err := os.Rename(filepath.Join(dir, "trials.jsonl"), filepath.Join(dir, "trials.jsonl.bak")); err != nil {
		t.Fatal(err)
	}
	code := a.wait(5 * time.Minute)
	said := a.stderr()
	kept := jsonLines(filepath.Join(dir, "trials.jsonl"))
	if strings.Contains(said, "trials.jsonl.bak") {
		kept += jsonLines(filepath.Join(dir, "trials.jsonl.bak"))
	}
	lost := max(0, len(passed.FindAllString(said, -1))-kept)
	if code == 0 {
		t.Errorf("the run with its trials.jsonl renamed exited 0:\n%s", said)
		lost++
	}
	renamed := firstLineWith(said, "renamed or replaced")

	outside := filepath.Join(root, "outside")
	os.MkdirAll(outside, 0o755)
	b, dir2 := startSweep(t, bin, tasks, out, 4, 1)
	b.waitLine(`^\[1/4\] `, 3*time.Minute)
	if err := os.Rename(filepath.Join(dir2, "trials"), filepath.Join(dir2, "trials.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir2, "trials")); err != nil {
		t.Fatal(err)
	}
	code2 := b.wait(5 * time.Minute)
	written, _ := filepath.Glob(filepath.Join(outside, "*"))
	if len(written) > 0 || code2 == 0 {
		t.Errorf("trials/ replaced by a link: exit %d, written outside: %v\n%s", code2, written, b.stderr())
	}
	linked := firstLineWith(b.stderr(), "was replaced")
	letoutRow(t, "while `run` (4 trials) runs, after its first record: trials.jsonl renamed to trials.jsonl.bak; trials/ replaced by a link to a directory outside",
		fmt.Sprintf("exit %d: %q; exit %d: %q; nothing written outside", code, renamed, code2, linked),
		lost, len(written)+containersLeft(t, filepath.Base(dir))+containersLeft(t, filepath.Base(dir2)), 0)
}

// Item 7: what a crash during a separate verifier leaves in the
// temporary directory — the agent's artifacts, in a directory named
// after the dead headroom (its pid and start time) — beside one whose
// name has no owner, and a run starting. The dead one's is removed, with
// its evidence; the other left.
func TestHostileArtifactsLeftByACrash(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tmp := filepath.Join(root, "tmp")
	ended := exec.Command("true")
	ended.Run()
	// Named as headroom names it: the owner's pid, start, boot (its
	// hyphens taken out) and pid namespace, then a random part.
	me := strings.Split(runner.Owner(), ":")
	dead := filepath.Join(tmp, fmt.Sprintf("headroom-artifacts-%d-1-%s-%s-123456", ended.Process.Pid, strings.ReplaceAll(me[3], "-", ""), me[4]))
	anon := filepath.Join(tmp, "headroom-artifacts-123456")
	for _, d := range []string{dead, anon} {
		os.MkdirAll(filepath.Join(d, "logs", "artifacts"), 0o700)
		os.WriteFile(filepath.Join(d, "logs", "artifacts", "model.bin"), make([]byte, 1<<20), 0o600)
	}
	task := quickTask(t, filepath.Join(root, "tasks"), "hostile-artifacts/quick", "true")
	run := runBin(t, bin, []string{"TMPDIR=" + tmp}, "run", "--tasks-dir", filepath.Dir(task), "--ratios", "uncapped", "--repeats", "1", "--out", filepath.Join(root, "out"))
	leaked := 0
	if _, err := os.Stat(dead); err == nil {
		t.Errorf("the dead headroom's artifacts are still in %s", dead)
		leaked++
	}
	if _, err := os.Stat(anon); err != nil {
		t.Errorf("a directory with no owner in its name was removed: %v", err)
		leaked++
	}
	letoutRow(t, "a run starting beside `$TMPDIR/headroom-artifacts-<pid>-<start>-*` of a dead headroom (1 MiB of the agent's artifacts) and one with no owner in its name",
		fmt.Sprintf("exit %d; %q; the other left", run.code, firstLineWith(run.stderr, "leftover artifacts")), 0, leaked, 0)
}

// Item 14: the oracle's solve.sh a 40,000-iteration loop, traced (80,002
// commands): the trial passes, and its record keeps the first and last
// commands as steps and folds the rest into one, a line of kilobytes (it
// was 80,002 steps and 25.6 MB).
func TestHostileTracedLoop(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	harborTask(t, tasks, "loop", "hostile-trace/loop", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nfor i in $(seq 1 40000); do :; done\necho solved\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-trace/") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	dir, recs, leaked := records(t, out)
	lost, forged := 1-len(recs), 0
	data, err := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	said := "no record"
	for _, r := range recs {
		steps, _ := r["steps"].([]any)
		folded := ""
		for _, s := range steps {
			if f, _ := s.(map[string]any)["folded"].([]any); len(f) > 0 {
				folded = s.(map[string]any)["name"].(string)
			}
		}
		said = fmt.Sprintf("%s, %d steps (a fold: %q), a record line of %d bytes", r["outcome"], len(steps), folded, len(data))
		if r["outcome"] != "passed" {
			t.Errorf("outcome %s (%s), want passed", r["outcome"], r["reason"])
			lost++
		}
		if len(steps) > 2*200+4 || folded == "" || len(data) > 100<<10 {
			t.Errorf("%s: want at most the kept steps and a fold, under 100 KB", said)
			lost++
		}
	}
	if run.code != 0 {
		t.Errorf("run exit %d:\n%s", run.code, run.stderr)
	}
	letoutRow(t, "the oracle's solve.sh a traced 40,000-iteration loop (80,002 commands)", said, lost, leaked, forged)
}

// Item 12: the agent replaces /tests with a file (solve.sh: rm -rf
// /tests; echo x > /tests) and leaves a process writing 1 to
// /logs/verifier/reward.txt every 50 ms, then the verifier's files are
// copied in, under the step driver and --exec-steps. The copy's refusal
// is the task's own doing: each trial failed, "the step's files could
// not be put in place: …". An engine-lost (or any infra-error) names the
// engine for what the task did, "the verifier wrote no reward" a
// verifier that never ran, a pass the agent's own reward: each forged.
func TestHostileTestsMadeAFile(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-tests/a-file"
	harborTask(t, tasks, "a-file", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\nrm -rf /tests\necho x > /tests\n( while :; do mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; sleep 0.05; done ) >/dev/null 2>&1 &\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-tests/") })
	lost, leaked, forged := 0, 0, 0
	var said []string
	for _, runner := range [][]string{nil, {"--exec-steps"}} {
		out := filepath.Join(root, fmt.Sprintf("out%d", len(runner)))
		args := append([]string{"run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out}, runner...)
		run := runBin(t, bin, nil, args...)
		_, recs, left := records(t, out)
		leaked += left
		lost += 1 - len(recs)
		for _, r := range recs {
			reason, _ := r["reason"].(string)
			if r["outcome"] != "failed" || r["cause"] == "engine-lost" || !strings.Contains(reason, "the step's files could not be put in place") {
				t.Errorf("%v: %s/%v %q, want the task's own failure: the step's files could not be put in place", runner, r["outcome"], r["cause"], reason)
				forged++
			}
			said = append(said, fmt.Sprintf("%v %s %q", runner, r["outcome"], reason))
		}
		if run.code != 0 && run.code != 1 {
			t.Errorf("run %v exit %d:\n%s", runner, run.code, run.stderr)
		}
	}
	letoutRow(t, "the agent replaces /tests with a file and leaves a process writing 1 to reward.txt, then the verifier's files are copied in, under the step driver and --exec-steps",
		strings.Join(said, "; "), lost, leaked, forged)
}

// Item 13: an image whose HEALTHCHECK never passes nor fails (a start
// period of 1000 h) held its trial at "creating container" for ever. The
// wait is bounded (HEADROOM_IMAGE_HEALTH_WAIT=10s here; 15 min unset),
// then the trial is an infra-error naming the check. A run still going
// 3 minutes past the bound is lost (stopped by SIGTERM, as a user's ^C).
func TestHostileImageHealthForever(t *testing.T) {
	healthForever(t, "an image `HEALTHCHECK --start-period=1000h --interval=1s … CMD false` (HEADROOM_IMAGE_HEALTH_WAIT=10s)", "hostile-health/forever", map[string]string{
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nHEALTHCHECK --start-period=1000h --interval=1s --timeout=5s --retries=1 CMD false\n",
	}, "HEALTHCHECK did not pass within 10s: still starting (its start period 1000h0m0s")
}

// Item 15: the oracle's solve.sh (traced) runs a pipeline of 40
// commands of 600 bytes each, which join the running step one trace line
// at a time. Its shown command is cut at 2,000 bytes as every step's is
// (it was the whole 24 KB; 3.27 MB seen in one); a show past the cut is
// a record grown without bound: lost, as the traced loop's row counts it.
func TestHostileJoinedPipelineShow(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-pipe/joined"
	pipe := strings.TrimSuffix(strings.Repeat(`true "$A" | `, 40), " | ")
	harborTask(t, tasks, "joined", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\nA=$(head -c 600 /dev/zero | tr '\\0' x)\n" + pipe + "\necho solved\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-pipe/") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	_, recs, leaked := records(t, out)
	lost := 1 - len(recs)
	said := "no record"
	for _, r := range recs {
		longest, pipeline := 0, 0
		for _, s := range steps(r) {
			show, _ := s["show"].(string)
			longest = max(longest, len(show))
			if strings.Count(show, "true xxxx") > 1 {
				pipeline = max(pipeline, len(show))
			}
		}
		said = fmt.Sprintf("%s, %d steps; the pipeline's shown command %d bytes (the longest %d)", r["outcome"], len(steps(r)), pipeline, longest)
		if r["outcome"] != "passed" || pipeline <= 1200 {
			t.Errorf("%s (%s): want passed, the pipeline a step of more than two commands", said, r["reason"])
			lost++
		}
		if longest > 2000+len("…") {
			t.Errorf("%s: want every shown command cut at 2,000 bytes", said)
			lost++
		}
	}
	if run.code != 0 {
		t.Errorf("run exit %d:\n%s", run.code, run.stderr)
	}
	letoutRow(t, "the oracle's solve.sh a traced pipeline of 40 commands of 600 bytes (joining the running step)", said, lost, leaked, 0)
}

// Item 16: a task named `hostile-md/my|task | forged` run at 1x and
// uncapped, then `report --format markdown`: every row of every table
// keeps its header's cells (a `|` of a cell's own escaped `\|`); a row
// with more is forged.
func TestHostileMarkdownPipes(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	name := "hostile-md/my|task | forged"
	task := quickTask(t, filepath.Join(root, "tasks"), name, "true")
	out := filepath.Join(root, "out")
	if r := runBin(t, bin, nil, "run", "--tasks-dir", filepath.Dir(task), "--ratios", "1x,uncapped", "--repeats", "1", "--out", out); r.code != 0 {
		t.Fatalf("run exit %d:\n%s", r.code, r.stderr)
	}
	dir, recs, leaked := records(t, out)
	rep := runBin(t, bin, nil, "report", dir, "--format", "markdown")
	if rep.code != 0 {
		t.Fatalf("report exit %d:\n%s", rep.code, rep.stderr)
	}
	cells := func(l string) int { return strings.Count(l, "|") - strings.Count(l, `\|`) }
	forged, tables, rows, named := 0, 0, 0, 0
	want := -1
	for _, l := range strings.Split(rep.stdout, "\n") {
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		if want < 0 {
			want, tables = cells(l), tables+1
			continue
		}
		rows++
		if strings.Contains(l, "forged") {
			named++
		}
		if cells(l) != want {
			t.Errorf("row %q has %d cell bars, its table's header %d", l, cells(l), want)
			forged++
		}
	}
	escaped := strings.Contains(rep.stdout, `my\|task \| forged`)
	if named == 0 || !escaped {
		t.Errorf("the task's name, escaped, is in no row:\n%s", rep.stdout)
		forged++
	}
	letoutRow(t, "a task named `hostile-md/my|task | forged` (1x, uncapped) in `report --format markdown`",
		fmt.Sprintf("%d trials; %d tables, %d rows (%d naming the task), %d with other than its header's cells; the name written `my\\|task \\| forged`: %v", len(recs), tables, rows, named, forged, escaped),
		2-len(recs), leaked, forged)
}
