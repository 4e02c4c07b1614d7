//go:build hostile

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round twenty-one, the twenty-fifth attacker's 1 (medium): `import
// harbor` took any "OOMKilled" or "exit 137" in Harbor's exception message
// for a kill, and the message holds the agent's command line, whose
// instruction is the task's words: an agent that exited 1 on a task about
// an OOMKilled pod was imported oom-killed (2 of 2). Harbor's code, the
// first the message gives, is the exit.
func TestHostileR21ImportOfAnInstructionAboutOOMKills(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	job := filepath.Join(t.TempDir(), "job")
	if out, err := exec.Command("cp", "-r", "../importer/testdata/harbor/older-release", job).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	file := filepath.Join(job, "compile-compcert__p4q5r6s", "result.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	said := `Command failed (exit 1): claude --verbose --print -- 'Our worker pod is OOMKilled under load: it exited 137. Find the leak and fix it.'`
	edited := strings.Replace(string(data), `"exception_message": "Command failed (exit 137): pip install pandas networkx scikit-learn"`, `"exception_message": `+fmt.Sprintf("%q", said), 1)
	if edited == string(data) {
		t.Fatal("the fixture's exception message is not where the row looks")
	}
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	res := runBin(t, bin, nil, "import", "harbor", job, "--out", out)
	_, recs, leaked := records(t, out)
	outcome, forged := "", 0
	for _, r := range recs {
		if imp, _ := r["imported"].(map[string]any); imp != nil && strings.HasPrefix(fmt.Sprint(imp["trial"]), "compile-compcert__p4q5r6s") {
			outcome = fmt.Sprint(r["outcome"])
		}
	}
	if res.code != 0 || outcome != "failed" {
		forged++
		t.Errorf("import: exit %d, the trial %q, want failed\n%s", res.code, outcome, res.stderr)
	}
	letoutRow(t, "a Harbor job whose trial's `exception_message` is \""+said+"\", reward 0",
		fmt.Sprintf("import exit %d: the trial %s (%s)", res.code, outcome, time.Since(start).Round(time.Second)), 0, leaked, forged)
}

// The twenty-fifth attacker's 4 (low): an environment variable with no
// name ("" = "y" under [verifier.env]) passed `tasks validate`, and every
// trial of the task was an infra error, the engine refusing the container
// ("invalid environment variable: =y"), exit 0 (2 of 2). Refused at load,
// at its line, by validate and by run, before any container.
func TestHostileR21EnvironmentVariableWithNoName(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	name := "hostile-r21/env-no-name"
	tasks := filepath.Join(t.TempDir(), "tasks")
	harborTask(t, tasks, "env-no-name", name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 60.0\n[verifier.env]\n\"\" = \"y\"\n[agent]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name),
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	val := runBin(t, bin, nil, "tasks", "validate", tasks)
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "1x", "--repeats", "1", "--out", out)
	entries, _ := os.ReadDir(out)
	forged := 0
	if val.code != 2 || !strings.Contains(val.stdout, "task.toml:7: step \"verify\"'s environment sets a variable with no name") {
		forged++
		t.Errorf("validate: exit %d\n%s", val.code, val.stdout)
	}
	if run.code != 2 || len(entries) != 0 {
		forged++
		t.Errorf("run: exit %d, %d experiments\n%s", run.code, len(entries), run.stderr)
	}
	letoutRow(t, "Harbor task with `[verifier.env] \"\" = \"y\"`: `tasks validate`, then `run`",
		fmt.Sprintf("validate exit %d at task.toml:7, run exit %d before any container (%s)", val.code, run.code, time.Since(start).Round(time.Second)), 0, 0, forged)
}

// The twenty-fifth attacker's 6 (low): a compose file's volume `name:`
// (compose mounts that one volume in every trial) and `deploy.replicas:
// 12` (one container ran) were ignored, and `tasks audit` called the task
// faithful (1 of 1 each).
func TestHostileR21AuditOfAVolumeNameAndReplicas(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	name := "hostile-r21/compose-name-replicas"
	tasks := filepath.Join(t.TempDir(), "tasks")
	harborTask(t, tasks, "compose-name-replicas", name, map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    build:\n      context: .\n    volumes: [\"data:/data\"]\n  side:\n    image: side:1\n    deploy:\n      replicas: 12\nvolumes:\n  data:\n    name: shared-decoy\n",
	})
	audit := runBin(t, bin, nil, "tasks", "audit", tasks)
	forged := 0
	for _, want := range []string{"compose volume data settings not used", "service side deploy.replicas not honoured"} {
		if !strings.Contains(audit.stdout, want) {
			forged++
			t.Errorf("audit lacks %q: exit %d\n%s%s", want, audit.code, audit.stdout, audit.stderr)
		}
	}
	letoutRow(t, "Harbor task whose compose file gives volume data `name: shared-decoy` and service side `deploy: {replicas: 12}`: `tasks audit`",
		fmt.Sprintf("audit exit %d, both listed (%s)", audit.code, time.Since(start).Round(time.Second)), 0, 0, forged)
}

// The twenty-fifth attacker's 3 (medium-low): `calibrate --write` wrote
// a limit measured on a task into that task's file after its solution and
// Dockerfile had changed, where `run --resume` of the same experiment
// refused ("tasks changed") (2 of 2). Not written now, the file as it was.
func TestHostileR21CalibrateWriteAfterTheTaskChanged(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	name := "hostile-r21/calibrate-changed"
	tasks := filepath.Join(t.TempDir(), "tasks")
	dir := harborTask(t, tasks, "calibrate-changed", name, nil)
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "1x,uncapped", "--repeats", "1", "--out", out)
	exp, recs, leaked := records(t, out)
	if run.code != 0 || len(recs) != 2 {
		t.Fatalf("run: exit %d, %d records\n%s", run.code, len(recs), run.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "solution", "solve.sh"), []byte("#!/bin/bash\npython3 -c 'bytearray(90<<20)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "task.toml")
	before, _ := os.ReadFile(file)
	cal := runBin(t, bin, nil, "calibrate", filepath.Base(exp), "--out", out, "--write", "--target", "5%")
	after, _ := os.ReadFile(file)
	forged := 0
	if string(after) != string(before) || cal.code != 1 || !strings.Contains(cal.stderr, "the task changed since experiment") {
		forged++
		t.Errorf("calibrate --write: exit %d, file changed %v\n%s%s", cal.code, string(after) != string(before), cal.stdout, cal.stderr)
	}
	letoutRow(t, "Harbor task run at 1x and uncapped, then its solve.sh changed, then `calibrate --write`",
		fmt.Sprintf("calibrate exit %d, task.toml as it was (%s)", cal.code, time.Since(start).Round(time.Second)), 0, leaked, forged)
}

// The twenty-sixth attacker's 1 and 2 (medium): `compare` said "Setups
// match" of two runs of one task that differ only in `--pass-reward 0.5`
// (0/2 → 2/2 read as a change in score), and named only the seed for two
// runs whose verifier had changed on the same image (3/3 → 0/3 "real").
func TestHostileR21CompareSeesGradingAndTheTask(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	name := "hostile-r21/compare-half"
	tasks := filepath.Join(t.TempDir(), "tasks")
	dir := harborTask(t, tasks, "compare-half", name, map[string]string{
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0.5 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	// Each run its own --out: experiments made in one second do not
	// sort by when they ran.
	var dirs []string
	leaked := 0
	run := func(extra ...string) {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "1x", "--repeats", "1", "--seed", "5", "--out", out}, extra...)
		if r := runBin(t, bin, nil, args...); r.code != 0 {
			t.Fatalf("run %v: exit %d\n%s", extra, r.code, r.stderr)
		}
		d, left := onlyExperiment(t, out)
		dirs, leaked = append(dirs, d), leaked+left
	}
	run()
	run("--pass-reward", "0.5")
	// A third run with the verifier changed, for the second compare.
	if err := os.WriteFile(filepath.Join(dir, "tests", "test.sh"), []byte("#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run()
	grading := runBin(t, bin, nil, "compare", dirs[0], dirs[1])
	changed := runBin(t, bin, nil, "compare", dirs[0], dirs[2])
	forged := 0
	if !strings.Contains(grading.stdout, "pass reward") || strings.Contains(grading.stdout, "Setups match") {
		forged++
		t.Errorf("compare of --pass-reward 0.5: exit %d\n%s%s", grading.code, grading.stdout, grading.stderr)
	}
	if !strings.Contains(changed.stdout, "task changed     "+name+": verifier changed") {
		forged++
		t.Errorf("compare of a changed verifier: exit %d\n%s%s", changed.code, changed.stdout, changed.stderr)
	}
	letoutRow(t, "one Harbor task (reward 0.5) run three times: as is, with `--pass-reward 0.5`, then with its test.sh changed; `compare` of the first with each",
		fmt.Sprintf("the pass reward and the changed verifier named among the setup differences (%s)", time.Since(start).Round(time.Second)), 0, leaked, forged)
}

// The twenty-seventh attacker's 1 (medium): a step's files under the 8
// MiB the step driver takes (a 6 MiB solution/weights.bin) with a 50 ms
// agent limit: the copy's write was cut off at the deadline, the
// driver's command stream torn, and every later operation failed: the
// agent's timeout recorded as "the engine went away" (3 of 3); with the
// verifier's 50 ms limit, the task's own failure ("the task's own
// processes interfered with headroom's step driver", 2 of 2). The copy
// counts in the step's time, as Harbor's uploads do: its timeout.
func TestHostileR21SmallCopyPastTheStepsDeadline(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	var said []string
	forged, leaked := 0, 0
	for _, c := range []struct{ dir, agent, verifier, file, cause string }{
		{"agent", "0.05", "20.0", "solution/weights.bin", "agent-timeout"},
		{"verifier", "20.0", "0.05", "tests/data.bin", "verifier-timeout"},
	} {
		name := "hostile-r21/small-copy-" + c.dir
		tasks := filepath.Join(t.TempDir(), "tasks")
		d := harborTask(t, tasks, c.dir, name, map[string]string{
			"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[agent]\ntimeout_sec = %s\n[verifier]\ntimeout_sec = %s\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name, c.agent, c.verifier),
			// The agent's work is what the verifier grades: its command
			// never ran, so the trial fails, and the cause is its time.
			"solution/solve.sh": "#!/bin/bash\ntouch /tmp/solved\n",
			"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\nif [ -f /tmp/solved ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
		})
		if out, err := exec.Command("sh", "-c", "head -c 6M /dev/urandom > "+filepath.Join(d, c.file)).CombinedOutput(); err != nil {
			t.Fatalf("the file: %v %s", err, out)
		}
		t.Cleanup(func() { removeTaskImages(t, name) })
		out := filepath.Join(t.TempDir(), "out")
		runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
		_, recs, left := records(t, out)
		leaked += left
		for _, r := range recs {
			reason, _ := r["reason"].(string)
			said = append(said, fmt.Sprintf("%s: %s %v", c.dir, r["outcome"], r["cause"]))
			if r["outcome"] != "timeout" || r["cause"] != c.cause {
				forged++
				t.Errorf("%s: %s %v %q; want timeout %s", c.dir, r["outcome"], r["cause"], reason, c.cause)
			}
		}
	}
	letoutRow(t, "a 6 MiB file in solution/ with a 50 ms agent limit, and in tests/ with a 50 ms verifier limit",
		fmt.Sprintf("%s (%s)", strings.Join(said, "; "), time.Since(start).Round(time.Second)), 0, leaked, forged)
}
