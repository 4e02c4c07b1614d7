//go:build hostile

package e2e

// The hostile-input suite's sixth round, a task's build: a Dockerfile's
// RUN steps are the task's code, and what they print reaches the user's
// terminal. Each row drives the binary under test (hostileBin: this
// tree's, or HEADROOM_HOSTILE_BIN's to show it failing on a build without
// the fix).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner/docker"
)

// counted is a stream of the binary counted, its last bytes kept.
type counted struct {
	n    int64
	tail []byte
}

func (c *counted) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	c.tail = append(c.tail, b...)
	if len(c.tail) > 256<<10 {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-128<<10:]...)
	}
	return len(b), nil
}

// Finding 5: a Dockerfile RUN that prints 200 MB of stderr in lines of
// 99,035 characters and fails had all of it relayed to headroom's
// terminal. Now the terminal gets the build's first MiB, each line cut at
// 2,000 bytes, then a count of the rest and the build's last lines: the
// one that says why it failed among them.
func TestHostileR6BuildOutputFlood(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r6/buildflood"
	const why = "E: the last line of the flood, which says why the build failed"
	harborTask(t, tasks, "buildflood", name, map[string]string{
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\n" +
			"RUN yes \"$(head -c 99035 /dev/zero | tr '\\0' x)\" | head -c 200000000 >&2; echo '" + why + "' >&2; exit 1\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	cmd := exec.Command(bin, oracleArgs(tasks, name, out)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr counted
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	relayed := stdout.n + stderr.n
	tail := string(stderr.tail)
	longest := 0
	for _, l := range strings.Split(tail, "\n") {
		longest = max(longest, len(l))
	}
	forged := 0
	if relayed > 4<<20 {
		forged++
		t.Errorf("headroom wrote %d bytes to its terminal for a build that printed 200 MB: want at most 4 MiB (the build's first MiB, a count, its last lines)", relayed)
	}
	// A build line is cut at 2,000 bytes; the error quotes the build's
	// last 4 lines, each cut at 300.
	if longest > 4<<10 {
		forged++
		t.Errorf("a line of %d bytes on headroom's terminal: want each build line cut at 2,000, none over 4 KiB", longest)
	}
	if !strings.Contains(tail, why) || !strings.Contains(tail, "more bytes of build output") {
		forged++
		t.Errorf("the end of headroom's stderr does not hold the build's last line %q after a count of what was not shown:\n%.3000s", why, tail[max(len(tail)-3000, 0):])
	}
	// Nothing could run: no experiment is written, nothing is left.
	letoutRow(t, "Harbor task whose Dockerfile `RUN` prints 200 MB of stderr in lines of 99,035 characters, then its reason, and fails",
		fmt.Sprintf("exit %d; headroom's stdout+stderr %.2f MB, longest line %d bytes, the build's last line shown: %t (%s)", code, float64(relayed)/1e6, longest, strings.Contains(tail, why), time.Since(start).Round(time.Second)),
		0, 0, forged)
}

// Finding 6: the contention report counted a trial's waits behind its own
// CPU quota and its own threads as the host's: a cpus = 0.2 task running
// 4 busy threads "waited 11.8s for a CPU in 3.1s of steps" and was judged
// contended (outside the comparison's quiet half), throttled 100% by its
// own limit. Its record now says the wait was its own, and it is not
// contended by it.
func TestHostileR6OwnThrottleNotContention(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r6/ownthrottle"
	harborTask(t, tasks, "ownthrottle", name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 0.2\nmemory_mb = 128\nallow_internet = false\n", name),
		// Four threads busy for 4 s of wall time each, however little CPU
		// the quota gives them, in one command of solve.sh (one step: a
		// traced script's background jobs are no command's time).
		"solution/solve.sh": "#!/bin/bash\nbash -c 'busy() { end=$((SECONDS+4)); while [ $SECONDS -lt $end ]; do :; done; }; for i in 1 2 3 4; do busy & done; wait'\necho done\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	outcome, _, reason := oneRecord(recs)
	if len(recs) != 1 {
		t.Fatalf("exit %d: %d records\n%s", run.code, len(recs), run.stderr)
	}
	noise, _ := recs[0]["noise"].(map[string]any)
	contended, _ := noise["contended"].(bool)
	why, _ := noise["why"].(string)
	own, _ := noise["own"].(string)
	known, _ := noise["cpu_wait_known"].(bool)
	if !known {
		t.Skipf("the trial's CPU wait was not read here (noise %v): nothing to judge", noise)
	}
	forged := 0
	if outcome != "passed" {
		t.Errorf("exit %d: %s: %s\n%s", run.code, outcome, reason, run.stderr)
	}
	if contended {
		forged++
		t.Errorf("judged contended (%q): its wait was behind its own cpus = 0.2 and its own 4 threads, not the host's", why)
	}
	if !strings.Contains(own, "its own CPU limit") {
		forged++
		t.Errorf("the record's noise does not say the wait was its own (own %q, why %q)", own, why)
	}
	letoutRow(t, "Harbor task, cpus = 0.2: a command of solve.sh runs 4 busy threads for 4 s",
		fmt.Sprintf("exit %d; %s; contended %t (%q); own: %q; host cpu_wait %v, own %v, steps %v (%s)", run.code, outcome, contended, why, own, noise["cpu_wait"], noise["own_cpu_wait"], noise["step_time"], time.Since(start).Round(time.Second)),
		1-len(recs), leaked, forged)
}

// Left over from round six's third fix: a build's own network left by a
// headroom killed mid-build was proven headroom's to a bare `clean`, but
// it carried no experiment label (the build comes before the run's
// experiment), so `clean --out` of the run's experiments root, and a
// run's start-up reap of it, left it. It now carries the run's root.
func TestHostileR6KilledBuildNetworkCleanOut(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r6/killedbuild"
	harborTask(t, tasks, "killedbuild", name, map[string]string{
		// A network of its own for the build (allow_internet), and a RUN
		// long enough to kill headroom under (the nonce: no cache answers).
		"task.toml":              fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = true\n", name),
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nRUN echo " + randomHex(8) + "; sleep 3\n",
	})
	t.Cleanup(func() {
		removeTaskImages(t, name)
		// The row's own build network (named by its build's label after
		// this row's task), should clean have left it.
		for _, n := range buildNetworksLeft(t, name) {
			exec.Command("docker", "network", "rm", n).Run()
		}
	})
	out := filepath.Join(root, "out")
	l := startLive(t, bin, oracleArgs(tasks, name, out)...)
	l.waitLine(`Running in [0-9a-f]+`, 2*time.Minute)
	l.cmd.Process.Kill()
	l.wait(time.Minute)
	nets := buildNetworksLeft(t, name)
	if len(nets) != 1 {
		t.Fatalf("build networks after the kill: %v; want the one the killed build left", nets)
	}
	// The engine ends the build's RUN container once its client is gone;
	// the network is free of it after.
	waitForCond(t, "the build's RUN container off its network", time.Minute, func() bool {
		o, err := exec.Command("docker", "network", "inspect", "-f", "{{len .Containers}}", nets[0]).Output()
		return err == nil && strings.TrimSpace(string(o)) == "0"
	})
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	clean := runBin(t, bin, nil, "clean", "--out", out)
	left := buildNetworksLeft(t, name)
	if len(left) > 0 {
		t.Errorf("clean --out %s left the killed build's network %v (exit %d):\n%s%s", out, left, clean.code, clean.stdout, clean.stderr)
	}
	said := ""
	for _, line := range strings.Split(clean.stdout, "\n") {
		if strings.Contains(line, nets[0]) {
			said = strings.TrimSpace(line)
		}
	}
	letoutRow(t, "a Harbor task with allow_internet = true whose Dockerfile RUN sleeps 3 s; headroom SIGKILLed at the RUN's \"Running in\"; then `clean --out` of the run's experiments root",
		fmt.Sprintf("clean exit %d: %q; build networks left %d (%s)", clean.code, said, len(left), time.Since(start).Round(time.Second)),
		0, len(left), 0)
}
