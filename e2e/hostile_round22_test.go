//go:build hostile

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round twenty-two, the twenty-eighth attacker's 1–3 (medium): compose
// networks that keep two services apart (here every service is on one
// network: main reached the sidecar it should not, and the task's check
// failed), a restart policy (a sidecar compose restarts stayed down) and
// tty/stdin_open (a shell kept alive by a terminal exited) each changed
// the score, and `tasks audit` called the task faithful (3 of 3 each).
// Each is listed now.
func TestHostileR22AuditOfComposeNetworksRestartAndTTY(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	name := "hostile-r22/compose-apart"
	tasks := filepath.Join(t.TempDir(), "tasks")
	harborTask(t, tasks, "compose-apart", name, map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    networks: [front]\n  side:\n    image: side:1\n    networks: [back]\n    restart: always\n    tty: true\n    stdin_open: true\nnetworks:\n  front: {}\n  back: {}\n",
	})
	audit := runBin(t, bin, nil, "tasks", "audit", tasks)
	forged := 0
	for _, want := range []string{"compose networks not kept apart", "service side restart: always not honoured", "service side tty not honoured", "service side stdin_open not honoured"} {
		if !strings.Contains(audit.stdout, want) {
			forged++
			t.Errorf("audit lacks %q: exit %d\n%s%s", want, audit.code, audit.stdout, audit.stderr)
		}
	}
	if strings.Contains(audit.stdout, "1 faithful") {
		forged++
	}
	letoutRow(t, "Harbor task whose compose file puts main on network front and side on back, side `restart: always`, `tty: true`, `stdin_open: true`: `tasks audit`",
		fmt.Sprintf("audit exit %d, all four listed (%s)", audit.code, time.Since(start).Round(time.Second)), 0, 0, forged)
}

// The twenty-eighth attacker's 4 (low-medium) and 7 (low): a
// terminal-bench task whose compose file took GREETING from the .env
// beside it (compose reads its project's .env, and terminal-bench's
// project directory is the task's) ran with it empty: failed, the task's
// own, and the audit blamed the harness's environment (2 of 2). And the
// manifest's command reproducing a trial left out the steps' environment
// and working directory.
func TestHostileR22TerminalBenchDotEnv(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	tasks := filepath.Join(t.TempDir(), "tasks")
	dir := filepath.Join(tasks, "hostile-r22-dotenv")
	if err := os.CopyFS(dir, os.DirFS("../examples/tasks/hello-old")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"docker-compose.yaml": "services:\n  client:\n    build:\n      dockerfile: Dockerfile\n    command: [\"sh\", \"-c\", \"sleep infinity\"]\n    environment:\n      - GREETING=${GREETING_FROM_DOTENV}\n",
		".env":                "GREETING_FROM_DOTENV=Hello, world!\n",
		"solution.sh":         "#!/bin/bash\necho \"$GREETING\" > /app/hello.txt\n",
		"Dockerfile":          "FROM headroom-debian:bookworm\nWORKDIR /app\nLABEL headroom.test.row=hostile-r22-dotenv\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r22-dotenv") })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", "hostile-r22-dotenv", "--ratios", "1x", "--repeats", "1", "--out", out)
	exp, recs, leaked := records(t, out)
	forged := 0
	outcome := ""
	if len(recs) == 1 {
		outcome = fmt.Sprint(recs[0]["outcome"])
	}
	if run.code != 0 || outcome != "passed" {
		forged++
		t.Errorf("run: exit %d, %q, want passed with GREETING from the .env\n%s", run.code, outcome, run.stderr)
	}
	var m struct {
		Tasks []struct {
			Reproduce map[string]string `json:"reproduce"`
		} `json:"tasks"`
	}
	data, _ := os.ReadFile(filepath.Join(exp, "manifest.json"))
	_ = json.Unmarshal(data, &m)
	repro := ""
	if len(m.Tasks) == 1 {
		repro = m.Tasks[0].Reproduce["1x"]
	}
	if !strings.Contains(repro, "--env 'GREETING=Hello, world!'") {
		forged++
		t.Errorf("the manifest's reproduce lacks the steps' environment: %q", repro)
	}
	letoutRow(t, "terminal-bench task whose `docker-compose.yaml` sets `GREETING=${GREETING_FROM_DOTENV}` from the `.env` beside it, its solution writing $GREETING",
		fmt.Sprintf("run exit %d: %s; reproduce sets GREETING (%s)", run.code, outcome, time.Since(start).Round(time.Second)), 0, leaked, forged)
}

