//go:build hostile

package e2e

// The hostile-input suite's third round (the hint-free attacker after
// #40), the trial pipeline's rows: each drives the binary under test
// (hostileBin: this tree's, or HEADROOM_HOSTILE_BIN's to show it failing
// on a build without the fix) on real containers and reports
// input | recorded | lost | leaked | forged, each of which must be 0.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner/docker"
)

// Item 1: tests/ holds a 600 MiB fixture and the verifier's time limit is
// 1 s. headroom's copy of tests/ ran under the verifier's deadline and,
// overrun, was "the engine went away" (an infra-error of the engine's:
// forged). The copy counts in the verifier's time, as Harbor's verifier
// uploads tests/ from its timeout's budget: the verifier's timeout, the
// copy named.
func TestHostileR3BigTestsCopy(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r3/bigtests"
	d := harborTask(t, tasks, "bigtests", name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 30.0\n[verifier]\ntimeout_sec = 1.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n", name),
	})
	if out, err := exec.Command("sh", "-c", "head -c 600M /dev/urandom > "+filepath.Join(d, "tests", "fixture.bin")).CombinedOutput(); err != nil {
		t.Fatalf("the fixture: %v %s", err, out)
	}
	t.Cleanup(func() { removeTaskImages(t, "hostile-r3/bigtests") })
	out := filepath.Join(root, "out")
	runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	lost, forged := 1-len(recs), 0
	said := "no record"
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		said = fmt.Sprintf("%s %v %s", r["outcome"], r["cause"], reason)
		if r["outcome"] != "timeout" || r["cause"] != "verifier-timeout" || !strings.Contains(reason, "were being copied") {
			t.Errorf("%s: want the verifier's timeout, the copy named (Harbor uploads tests/ from the verifier's budget)", said)
			forged++
		}
	}
	letoutRow(t, "tests/fixture.bin of 600 MiB, `[verifier] timeout_sec = 1.0`", said, lost, leaked, forged)
}

// Item 2: a separate verifier's task whose agent leaves a 2 GiB (sparse)
// file in /logs/artifacts. Past the 1 GiB headroom takes, the copy out
// was "the engine went away under the trial" (forged): it is the task's
// failure, "artifacts over 1 GiB".
func TestHostileR3OversizedArtifacts(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r3/sepbig"
	harborTask(t, tasks, "sepbig", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 30.0\n[verifier]\nenvironment_mode = \"separate\"\ntimeout_sec = 30.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n", name),
		"tests/Dockerfile":  "FROM " + docker.DebianImage + "\nCOPY test.sh /tests/test.sh\n",
		"solution/solve.sh": "#!/bin/bash\nmkdir -p /logs/artifacts; truncate -s 2G /logs/artifacts/big.bin\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r3/sepbig") })
	out := filepath.Join(root, "out")
	runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	lost, forged := 1-len(recs), 0
	said := "no record"
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		said = fmt.Sprintf("%s %v %s", r["outcome"], r["cause"], reason)
		if r["outcome"] != "failed" || r["cause"] != nil || !strings.HasPrefix(reason, "artifacts over 1 GiB") {
			t.Errorf("%s: want failed, artifacts over 1 GiB", said)
			forged++
		}
	}
	letoutRow(t, "a separate verifier's task; solve.sh `truncate -s 2G /logs/artifacts/big.bin`", said, lost, leaked, forged)
}

