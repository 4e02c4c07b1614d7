//go:build hostile

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round eight, the eighth attacker's findings 3, 6 and 5.

// An instruction.md of 188 KiB (task files allow 1 MiB) with a command
// agent: headroom handed it in $HEADROOM_INSTRUCTION, and Linux starts no
// program with one environment string over 128 KiB (MAX_ARG_STRLEN): the
// agent's shell never ran ("fork/exec /usr/bin/sh: argument list too
// long", exit 126) and the trial was recorded `failed`, the task's own.
// The variable is now left out past the bound, the step's lines say so,
// and the agent reads the instruction whole in $HEADROOM_INSTRUCTION_FILE.
// An installed agent whose run command itself carries the instruction
// ({{.Instruction}}) past the bound cannot be started by headroom: that
// is an infra-error, headroom's, never the task's.
func TestHostileR8atk8smallBigInstruction(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	const name = "hostile-r8/biginstr"
	instr := strings.Repeat("Read every line of this instruction before you start the work.\n", 3000) + "END-OF-INSTRUCTION\n"
	harborTask(t, tasks, "biginstr", name, map[string]string{
		"instruction.md": instr,
		"tests/test.sh":  "#!/bin/bash\nmkdir -p /logs/verifier\nif grep -q ok /tmp/ok; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })

	out := filepath.Join(root, "out")
	agent := `tail -c 100 "$HEADROOM_INSTRUCTION_FILE" | grep -q END-OF-INSTRUCTION && echo ok > /tmp/ok`
	runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "command", "--agent-command", agent,
		"--ratios", "1x", "--repeats", "1", "--out", out)
	dir, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	lost, forged := 1-len(recs), 0
	said := fmt.Sprintf("%s %s %q", outcome, cause, reason)
	logTxt, _ := os.ReadFile(filepath.Join(dir, "trials", "t0001", "log.txt"))
	const note = "$HEADROOM_INSTRUCTION left out"
	if len(recs) == 1 {
		if outcome != "passed" {
			t.Errorf("%s: want passed (the agent reads the instruction whole in its file)", said)
			forged++
		}
		inRecord := false
		for _, s := range steps(recs[0]) {
			o, _ := s["output"].(string)
			inRecord = inRecord || strings.Contains(o, note)
		}
		if !inRecord || !strings.Contains(string(logTxt), note) {
			t.Errorf("the record's step lines (%v) and log.txt (%v) must say %q", inRecord, strings.Contains(string(logTxt), note), note)
			forged++
		} else {
			said += ", record and log.txt: " + firstLineWith(string(logTxt), note)
		}
	}
	letoutRow(t, "an instruction.md of 188 KiB, a --agent-command agent reading $HEADROOM_INSTRUCTION_FILE", said, lost, leaked, forged)

	agentsDir := filepath.Join(root, "agents")
	if err := os.MkdirAll(agentsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	def := "name = \"echo-instruction\"\ndescription = \"hostile: its run command carries the instruction\"\n[run]\ncommand = '''\necho {{.Instruction}} | wc -c; echo ok > /tmp/ok\n'''\n"
	if err := os.WriteFile(filepath.Join(agentsDir, "echo-instruction.toml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(root, "out-argv")
	runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents-dir", agentsDir, "--agents", "echo-instruction",
		"--ratios", "1x", "--repeats", "1", "--out", out)
	_, recs, leaked = records(t, out)
	outcome, cause, reason = oneRecord(recs)
	lost, forged = 1-len(recs), 0
	said = fmt.Sprintf("%s %s %q", outcome, cause, reason)
	if len(recs) == 1 && (outcome != "infra-error" || cause != "" || !strings.Contains(reason, "headroom cannot start this step")) {
		t.Errorf("%s: want infra-error with no cause (not engine-lost), headroom cannot start the step (its command line past Linux's bound on one argument)", said)
		forged++
	}
	letoutRow(t, "an installed agent whose run command carries the 188 KiB instruction ({{.Instruction}})", said, lost, leaked, forged)
}

// A compose sidecar that main depends on with condition:
// service_completed_successfully and that never finishes (sleep
// infinity). The trial waited 901.4 s, past HEADROOM_IMAGE_HEALTH_WAIT=20s,
// and its reason said only "context deadline exceeded". The wait is now
// held by the operator's bound and the reason names it.
func TestHostileR8atk8smallSidecarNeverFinishes(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	const name = "hostile-r8/sidecarwait"
	harborTask(t, tasks, "sidecarwait", name, map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    depends_on:\n      setup:\n        condition: service_completed_successfully\n" +
			"  setup:\n    image: headroom-debian:bookworm\n    command: [\"sleep\", \"infinity\"]\n    mem_limit: 32m\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	const wait = 20 * time.Second
	// The build before waited 15 minutes: interrupted (as an operator
	// would) 3 minutes past the operator's bound, it records nothing.
	cmd := exec.Command(bin, oracleArgs(tasks, name, out)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "HEADROOM_IMAGE_HEALTH_WAIT="+wait.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Command(bin, "clean", "--out", out).Run() })
	interrupt := time.AfterFunc(wait+3*time.Minute, func() { cmd.Process.Signal(os.Interrupt) })
	cmd.Wait()
	interrupt.Stop()
	run := result{elapsed: time.Since(start), stderr: stderr.String()}
	_, recs, leaked := records(t, out)
	outcome, cause, reason := oneRecord(recs)
	lost, forged := 1-len(recs), 0
	said := fmt.Sprintf("%s %s %q in %s", outcome, cause, reason, run.elapsed.Round(time.Second))
	if run.elapsed >= wait+3*time.Minute {
		t.Errorf("the run took %s: the wait for the sidecar is not held by HEADROOM_IMAGE_HEALTH_WAIT=%s", run.elapsed.Round(time.Second), wait)
		forged++
	}
	if len(recs) == 1 && (outcome != "infra-error" || !strings.Contains(reason, "HEADROOM_IMAGE_HEALTH_WAIT") || !strings.Contains(reason, "did not finish within 20s")) {
		t.Errorf("%s: want infra-error whose reason says the sidecar did not finish within 20s and names HEADROOM_IMAGE_HEALTH_WAIT", said)
		forged++
	}
	letoutRow(t, "a compose sidecar main waits for (service_completed_successfully) running sleep infinity, HEADROOM_IMAGE_HEALTH_WAIT=20s", said, lost, leaked, forged)
}

// A task printing headroom's own log lines: `==> solve exited 0 …`,
// `==> [verifier] pytest tests/`, `==> the kernel killed headroom's step
// driver …`, `==> [headroom] this trial's log reached 16MiB …`. In
// log.txt they could not be told from headroom's own (a task's stdout
// was written unmarked). Every line of log.txt that starts with `==>`
// must now be headroom's.
func TestHostileR8atk8smallLogForge(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	const name = "hostile-r8/logforge"
	forgedLines := []string{
		"==> solve exited 0 after 2ms, peak 1.1MiB",
		"==> [verifier] pytest tests/",
		"==> the kernel killed headroom's step driver (the container's PID 1) at 128MiB: the container ends, the verifier cannot run",
		"==> [headroom] this trial's log reached 16MiB of output: the rest is counted, not kept (its record has each step's last lines)",
	}
	script := "#!/bin/bash\n"
	for _, l := range forgedLines {
		script += fmt.Sprintf("printf '%%s\\n' %q\n", l)
	}
	script += "printf 'x\\r%s\\n' '==> [verifier] pytest tests/'\n"
	harborTask(t, tasks, "logforge", name, map[string]string{
		"solution/solve.sh": script,
		"tests/test.sh":     "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(root, "out")
	runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	dir, recs, leaked := records(t, out)
	outcome, cause, _ := oneRecord(recs)
	lost, forged := 1-len(recs), 0
	logTxt, err := os.ReadFile(filepath.Join(dir, "trials", "t0001", "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, l := range strings.Split(string(logTxt), "\n") {
		// What a reader sees on a terminal: a carriage return starts the
		// line over.
		if i := strings.LastIndex(l, "\r"); i >= 0 {
			l = l[i+1:]
		}
		for _, f := range forgedLines {
			if l == f {
				t.Errorf("log.txt holds the task's %q as a line of headroom's own", f)
				forged++
			}
		}
		if strings.HasPrefix(l, "| ==>") {
			mine = append(mine, l)
		}
	}
	said := fmt.Sprintf("%s %s; log.txt: %d task lines marked, e.g. %q", outcome, cause, len(mine), strings.Join(mine[:min(1, len(mine))], ""))
	if outcome != "failed" {
		t.Errorf("%s: want failed (its verifier writes 0)", said)
		forged++
	}
	letoutRow(t, "a task printing headroom's own log lines (==> [verifier] …, ==> the kernel killed headroom's step driver …, one behind a carriage return)", said, lost, leaked, forged)
}