// The twenty-eighth attacker's 5 (medium-low): under --latency every
// egress packet of the task passes through the network helper in user
// space, which had no CPU bound: a task at cpus = 2 flooding its egress
// used another core there, outside its limit and said nowhere (3 of 3).
// Bounded at the task's limit (at least half a core), and recorded.
func TestHostileR22NetworkHelperCPU(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	writeFiles(t, tasks, map[string]string{"flood.toml": `[task]
name = "hostile-r22/helper-cpu"
[environment]
image = "builtin"
cpus = 0.1
memory = "128M"
[verifier]
command = ["/hr-workload", "rtt", "--n", "1", "peer:7007"]
[[services]]
name = "peer"
image = "builtin"
[[agents]]
name = "probe"
  [[agents.steps]]
  name = "flood"
  command = ["/hr-workload", "flood", "--for", "3s", "peer:9"]
`})
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--ratios", "1x", "--latency", "1ms", "--repeats", "1", "--out", out)
	_, recs, leaked := records(t, out)
	forged := 0
	applied := ""
	if len(recs) == 1 {
		if k, _ := recs[0]["knobs"].(map[string]any); k != nil {
			applied = fmt.Sprint(k["applied"])
		}
	}
	if run.code != 0 || !strings.Contains(applied, "network helper CPU: ") || !strings.Contains(applied, "(bounded at 0.5 cores)") {
		forged++
		t.Errorf("run: exit %d; applied %s; want the helper's CPU and its bound\n%s", run.code, applied, run.stderr)
	}
	letoutRow(t, "task at `cpus = 0.1` flooding its egress for 3 s under `--latency 1ms`",
		fmt.Sprintf("run exit %d: the helper's CPU recorded, bounded at 0.5 cores (%s)", run.code, time.Since(start).Round(time.Second)), 0, leaked, forged)
}

// The twenty-eighth attacker's 6 and 8 (low): `tasks validate` said ok
// to a task named builtin/swe-edit, which `run` refused ("already defined
// … rename one"); `report --out FILE` said "open FILE: not a directory",
// naming no flag.
func TestHostileR22ValidateABuiltinsNameAndReportOutAFile(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	writeFiles(t, tasks, map[string]string{"taken.toml": "[task]\nname = \"builtin/swe-edit\"\n[environment]\nimage = \"builtin\"\n[verifier]\nworkload = { duration_ms = 10, style = \"edit\" }\n[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  name = \"s\"\n  workload = { duration_ms = 10 }\n"})
	val := runBin(t, bin, nil, "tasks", "validate", tasks)
	file := filepath.Join(tasks, "taken.toml")
	rep := runBin(t, bin, nil, "report", "--out", file)
	forged := 0
	if val.code != 2 || !strings.Contains(val.stdout, "task builtin/swe-edit is already defined in builtin:swe-edit.toml; rename one") {
		forged++
		t.Errorf("validate: exit %d\n%s", val.code, val.stdout)
	}
	if rep.code != 2 || !strings.Contains(rep.stderr, "--out "+file+" is not a directory of experiments") {
		forged++
		t.Errorf("report: exit %d\n%s", rep.code, rep.stderr)
	}
	letoutRow(t, "a task file naming itself builtin/swe-edit: `tasks validate`; `report --out` a regular file",
		fmt.Sprintf("validate exit %d, refused as run refuses it; report exit %d naming --out (%s)", val.code, rep.code, time.Since(start).Round(time.Second)), 0, 0, forged)
}