// healthForever runs a task whose healthcheck never passes (an image's
// HEALTHCHECK still starting for 1000 h, a task's healthcheck failing
// every second with two billion retries) under
// HEADROOM_IMAGE_HEALTH_WAIT=10s: its trial must end, an infra-error
// naming the check and the bound (want), within the bound and 3 minutes
// of the run's start (else lost: stopped by SIGTERM, as a user's ^C).
func healthForever(t *testing.T, input, name string, files map[string]string, want string) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	harborTask(t, tasks, "hc", name, files)
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	t.Setenv(docker.ImageHealthWaitEnv, "10s")
	l := startLive(t, bin, oracleArgs(tasks, name, out)...)
	dir := l.waitLine(`^\s+writing to (\S+)$`, 10*time.Minute)[1]
	start := time.Now()
	lost, forged, leaked := 0, 0, 0
	said := ""
	select {
	case <-l.done:
	case <-time.After(10*time.Second + 3*time.Minute):
		lines := strings.Split(l.stderr(), "\n")
		said = fmt.Sprintf("still running %s after the run began (its last line %q); stopped", time.Since(start).Round(time.Second), lines[len(lines)-1])
		t.Errorf("the trial of a healthcheck that never passes was held: %s", said)
		lost++
		l.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-l.done:
		case <-time.After(2 * time.Minute):
			t.Errorf("headroom still running 2 min after SIGTERM")
		}
	}
	took := time.Since(start).Round(time.Second)
	if said == "" {
		recs := trialLines(t, dir)
		lost += 1 - len(recs)
		for _, r := range recs {
			reason, _ := r["reason"].(string)
			if r["outcome"] != "infra-error" || r["cause"] == "engine-lost" || !strings.Contains(reason, want) {
				t.Errorf("%s %v %q, want an infra-error naming the healthcheck and its 10s bound (%q)", r["outcome"], r["cause"], reason, want)
				forged++
			}
			said = fmt.Sprintf("%s %q, the run done %s after it began", r["outcome"], reason, took)
		}
	}
	id := filepath.Base(dir)
	if n := containersLeft(t, id); n > 0 {
		t.Errorf("%d container(s) of experiment %s left", n, id)
		leaked += n
		removeExperimentContainers(id)
	}
	letoutRow(t, input, said, lost, leaked, forged)
}

// Item 3: `[environment.healthcheck]` failing every second with two
// billion retries held its trial at "creating container" (120 s until
// SIGINT): its wait is bounded as an image HEALTHCHECK's is.
func TestHostileR3EnvironmentHealthcheckForever(t *testing.T) {
	name := "hostile-r3/envhc"
	healthForever(t, "`[environment.healthcheck] command = \"false\"; interval_sec = 1.0; retries = 2000000000` (HEADROOM_IMAGE_HEALTH_WAIT=10s)", name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 30.0\n[verifier]\ntimeout_sec = 30.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n[environment.healthcheck]\ncommand = \"false\"\ninterval_sec = 1.0\nretries = 2000000000\n", name),
	}, "[environment.healthcheck] (bash -c false) did not pass within 10s")
}

// Item 3's twin: a multi-step task's `[steps.healthcheck]` of the same
// shape held its trial the same way, between its steps.
func TestHostileR3StepHealthcheckForever(t *testing.T) {
	name := "hostile-r3/stephc"
	healthForever(t, "`[steps.healthcheck] command = \"false\"; interval_sec = 1.0; retries = 2000000000` (HEADROOM_IMAGE_HEALTH_WAIT=10s)", name, map[string]string{
		"task.toml":                   fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 30.0\n[verifier]\ntimeout_sec = 30.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n[[steps]]\nname = \"one\"\n[steps.healthcheck]\ncommand = \"false\"\ninterval_sec = 1.0\nretries = 2000000000\n", name),
		"steps/one/instruction.md":    "Do it.\n",
		"steps/one/solution/solve.sh": "#!/bin/bash\necho solved\n",
	}, "step one's healthcheck (false) did not pass within 10s")
}

