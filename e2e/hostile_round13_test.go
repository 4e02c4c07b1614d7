//go:build hostile

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// multiStepFiles is a two-step Harbor task (steps one and two, the final
// strategy unless strategy says otherwise) whose step one's test.sh
// writes reward1 as its reward file, and whose step two's writes reward
// 1 if step one's work is there and step two's solve.sh ran.
func multiStepFiles(name, strategy, gate, file, reward1 string) map[string]string {
	return map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.3\"\nmulti_step_reward_strategy = %q\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n"+
			"[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n[[steps]]\nname = \"one\"\n%s[[steps]]\nname = \"two\"\n", strategy, name, gate),
		"instruction.md":              "",
		"steps/one/instruction.md":    "Write one.\n",
		"steps/one/solution/solve.sh": "#!/bin/bash\necho one > /tmp/one\n",
		"steps/one/tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\nprintf '%s' '" + reward1 + "' > /logs/verifier/" + file + "\n",
		"steps/two/instruction.md":    "Write two.\n",
		"steps/two/solution/solve.sh": "#!/bin/bash\necho two > /tmp/two\n",
		"steps/two/tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\nif [ -f /tmp/one ] && [ -f /tmp/two ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}
}

// Round thirteen, the twelfth attacker's 4: Harbor's multi-step trial
// stops after a step only when its verifier raised, or min_reward says
// so, by `actual < threshold`: a NaN reward (Python's float("nan"),
// json's NaN) is not below any threshold, and a reward.json of {} is a
// verifier result with no key. headroom refused both as no reward and
// stopped the trial there: step two never ran.
func TestHostileR13NaNRewardPassesTheStepsGate(t *testing.T) {
	name := "hostile-r13/nan-gate"
	oracleVerdictRow(t, name, multiStepFiles(name, "final", "min_reward = 1.0\n", "reward.json", `{"reward": NaN}`),
		model.Passed, "", "Harbor's gate `NaN < 1.0` is false: step two runs, and the final strategy takes its reward 1",
		"Harbor multi-step task (final strategy): step one's reward.json is `{\"reward\": NaN}` under `min_reward = 1.0`; step two's is 1")
}

func TestHostileR13EmptyRewardsGoOn(t *testing.T) {
	name := "hostile-r13/empty-rewards"
	oracleVerdictRow(t, name, multiStepFiles(name, "final", "", "reward.json", `{}`),
		model.Passed, "", "Harbor's step with rewards {} and no min_reward goes on: step two runs, and the final strategy takes its reward 1",
		"Harbor multi-step task (final strategy): step one's reward.json is `{}`, no min_reward; step two's is 1")
}

func TestHostileR13EmptyRewardsCountInTheMean(t *testing.T) {
	name := "hostile-r13/empty-mean"
	oracleVerdictRow(t, name, multiStepFiles(name, "mean", "", "reward.json", `{}`),
		model.Failed, "reward 0.5 < 1", "Harbor's mean counts step one's {} as a step with reward 0: (0 + 1) / 2",
		"Harbor multi-step task (mean): step one's reward.json is `{}`, no min_reward; step two's is 1")
}

