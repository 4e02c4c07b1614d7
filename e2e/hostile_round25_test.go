//go:build hostile

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// r25Steps is a one-step multi-step Harbor task named name: step one's
// tests/test.sh is test, its workdir/setup.sh setup (none if "").
func r25Steps(name, verifierEnv, test, setup string) map[string]string {
	files := map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 20.0\n[verifier]\ntimeout_sec = 60.0\n%s"+
			"[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n[[steps]]\nname = \"one\"\n", name, verifierEnv),
		"instruction.md":              "",
		"steps/one/instruction.md":    "Do one.\n",
		"steps/one/solution/solve.sh": "#!/bin/bash\necho one\n",
		"steps/one/tests/test.sh":     test,
	}
	if setup != "" {
		files["steps/one/workdir/setup.sh"] = setup
	}
	return files
}

// secretRun is a row's run whose secret is passed by --pass-env NAME: its
// run, records and one record's outcome and reason, and how many places
// the secret shows (every experiment file, the run's output, `report
// --format json`), said as an error.
type secretRun struct {
	run             result
	recs            []map[string]any
	left, leaked    int
	outcome, reason string
}

func runWithSecret(t *testing.T, bin, env, secret string, args ...string) secretRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	var r secretRun
	r.run = runBin(t, bin, []string{env + "=" + secret}, append(args, "--pass-env", env, "--out", out)...)
	var dir string
	dir, r.recs, r.left = records(t, out)
	r.outcome, _, r.reason = oneRecord(r.recs)
	rep := runBin(t, bin, nil, "report", dir, "--format", "json")
	var where []string
	r.leaked, where = countIn(secret, experimentFiles(t, out), map[string]string{"stdout": r.run.stdout, "stderr": r.run.stderr, "report --format json": rep.stdout})
	if r.leaked > 0 {
		t.Errorf("the secret shows in %v", where)
	}
	return r
}

// oracleOnce is oracleArgs without its --out: runWithSecret gives one.
func oracleOnce(tasks, name string) []string {
	a := oracleArgs(tasks, name, "")
	return a[:len(a)-2]
}

// Round twenty-five, the thirty-fourth attacker's 1: a multi-step step's
// verifier wrote a --pass-env secret as a reward key ({"<secret>": 0.5},
// and NaN): the console masked it, trials.jsonl and `report --format
// json` held it in clear. Leaked: each place the secret shows.
func TestHostileR25SecretAsARewardKey(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	name := "hostile-r25/secret-key"
	const secret = "Zq7xK9wP3mVt2LbR25"
	harborTask(t, tasks, "secret-key", name, r25Steps(name, "[verifier.env]\nTOKEN = \"${R25_SECRET}\"\n",
		"#!/bin/sh\nmkdir -p /logs/verifier\nprintf '{\"key-%s\": 0.5, \"%s\": NaN, \"reward\": 1}' \"$TOKEN\" \"$TOKEN\" > /logs/verifier/reward.json\n", ""))
	t.Cleanup(func() { removeTaskImages(t, name) })
	r := runWithSecret(t, bin, "R25_SECRET", secret, oracleOnce(tasks, name)...)
	if r.outcome != "passed" {
		t.Errorf("outcome %s (%s), want passed (the reward is 1)", r.outcome, r.reason)
	}
	masked := 0
	for _, rec := range r.recs {
		masked += strings.Count(fmt.Sprint(rec["phases"]), "[redacted R25_SECRET]")
	}
	letoutRow(t, "multi-step step whose verifier writes `{\"key-<secret>\": 0.5, \"<secret>\": NaN, \"reward\": 1}` from a `--pass-env` secret",
		fmt.Sprintf("exit %d, %s, %d reward keys masked in the record, secret in %d places (%s)", r.run.code, r.outcome, masked, r.leaked, time.Since(start).Round(time.Second)), 1-len(r.recs), r.left+r.leaked, 0)
}