// Item 4: solve.sh leaves `nohup python3 …` running (it sleeps 5 s, then
// asks 300 MiB of a 128 MiB limit) and exits; test.sh sleeps 10 s and
// passes. The kill landed in the verifier's step and was charged to it
// ("first in step sleep 10", its peak 118 MiB its own): forged. Now the
// kill names the agent step that left the process running, and the
// verifier's step records that memory as a leftover's. (Harbor stops no
// process of an agent that ended by itself, nor does headroom: docs/
// PARITY.md's stop is a timed-out step's.) Its output goes to a file: a
// job that holds the oracle's output is waited for, as Harbor's tee waits
// (round seventeen), and its kill is then the oracle's own.
func TestHostileR3LeftoverKilledInTheVerifier(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r3/lefthog"
	harborTask(t, tasks, "lefthog", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 30.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name),
		"solution/solve.sh": "#!/bin/bash\nnohup python3 -c \"import time; time.sleep(5); b=bytearray(300*1024*1024)\" > /root/nohup.out 2>&1 &\n",
		"tests/test.sh":     "#!/bin/bash\nsleep 10\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r3/lefthog") })
	out := filepath.Join(root, "out")
	runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	lost, forged := 1-len(recs), 0
	said := "no record"
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		leftover := "none"
		for _, s := range steps(r) {
			if s["name"] == "sleep 10" {
				leftover = fmt.Sprintf("%v B from %v", s["leftover_rss_bytes"], s["leftover_from"])
				if n, _ := s["leftover_rss_bytes"].(float64); n < 64<<20 {
					t.Errorf("the verifier's step sleep 10 records %s left running, want the python's ≥ 64 MiB", leftover)
					forged++
				}
			}
		}
		said = fmt.Sprintf("%s %v %s; the verifier's step: leftover %s", r["outcome"], r["cause"], reason, leftover)
		if r["outcome"] != "passed-after-oom" || !strings.Contains(reason, "was left running by agent step nohup python3") {
			t.Errorf("%s: want passed-after-oom, the kill named for the agent step that left the process", said)
			forged++
		}
	}
	letoutRow(t, "solve.sh `nohup python3 -c \"…sleep(5); bytearray(300 MiB)\" > /root/nohup.out 2>&1 &` at 128 MiB; test.sh `sleep 10` then reward 1", said, lost, leaked, forged)
}

// Item 5: the host kills the oracle's python with SIGKILL (kill -9 of its
// host pid): no OOM kill by the kernel, no engine event. It was recorded
// as the task's plain failure ("step … exited 137"); the step and the
// reason now say what is known: a SIGKILL's status with no OOM kill, from
// the task or from outside the container.
func TestHostileR3Kill9FromTheHost(t *testing.T) {
	needEngine(t)
	if os.Geteuid() != 0 {
		t.Skip("killing a container's process from the host needs root")
	}
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r3/kill9"
	mark := "HRKILL9" + randomHex(6)
	harborTask(t, tasks, "kill9", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\npython3 -c 'import time; time.sleep(120)' " + mark + " && touch /tmp/done\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\nif [ -f /tmp/done ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r3/kill9") })
	out := filepath.Join(root, "out")
	l := startLive(t, bin, oracleArgs(tasks, name, out)...)
	dir := l.waitLine(`^\s+writing to (\S+)$`, 10*time.Minute)[1]
	pid := 0
	waitForCond(t, "the task's python on the host", 5*time.Minute, func() bool {
		o, _ := exec.Command("pgrep", "-f", "^python3 .*"+mark).Output()
		pid, _ = strconv.Atoi(strings.Fields(string(o) + " 0")[0])
		return pid > 0
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
	l.wait(5 * time.Minute)
	recs := trialLines(t, dir)
	lost, forged, leaked := 1-len(recs), 0, 0
	said := "no record"
	const note = "exited 137, a SIGKILL's status, with no OOM kill by the kernel: killed by the task or from outside the container"
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		said = fmt.Sprintf("%s %v %s", r["outcome"], r["cause"], reason)
		stepSays := false
		for _, s := range steps(r) {
			o, _ := s["output"].(string)
			stepSays = stepSays || strings.Contains(o, note)
		}
		if r["outcome"] != "failed" || !strings.Contains(reason, note) || !stepSays {
			t.Errorf("%s (said on the step: %v): want failed, the SIGKILL with no OOM kill said on the step and in the reason", said, stepSays)
			forged++
		}
	}
	id := filepath.Base(dir)
	if n := containersLeft(t, id); n > 0 {
		leaked += n
		removeExperimentContainers(id)
	}
	letoutRow(t, "solve.sh's `python3 -c 'sleep(120)'` killed from the host with `kill -9 <its host pid>`", said, lost, leaked, forged)
}