// Round thirteen, the twelfth attacker's 5: Harbor's oracle runs
// `solve.sh > /logs/agent/oracle.txt 2>&1`, and a verifier may read that
// log (a task that grades the agent's own log does). headroom wrote no
// such file: test.sh found nothing there and failed the oracle. The file
// holds stdout and stderr; under the step driver, also what a job
// solve.sh left running writes after it ended, as Harbor's redirect
// does (under --exec-steps headroom writes the file once the step has
// ended, from what it read: docs/RELIABILITY.md).
func TestHostileR13OracleLogForTheVerifier(t *testing.T) {
	bothRunnersRow(t, "hostile-r13/oracle-log", map[string]string{
		"solution/solve.sh": "#!/bin/bash\necho out-marker\necho err-marker >&2\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nf=/logs/agent/oracle.txt\n" +
			"if grep -qx out-marker $f && grep -qx err-marker $f; then echo 1; else echo \"oracle.txt: $(head -c 300 $f 2>&1)\" >&2; echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "Harbor's oracle sends solve.sh's stdout and stderr to /logs/agent/oracle.txt",
		"Harbor task: solve.sh prints a line to stdout and one to stderr; test.sh passes if /logs/agent/oracle.txt holds both")
}

func TestHostileR13OracleLogTakesALateJob(t *testing.T) {
	oracleVerdictRow(t, "hostile-r13/oracle-log-late", map[string]string{
		"solution/solve.sh": "#!/bin/bash\necho out-marker\n( sleep 2; echo late-marker ) &\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nsleep 3\nf=/logs/agent/oracle.txt\n" +
			"if grep -qx out-marker $f && grep -qx late-marker $f; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "Harbor's redirect takes what the job writes 2 s after solve.sh ended",
		"Harbor task: solve.sh prints a line and leaves `( sleep 2; echo late ) &`; test.sh waits 3 s and passes if /logs/agent/oracle.txt holds both (step driver)")
}

// Round thirteen, the twelfth attacker's 6: a compose service with both
// build: and image: is built and tagged under that name by Harbor's
// `docker compose build`, whatever the engine holds by the name already.
// headroom used the image by that name when it existed: the sidecar ran
// without what its Dockerfile adds. (headroom tags its build under its
// own name: the engine's image by the compose name is left as it was.)
func TestHostileR13SidecarBuiltThoughItsImageExists(t *testing.T) {
	name := "hostile-r13/side-build"
	bothRunnersRow(t, name, map[string]string{
		// The main container reaches its service by name on the
		// trial's network (with allow_internet = false it has none).
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = true\n", name),
		"environment/docker-compose.yaml": "services:\n  main:\n    build:\n      context: .\n  side:\n    image: " + docker.DebianImage + "\n    build:\n      context: ./side\n" +
			"    command: [\"python3\", \"-m\", \"http.server\", \"8000\", \"--directory\", \"/srv\"]\n",
		"environment/side/Dockerfile": "FROM " + docker.DebianImage + "\nRUN mkdir -p /srv && echo built > /srv/marker\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nfor i in $(seq 1 50); do\n" +
			"  got=$(python3 -c \"import urllib.request; print(urllib.request.urlopen('http://side:8000/marker', timeout=2).read().decode().strip())\" 2>/dev/null) && break\n  sleep 0.2\ndone\n" +
			"echo \"side says: $got\"\nif [ \"$got\" = built ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "Harbor's `docker compose build` builds the side service from side/Dockerfile and tags it with its image: name",
		"Harbor task: compose service side has `image: "+docker.DebianImage+"` (on the engine) and `build: ./side`, whose Dockerfile adds /srv/marker; test.sh fetches it from side")
}

// Round thirteen, the twelfth attacker's 8 (in part): a task's directory
// copied in kept its permissions but not its sticky or setgid bit (a
// 1777 scratch directory arrived 0777); Harbor's copy, the engine's,
// keeps them.
func TestHostileR13UploadKeepsStickyBit(t *testing.T) {
	preparedRow(t, "hostile-r13/sticky", map[string]string{
		"tests/scratch/.keep": "",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nm=$(stat -c %a /tests/scratch)\necho \"scratch is $m\"\n" +
			"if [ \"$m\" = 1777 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, func(dir string) {
		if err := os.Chmod(filepath.Join(dir, "tests", "scratch"), 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}, model.Passed, "", "the engine's copy (Harbor's upload) keeps a directory's sticky bit",
		"Harbor task: tests/scratch is mode 1777; test.sh passes if /tests/scratch is 1777")
}

// Round thirteen, the twelfth attacker's 8 (in part): HEADROOM_TRIAL (the
// container's) and HEADROOM_SEED (each step's) told a Harbor task it ran
// under headroom, where its harness sets neither: a task could tell it
// was measured. Only headroom's own tasks get them now.
func TestHostileR13NoHeadroomEnvInAHarborTask(t *testing.T) {
	bothRunnersRow(t, "hostile-r13/env", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nenv | grep '^HEADROOM_' > /tmp/agent-env || true\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nseen=\"$(cat /tmp/agent-env; env | grep '^HEADROOM_')\"\necho \"seen: $seen\"\n" +
			"if [ -z \"$seen\" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "Harbor sets no HEADROOM_ variable in a task's container",
		"Harbor task: solve.sh and test.sh look for HEADROOM_* variables in their environment; reward 1 if there are none")
}

// Round thirteen, the thirteenth attacker's 1: a container's owner label
// was host:pid:start, and a headroom in a pid namespace of its own
// (`unshare --pid`, or a container with the host's network and so its
// host name) is pid 1 there: `headroom clean`, and the start-up reap of
// the next run on the same experiments root, read pid 1 of this
// namespace, found its start time other than the label's, called the
// owner gone and removed the running trial's container. The label now
// names the boot and the pid namespace; an owner in another is never
// proven gone.
func TestHostileR13CleanLeavesARunInAnotherPidNamespace(t *testing.T) {
	needEngine(t)
	if os.Geteuid() != 0 {
		t.Skip("a pid namespace of its own (unshare --pid) needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare here")
	}
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r13/pidns"
	harborTask(t, tasks, "pidns", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\nsleep 20\necho done > /tmp/done\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\nif [ -f /tmp/done ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	l := startLive(t, "unshare", append([]string{"--pid", "--fork", "--mount-proc", bin}, oracleArgs(tasks, name, out)...)...)
	dir := l.waitLine(`^\s+writing to (\S+)$`, 10*time.Minute)[1]
	id := filepath.Base(dir)
	waitForCond(t, "the trial's container", 5*time.Minute, func() bool { return containersLeft(t, id) > 0 })
	clean := runBin(t, bin, nil, "clean", "--out", out)
	l.wait(3 * time.Minute)
	recs := trialLines(t, dir)
	lost, forged := 1-len(recs), 0
	said := "no record"
	for _, r := range recs {
		said = fmt.Sprintf("%s %v %v", r["outcome"], r["cause"], r["reason"])
		if r["outcome"] != "passed" {
			forged++
			t.Errorf("%s: want passed; clean said:\n%s%s", said, clean.stdout, clean.stderr)
		}
	}
	if strings.Contains(clean.stdout+clean.stderr, "removed container") {
		forged++
		t.Errorf("clean removed a running headroom's container:\n%s%s", clean.stdout, clean.stderr)
	}
	leaked := containersLeft(t, id)
	letoutRow(t, "a headroom run under `unshare --pid --fork --mount-proc` (pid 1 of its own namespace) mid-trial; `headroom clean --out` of its root from outside", said, lost, leaked, forged)
}

// Round thirteen, the thirteenth attacker's 3: a traced script kept its
// first and last 100 commands as steps, each shown up to 2,000 bytes, but
// a multi-step task has two scripts a step: 150 steps of 230-command
// scripts made a 37 MB record, over the 32 MiB a record may be, and the
// sweep stopped with every later trial cancelled (a resume did the same).
// Here 72 steps of two 230-command scripts (about 35 MB as it was): the
// trial keeps at most 2,000 traced commands as steps, the record is
// written, and the task beside it runs.
func TestHostileR13ManyStepsRecordFits(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r13/many-steps"
	const phases = 72
	loop := func(c string) string {
		return "#!/bin/bash\nP=$(printf '" + c + "%.0s' $(seq 1 1900))\nfor i in $(seq 1 230); do : \"$i$P\"; done\n"
	}
	toml := fmt.Sprintf("schema_version = \"1.3\"\nmulti_step_reward_strategy = \"final\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n", name)
	files := map[string]string{"instruction.md": ""}
	for i := 1; i <= phases; i++ {
		s := fmt.Sprintf("s%d", i)
		toml += fmt.Sprintf("[[steps]]\nname = %q\n", s)
		files["steps/"+s+"/instruction.md"] = "Go on.\n"
		files["steps/"+s+"/solution/solve.sh"] = loop("A")
		files["steps/"+s+"/tests/test.sh"] = loop("B") + "mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\n"
	}
	files["task.toml"] = toml
	harborTask(t, tasks, "many-steps", name, files)
	harborTask(t, tasks, "beside", "hostile-r13/beside", nil)
	t.Cleanup(func() { removeTaskImages(t, name); removeTaskImages(t, "hostile-r13/beside") })
	start := time.Now()
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name+",hostile-r13/beside", "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--concurrency", "1", "--out", out)
	dir, recs, left := records(t, out)
	lost, forged := 2-len(recs), 0
	var said []string
	for _, r := range recs {
		said = append(said, fmt.Sprintf("%s %s %v", r["task"], r["outcome"], r["record_cut"]))
		if r["outcome"] != "passed" {
			forged++
		}
	}
	size := int64(0)
	if st, err := os.Stat(filepath.Join(dir, "trials.jsonl")); err == nil {
		size = st.Size()
	}
	if run.code != 0 || lost > 0 || forged > 0 || size > 16<<20 {
		t.Errorf("exit %d, %d records (%s), trials.jsonl %d bytes; want both passed, written, well under 32 MiB\n%s", run.code, len(recs), strings.Join(said, "; "), size, run.stderr)
	}
	letoutRow(t, "Harbor multi-step task of 72 steps, each step's solve.sh and test.sh 230 traced commands of 1,900 bytes; a second task after it (--concurrency 1)",
		fmt.Sprintf("%s; trials.jsonl %s (%s)", strings.Join(said, "; "), model.FormatBytes(size), time.Since(start).Round(time.Second)), lost, left, forged)
}

// Round thirteen, the thirteenth attacker's 2: terminal-bench 1 parses
// its tests pane, where a colour's escape sequences are not drawn and a
// carriage return lets later text overwrite a line. headroom parsed the
// raw lines: a `--color=yes` FAILED line was no result ("every one of
// none passed"), and "PASSED x\rFAILED" a pass.
func TestHostileR13TerminalBench1ReadsItsPane(t *testing.T) {
	bothRunnersRow(t, "hostile-r13-tb1-pane", map[string]string{
		"task.yaml":   "instruction: Do the task.\nparser_name: pytest\nmax_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 120.0\n",
		"Dockerfile":  "FROM " + docker.DebianImage + "\n",
		"solution.sh": "#!/bin/bash\necho solved\n",
		"run-tests.sh": "#!/bin/bash\necho '=================== short test summary info ==================='\n" +
			"printf '\\033[32mPASSED\\033[0m tests/test_outputs.py::test_a\\n\\033[31mFAILED\\033[0m tests/test_outputs.py::test_b - assert 0\\n'\n" +
			"printf 'PASSED tests/test_outputs.py::test_c\\rFAILED\\n'\n",
	}, model.Failed, "2 of 3 tests failed", "terminal-bench's pane shows FAILED test_b (its colour not drawn) and FAILED test_c (drawn over PASSED)",
		"terminal-bench 1 task: run-tests.sh prints a coloured `PASSED test_a`, a coloured `FAILED test_b`, and `PASSED test_c\\rFAILED`")
}

// Round thirteen, the thirteenth attacker's 4: headroom mounts its step
// driver at /.headroom/hr-workload in a task image's container. An image
// with something there (/.headroom a file, or a directory at the
// driver's place) could not start: every trial an infra error, its
// reason naming headroom's host path, where Harbor runs the task. Such
// an image's steps now take the engine's exec.
func TestHostileR13ImageHoldsTheDriversPlace(t *testing.T) {
	for _, c := range []struct{ name, run string }{
		{"file", "RUN echo x > /.headroom"},
		{"dir", "RUN mkdir -p /.headroom/hr-workload/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			oracleVerdictRow(t, "hostile-r13/dotheadroom-"+c.name, map[string]string{
				"environment/Dockerfile": "FROM " + docker.DebianImage + "\n" + c.run + "\n",
			}, model.Passed, "", "Harbor runs the task; nothing of headroom's is in its image",
				"Harbor task whose Dockerfile has `"+c.run+"`")
		})
	}
}

// Round thirteen, the thirteenth attacker's 6: a compose service with no
// memory limit runs under headroom's default bound (1 GiB), where
// Harbor's compose bounds only the main service. One that needs more was
// killed there before it was healthy, recorded "sidecar db exited 137
// before it was healthy", and the audit called the task faithful. The
// audit now lists the bound, and the reason says the kernel killed the
// service at it, headroom's bound, not the task's limit.
func TestHostileR13SidecarKilledAtTheDefaultBound(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r13/side-bound"
	harborTask(t, tasks, "side-bound", name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = true\n", name),
		"environment/docker-compose.yaml": "services:\n  main:\n    build:\n      context: .\n    depends_on:\n      db:\n        condition: service_healthy\n  db:\n    image: " + docker.DebianImage + "\n" +
			"    command: [\"python3\", \"-c\", \"import time; b = bytearray(1300 << 20); open('/tmp/ready', 'w').close(); time.sleep(600)\"]\n" +
			"    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      interval: 1s\n      retries: 60\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	audit := runBin(t, bin, nil, "tasks", "audit", "--tasks-dir", tasks)
	row := runOracleRow(t, bin, tasks, name, "")
	forged := 0
	if row.outcome != "infra-error" || !strings.Contains(row.reason, "killed by the kernel at its memory bound, 1GiB, headroom's default") {
		forged++
		t.Errorf("%s %s %q: want infra-error naming headroom's default bound\n%s", row.outcome, row.cause, row.reason, row.run.stderr)
	}
	if !strings.Contains(audit.stdout+audit.stderr, "service db memory bounded at 1GiB") {
		forged++
		t.Errorf("the audit does not list the service's bound:\n%s%s", audit.stdout, audit.stderr)
	}
	letoutRow(t, "Harbor task whose compose service db (no mem_limit) holds 1.3 GB before it is healthy; main depends on it healthy; `tasks audit` and the oracle at 1x",
		fmt.Sprintf("%s · %s %q", row.outcome, orNone(row.cause), row.reason), 1-len(row.recs), row.left, forged)
}

// Round thirteen, the thirteenth attacker's 5: a terminal-bench 1 task
// whose reference solution is solution.yaml (commands the harness types
// into its pane, each with its Enter) had no oracle in headroom, and in a
// sweep its trial was an infra error left out of the oracle's score,
// where terminal-bench resolves it.
func TestHostileR13TerminalBench1SolutionYAML(t *testing.T) {
	bothRunnersRow(t, "hostile-r13-tb1-yaml", map[string]string{
		"task.yaml":     "instruction: Write hello.\nparser_name: pytest\nmax_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 120.0\n",
		"Dockerfile":    "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
		"solution.yaml": "- command: \"cd /tmp && echo 'Hello, world!' > hello.txt\"\n  min_timeout_sec: 0.1\n  block: true\n  append_enter: true\n- command: \"cp hello.txt /app/hello.txt\"\n  block: false\n  append_enter: true\n",
		"run-tests.sh": "#!/bin/bash\necho '=================== short test summary info ==================='\n" +
			"if [ \"$(cat /app/hello.txt 2>/dev/null)\" = 'Hello, world!' ]; then echo 'PASSED tests/test_outputs.py::test_hello'; else echo 'FAILED tests/test_outputs.py::test_hello - no hello'; fi\n",
	}, model.Passed, "", "terminal-bench's oracle types solution.yaml's commands into one shell (the second runs where the first cd'd)",
		"terminal-bench 1 task with solution.yaml (two commands, each with its Enter; the second relies on the first's cd) and no solution.sh")
}

// Round thirteen, the twelfth attacker's 8 (in part): a task directory
// without solution/solve.sh has only its check agent, nop, which a sweep
// that named no agent ran: its failures read as the task's score. Such a
// sweep is refused now, naming the task and how to name an agent.
func TestHostileR13NoSolverIsRefused(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r13/no-solver"
	dir := harborTask(t, tasks, "no-solver", name, nil)
	if err := os.RemoveAll(filepath.Join(dir, "solution")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "1x", "--repeats", "1", "--out", out)
	forged := 0
	if run.code == 0 || !strings.Contains(run.stderr, "has no agent that solves it") || !strings.Contains(run.stderr, "--agents nop") {
		forged++
		t.Errorf("exit %d: want a refusal naming the task and --agents nop\n%s%s", run.code, run.stdout, run.stderr)
	}
	recs := 0
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		_, r, _ := records(t, out)
		recs = len(r)
	}
	if recs > 0 {
		forged++
		t.Errorf("%d records written for a refused sweep", recs)
	}
	letoutRow(t, "Harbor task directory without solution/ (only nop), `run` naming no agent", fmt.Sprintf("exit %d: %s", run.code, firstLineOf(run.stderr)), 0, 0, forged)
}

// firstLineOf is s's first non-empty line.
func firstLineOf(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// Round thirteen, the fourteenth attacker's 1: headroom started every
// traced step through `sh -c`; an agent that removed /bin/sh (or made it
// /bin/true) left the verifier unable to start (127), or running nothing,
// where Harbor's `bash …` runs it.
func TestHostileR13AgentRemovesSh(t *testing.T) {
	bothRunnersRow(t, "hostile-r13/no-sh", map[string]string{
		"solution/solve.sh":      "#!/bin/bash\necho ok > /app/answer\nrm -f /bin/sh /usr/bin/sh\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nif [ -f /app/answer ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
	}, model.Passed, "", "Harbor runs the verifier as bash, never sh",
		"Harbor task: solve.sh writes its answer and removes /bin/sh; test.sh checks the answer")
}

// Round thirteen, the fourteenth attacker's 5: the trace's setup was read
// from /dev/stdin, and -x turned the trace on: an agent that removed
// /dev/stdin left bash tracing with its own "+ " on the verifier's
// stderr, which a terminal-bench parser read (a swebench verdict read
// "+ echo PASSED" where the word should be).
func TestHostileR13AgentRemovesDevStdin(t *testing.T) {
	bothRunnersRow(t, "hostile-r13-tb1-stdin", map[string]string{
		"task.yaml":   "instruction: Write hello.\nparser_name: swebench\nmax_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 120.0\n",
		"Dockerfile":  "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
		"solution.sh": "#!/bin/bash\necho 'Hello, world!' > /app/hello.txt\nrm -f /dev/stdin\n",
		"run-tests.sh": "#!/bin/bash\nif grep -qx 'Hello, world!' /app/hello.txt; then r=PASSED; else r=FAILED; fi\n" +
			"echo 'SWEBench results starts here'\necho \"$r\"\necho 'SWEBench results ends here'\n",
	}, model.Passed, "", "terminal-bench traces nothing: its parser reads PASSED between the markers",
		"terminal-bench 1 task (swebench parser): solution.sh writes the answer and removes /dev/stdin")
}

// Round thirteen, the fourteenth attacker's 2: a trial's CPU wait is
// judged against its steps' time, which summed only the commands kept as
// steps with their own readings: a traced loop's 8 s were 0.1 s of "step
// time", and a 0.05 s wait in it made the task's own timeout a contended
// host's (a "failure the limit does not explain", a rescue in the
// report). The commands past a script's head now count as one span.
func TestHostileR13LoopTimeoutIsTheTasks(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r13/loop"
	harborTask(t, tasks, "loop", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 30.0\n[agent]\ntimeout_sec = 8.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n", name),
		"solution/solve.sh": "#!/bin/bash\nwhile true; do /bin/true | /bin/true | /bin/true; done\n",
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "2", "--concurrency", "1", "--out", out)
	_, recs, left := records(t, out)
	forged := 0
	var said []string
	for _, r := range recs {
		noise, _ := r["noise"].(map[string]any)
		contended, _ := noise["contended"].(bool)
		load, _ := noise["peak_load1"].(float64)
		stepTime, _ := time.ParseDuration(fmt.Sprint(noise["step_time"]))
		said = append(said, fmt.Sprintf("%s %v, step_time %v, cpu_wait %v, contended %v (peak load %.1f)", r["outcome"], r["cause"], noise["step_time"], noise["cpu_wait"], contended, load))
		// The loop's 8 s are its step time; contended only where the
		// host was loaded past its CPUs (a CI machine building beside).
		if r["cause"] != "agent-timeout" || stepTime < 5*time.Second || (contended && load <= float64(runtime.NumCPU())) {
			forged++
		}
	}
	if forged > 0 || len(recs) != 2 {
		t.Errorf("%s; want agent-timeout, not contended, both\n%s", strings.Join(said, "; "), run.stderr)
	}
	letoutRow(t, "Harbor task (agent timeout 8 s): solve.sh loops `/bin/true | /bin/true | /bin/true` forever; 2 repeats, uncapped, --concurrency 1",
		strings.Join(said, "; "), 2-len(recs), left, forged)
}

// Round thirteen, the fourteenth attacker's 3: Harbor mounts
// /logs/verifier from the container's start; headroom made it only for
// the verifier, and an agent that listed it, or left its notes there,
// failed where Harbor's passed.
func TestHostileR13VerifierDirFromTheStart(t *testing.T) {
	bothRunnersRow(t, "hostile-r13/verifier-dir", map[string]string{
		"solution/solve.sh":      "#!/bin/bash\nset -e\nls -ld /logs/verifier\necho notes > /logs/verifier/agent-notes.txt\necho ok > /app/answer\n",
		"tests/test.sh":          "#!/bin/bash\nif [ -f /app/answer ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nWORKDIR /app\n",
	}, model.Passed, "", "Harbor's /logs/verifier is there from the container's start",
		"Harbor task: solve.sh (set -e) lists /logs/verifier and writes its notes there, then its answer; test.sh checks the answer")
}