// The thirty-fourth attacker's 2: a multi-step step's workdir/setup.sh
// that sleeps held its trial for ever (cancelled at 139 s by an outer
// timeout). It is now bounded by the step's agent time limit (20 s).
// Lost: the trial not recorded within 3 minutes.
func TestHostileR25SetupThatNeverEnds(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	name := "hostile-r25/setup-sleeps"
	harborTask(t, tasks, "setup-sleeps", name, r25Steps(name, "", "#!/bin/sh\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n", "#!/bin/sh\necho setting up\nsleep 100000\n"))
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, oracleArgs(tasks, name, out)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	b, _ := cmd.CombinedOutput()
	_, recs, left := records(t, out)
	outcome, _, reason := oneRecord(recs)
	lost, forged := 0, 0
	if ctx.Err() != nil {
		lost = 1
		t.Errorf("the run was still going after 3 minutes:\n%s", b)
	} else if outcome != "failed" || !strings.Contains(reason, "one/setup.sh ran past its time limit (20s, the step's agent time limit)") {
		forged = 1
		t.Errorf("outcome %s (%s), want failed naming the setup's bound", outcome, reason)
	}
	letoutRow(t, "multi-step step whose `workdir/setup.sh` runs `sleep 100000` (agent limit 20 s)",
		fmt.Sprintf("%s: %q (%s)", outcome, shmClip(reason), time.Since(start).Round(time.Second)), lost, left, forged)
}

// The thirty-fourth attacker's 6: solution/solve.sh made a FIFO was left
// out of the copy: validate said ok, the trial ran `bash
// /solution/solve.sh` into "No such file or directory", and the
// verifier's 1 passed it. It is refused at load, naming it, as a FIFO at
// task.toml is. Forged: validate's ok.
func TestHostileR25FIFOSolution(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	dir := harborTask(t, tasks, "fifo-solve", "hostile-r25/fifo-solve", nil)
	fifo := filepath.Join(dir, "solution", "solve.sh")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	val := runBin(t, bin, nil, "tasks", "validate", dir)
	forged := 0
	if val.code != 2 || !strings.Contains(val.stdout+val.stderr, fifo+" is not a regular file (p") {
		forged++
		t.Errorf("validate: exit %d, want 2 naming the FIFO\n%s%s", val.code, val.stdout, val.stderr)
	}
	letoutRow(t, "Harbor task whose `solution/solve.sh` is a FIFO: `tasks validate`",
		fmt.Sprintf("validate exit %d (%s)", val.code, time.Since(start).Round(time.Second)), 0, 0, forged)
}

// The thirty-fourth attacker's 3: Harbor reads `memory = "0.2G"` as 204
// MiB (a number then G, M or K, truncated to whole MiB) and refuses
// "2GB"; headroom ran 204.8 MiB and took "2GB". Forged: each spec
// `tasks show` gives otherwise than Harbor.
func TestHostileR25HarborMemoryStrings(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	forged, agreed := 0, 0
	for _, c := range []struct{ memory, want string }{{"0.2G", "204MiB"}, {"300.7M", "300MiB"}, {"2GB", "is not a size Harbor reads"}} {
		name := "hostile-r25/mem-" + strings.ToLower(strings.ReplaceAll(c.memory, ".", "-"))
		dir := harborTask(t, tasks, filepath.Base(name), name, map[string]string{
			"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[environment]\nmemory = %q\nallow_internet = false\n", name, c.memory),
		})
		val := runBin(t, bin, nil, "tasks", "show", "--tasks-dir", tasks, name)
		if c.want == "204MiB" || c.want == "300MiB" {
			if val.code != 0 || !strings.Contains(val.stdout, c.want) {
				forged++
				t.Errorf("memory = %q: show exit %d, want %s\n%s%s", c.memory, val.code, c.want, val.stdout, val.stderr)
				continue
			}
		} else if v := runBin(t, bin, nil, "tasks", "validate", dir); v.code != 2 || !strings.Contains(v.stdout+v.stderr, c.want) {
			forged++
			t.Errorf("memory = %q: validate exit %d, want refused\n%s%s", c.memory, v.code, v.stdout, v.stderr)
			continue
		}
		agreed++
	}
	letoutRow(t, "Harbor task.toml `memory = \"0.2G\"`, `\"300.7M\"`, `\"2GB\"`: `tasks show` / `validate`",
		fmt.Sprintf("%d of 3 as Harbor reads them (%s)", agreed, time.Since(start).Round(time.Second)), 0, 0, forged)
}

// The thirty-fifth attacker's 1: a terminal-bench task whose image's
// BASH_ENV wrote a --pass-env secret split by an escape sequence into
// the test output ("test_sk-a\x1b[0mnt-…"): the reason was masked, but
// the pane drew the escape away and `tests.failing` held the secret
// whole, in trials.jsonl and `report --format json`. Leaked: each place
// it shows.
func TestHostileR25SecretSplitForThePane(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	dir := filepath.Join(tasks, "r25-split")
	if err := os.CopyFS(dir, os.DirFS("../examples/tasks/hello-old")); err != nil {
		t.Fatal(err)
	}
	const secret = "sk-ant-Zq9Wv3Lp7TyX25"
	writeFiles(t, dir, map[string]string{
		"Dockerfile":   "FROM headroom-debian:bookworm\nWORKDIR /app\nCOPY evil.sh /etc/evil.sh\nENV BASH_ENV=/etc/evil.sh\nLABEL headroom.test.row=r25-split\n",
		"evil.sh":      "if [ -n \"$HRSECRET\" ]; then printf 'FAILED tests/test_x.py::test_%s\\033[0m%s - boom\\n' \"${HRSECRET:0:4}\" \"${HRSECRET:4}\" > /tmp/leak; fi\n",
		"run-tests.sh": "#!/bin/bash\necho '=== short test summary info ==='\ncat /tmp/leak\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "r25-split") })
	r := runWithSecret(t, bin, "HRSECRET", secret, "run", "--tasks-dir", tasks, "--tasks", "r25-split", "--agents", "command", "--agent-command", "echo agent ran", "--ratios", "1x", "--repeats", "1")
	failing := ""
	for _, rec := range r.recs {
		failing = fmt.Sprint(rec["tests"])
	}
	if r.outcome != "failed" || !strings.Contains(failing, "test_[redacted HRSECRET]") {
		t.Errorf("outcome %s (%s), tests %s: want failed, the failing test masked", r.outcome, r.reason, failing)
	}
	letoutRow(t, "terminal-bench task whose image's `BASH_ENV` prints a `--pass-env` secret split by `\\e[0m` as a failing test's name",
		fmt.Sprintf("exit %d, %s, tests %s, secret in %d places (%s)", r.run.code, r.outcome, failing, r.leaked, time.Since(start).Round(time.Second)), 1-len(r.recs), r.left+r.leaked, 0)
}

// The thirty-fifth attacker's 2: a multi-step step's reward.json whose
// value is a --pass-env secret JSON-escaped (\u0073k-…): the reason was
// masked, `phases[].stopped` held the decoder's error with the secret
// whole. Leaked: each place it shows.
func TestHostileR25SecretJSONEscapedInAStepsReward(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	name := "hostile-r25/secret-escaped"
	const secret = "sk-ant-Zq9Wv3Lp7TyX2E"
	harborTask(t, tasks, "secret-escaped", name, r25Steps(name, "[verifier.env]\nJUDGE_KEY = \"${R25_SECRET}\"\n",
		"#!/bin/sh\nmkdir -p /logs/verifier\nk=$(printf %s \"$JUDGE_KEY\" | od -An -tx1 | tr -d ' \\n' | sed 's/../\\\\u00&/g')\nprintf '{\"quality\": \"%s\"}' \"$k\" > /logs/verifier/reward.json\n", ""))
	t.Cleanup(func() { removeTaskImages(t, name) })
	r := runWithSecret(t, bin, "R25_SECRET", secret, oracleOnce(tasks, name)...)
	if !strings.Contains(r.reason, "[redacted R25_SECRET]") {
		t.Errorf("outcome %s (%s): want the reason to name the value masked", r.outcome, r.reason)
	}
	letoutRow(t, "multi-step step whose verifier writes `{\"quality\": \"\\u0073\\u006b…\"}`, a `--pass-env` secret JSON-escaped",
		fmt.Sprintf("exit %d, %s, secret in %d places (%s)", r.run.code, r.outcome, r.leaked, time.Since(start).Round(time.Second)), 1-len(r.recs), r.left+r.leaked, 0)
}
