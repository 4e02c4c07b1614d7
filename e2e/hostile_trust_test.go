//go:build hostile

package e2e

// The hostile-input suite's "trust" rows (issue #24, items F5, F8, F10):
// what a task file may grant itself, what a resume may run, and what a
// kept container may block. Each injects for real — the real binary,
// the real engine, a real open_by_handle_at out of the container, a real
// SIGKILL and an edited task file — and reports what headroom recorded
// and what was lost, leaked or forged, each of which must be 0.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/store"
)

// shockerProbe is a headroom task (hardened profile, the real-task
// Debian image) whose one step reads a host file through
// open_by_handle_at: with DAC_READ_SEARCH, a handle to the root inode of
// the file system a bind mount (/etc/hostname) comes from opens the
// host's root directory, and any file under it opens from there.
const shockerProbe = `[task]
name = "hostile-trust/dac-read-search"
[environment]
image = %q
memory = "64M"
capabilities = ["DAC_READ_SEARCH"]
[verifier]
command = ["sh", "-c", "true"]
[[agents]]
name = "oracle"
  [[agents.steps]]
  name = "probe"
  command = ["python3", "-c", '''
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
m = os.open("/etc/hostname", os.O_RDONLY)
h = ctypes.create_string_buffer(struct.pack("IiII", 8, 1, 2, 0))
root = libc.open_by_handle_at(m, h, os.O_RDONLY)
if root < 0:
    print("open_by_handle_at refused: errno", ctypes.get_errno())
    sys.exit(0)
f = os.open(sys.argv[1], os.O_RDONLY, dir_fd=root)
print("read from the host:", os.read(f, 200).decode().strip())
''', %q]
`

// F5: a task file grants itself DAC_READ_SEARCH (and a compose file
// SYS_ADMIN) to read a 600-mode host file from the hardened profile.
// The run is refused before any container starts, naming the file, its
// line and the flag; validate warns, audit lists it; with the flag the
// user trusts it and it runs.
func TestHostileTaskGrantsItselfCapabilities(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	secret := "HOSTILE-TRUST-HOSTFILE-" + randomHex(8)
	secretPath := filepath.Join(root, "host", "secret")
	os.MkdirAll(filepath.Dir(secretPath), 0o700)
	if err := os.WriteFile(secretPath, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tasks := filepath.Join(root, "tasks")
	os.MkdirAll(tasks, 0o755)
	file := filepath.Join(tasks, "probe.toml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(shockerProbe, docker.DebianImage, strings.TrimPrefix(secretPath, "/"))), 0o644); err != nil {
		t.Fatal(err)
	}
	name := "hostile-trust/dac-read-search"
	forged := 0
	validate := runBin(t, bin, nil, "tasks", "validate", file)
	if !strings.Contains(validate.stdout, file+":6: capability DAC_READ_SEARCH reaches past the container") || !strings.Contains(validate.stdout, "--allow-capability DAC_READ_SEARCH") {
		t.Errorf("validate does not warn of DAC_READ_SEARCH at line 6:\n%s%s", validate.stdout, validate.stderr)
		forged++
	}
	audit := runBin(t, bin, nil, "tasks", "audit", "--profile", "hardened", tasks)
	if audit.code != 1 || !strings.Contains(audit.stdout, "capability DAC_READ_SEARCH reaches the host") {
		t.Errorf("audit --profile hardened: exit %d, want 1 listing the capability:\n%s%s", audit.code, audit.stdout, audit.stderr)
		forged++
	}
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "uncapped", "--repeats", "1", "--out", out)
	refusedRight := run.code == 2 && strings.Contains(run.stderr, file+":6: DAC_READ_SEARCH") && strings.Contains(run.stderr, "--allow-capability DAC_READ_SEARCH")
	if !refusedRight {
		t.Errorf("run of a task granting itself DAC_READ_SEARCH: exit %d, want 2 naming %s:6 and --allow-capability:\n%s", run.code, file, run.stderr)
	}
	made, _ := filepath.Glob(filepath.Join(out, "*"))
	leaked, where := countIn(secret, experimentFiles(t, out), map[string]string{"run stdout": run.stdout, "run stderr": run.stderr})
	if leaked > 0 {
		t.Errorf("the host file's text is in %v", where)
	}
	if len(made) > 0 {
		t.Errorf("a refused run made %v", made)
		leaked += len(made)
	}

	// compose cap_add: the same rule, at the compose file's line.
	compose := harborTask(t, filepath.Join(root, "compose"), "sysadmin", "hostile-trust/compose-sys-admin", map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    build:\n      context: .\n  db:\n    image: " + docker.DebianImage + "\n    cap_add:\n      - SYS_ADMIN\n",
	})
	crun := runBin(t, bin, nil, "run", "--tasks-dir", filepath.Dir(compose), "--ratios", "uncapped", "--repeats", "1", "--out", out)
	composeAt := filepath.Join(compose, "environment", "docker-compose.yaml") + ":8 (service db cap_add): SYS_ADMIN"
	if crun.code != 2 || !strings.Contains(crun.stderr, composeAt) || !strings.Contains(crun.stderr, "--allow-capability SYS_ADMIN") {
		t.Errorf("run of a compose sidecar with cap_add SYS_ADMIN: exit %d, want 2 naming %q:\n%s", crun.code, composeAt, crun.stderr)
		leaked++
	}

	// Trusted by the user: it runs, and reads the file it was after.
	trusted := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--ratios", "uncapped", "--repeats", "1", "--out", out, "--allow-capability", "dac_read_search")
	_, recs, left := records(t, out)
	ran := trusted.code == 0 && len(recs) == 1
	if !ran {
		t.Errorf("with --allow-capability: exit %d, %d records:\n%s", trusted.code, len(recs), trusted.stderr)
	}
	read, _ := countIn(secret, experimentFiles(t, out))
	letoutRow(t, "task file `capabilities = [\"DAC_READ_SEARCH\"]` + open_by_handle_at of a 600-mode host file, hardened profile; a compose sidecar `cap_add: [SYS_ADMIN]`",
		fmt.Sprintf("run refused, exit %d, before any container: \"probe.toml:6: DAC_READ_SEARCH: task … asks for DAC_READ_SEARCH, which reaches past its container …: run with --allow-capability DAC_READ_SEARCH only if you trust the task\"; compose: \"docker-compose.yaml:8 (service db cap_add): SYS_ADMIN\", exit %d; validate warns at line 6, audit --profile hardened lists it (exit %d); with --allow-capability it ran (%d record, the file read: %v)",
			run.code, crun.code, audit.code, len(recs), read > 0),
		0, leaked+left, forged)
}

// trustTask writes a built-in-image task (no download) whose step runs
// ms milliseconds, with the memory and verifier given.
func trustTask(t *testing.T, path, memory string, ms, verifyMs int) {
	t.Helper()
	toml := fmt.Sprintf(`[task]
name = "hostile-trust/slow"
[environment]
image = "builtin"
memory = %q
cpus = 0.5
[agent]
timeout_sec = 120
[verifier]
timeout_sec = 60
workload = { style = "pytest", duration_ms = %d, base_mb = 4 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "solve"
  workload = { style = "python", duration_ms = %d, base_mb = 8 }
`, memory, verifyMs, ms)
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// F8: a run of 4 repeats killed (SIGKILL) after its first record, the
// task file edited (memory 32M → 64M, another verifier), then resumed.
// The resume is refused naming what changed; the experiment keeps its
// one record; with the file restored the resume completes it.
func TestHostileResumeEditedTask(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	os.MkdirAll(tasks, 0o755)
	file := filepath.Join(tasks, "slow.toml")
	trustTask(t, file, "32M", 2500, 50)
	out := filepath.Join(root, "out")
	l := startLive(t, bin, "run", "--tasks-dir", tasks, "--tasks", "hostile-trust/slow", "--ratios", "1", "--repeats", "4", "--concurrency", "1", "--out", out)
	dir := l.waitLine(`^\s+writing to (\S+)$`, 5*time.Minute)[1]
	l.waitLine(`^\[1/4\] passed`, 3*time.Minute)
	l.cmd.Process.Signal(syscall.SIGKILL)
	l.wait(time.Minute)
	before := trialLines(t, dir)
	trustTask(t, file, "64M", 2500, 70)
	res := runBin(t, bin, nil, "run", "--resume", filepath.Base(dir), "--out", out)
	after := trialLines(t, dir)
	named := res.code == 2 && regexp.MustCompile(`memory 32\s?MiB → 64\s?MiB`).MatchString(res.stderr) &&
		strings.Contains(res.stderr, "verifier changed") && strings.Contains(res.stderr, "restore the task files")
	if !named {
		t.Errorf("resume after the edit: exit %d, want 2 naming memory and verifier:\n%s", res.code, res.stderr)
	}
	forged := len(after) - len(before)
	if forged != 0 {
		t.Errorf("the refused resume added %d record(s) of the edited task", forged)
	}
	m, _ := store.ReadManifest(dir)
	// Restored, the resume runs the rest of the experiment's own task.
	trustTask(t, file, "32M", 2500, 50)
	again := runBin(t, bin, nil, "run", "--resume", filepath.Base(dir), "--out", out)
	final := trialLines(t, dir)
	_, ids := distinct(final)
	if again.code != 0 || ids != 4 {
		t.Errorf("resume with the file restored: exit %d, %d distinct trials:\n%s", again.code, ids, again.stderr)
	}
	letoutRow(t, "task file edited between a SIGKILL (after 1 of 4 records) and `run --resume`: memory 32M → 64M, verifier changed",
		fmt.Sprintf("resume refused, exit %d: \"task hostile-trust/slow (…/slow.toml): memory 32MiB → 64MiB, verifier changed … restore the task files as they were to resume it, or start a new experiment\"; %d record(s) kept, manifest memory %s; restored, the resume completed it (%d trials)",
			res.code, len(after), memoryOf(m), ids),
		4-ids, containersLeft(t, filepath.Base(dir)), forged)
}

func memoryOf(m store.Manifest) string {
	if len(m.Tasks) == 0 {
		return "?"
	}
	return fmt.Sprint(m.Tasks[0].Resources.MemoryBytes>>20) + "MiB"
}

// removeExperimentContainers removes the containers of experiment id
// (this test's own, labelled so).
func removeExperimentContainers(id string) {
	cli, err := docker.Connect()
	if err != nil {
		return
	}
	defer cli.Close()
	f := filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+id))
	list, _ := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	for _, c := range list {
		_ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}
	// A kept trial keeps its network of its own (round three) too, and
	// a Harbor trial its /logs volumes (round nineteen: six were left a
	// run, found by the twenty-third attacker and the suite's own check).
	nets, _ := cli.NetworkList(context.Background(), network.ListOptions{Filters: f})
	for _, n := range nets {
		_ = cli.NetworkRemove(context.Background(), n.ID)
	}
	vols, _ := cli.VolumeList(context.Background(), volume.ListOptions{Filters: f})
	for _, v := range vols.Volumes {
		_ = cli.VolumeRemove(context.Background(), v.Name, true)
	}
}

// F10: `run --keep` killed (SIGKILL) while its one trial runs, then
// `run --keep --resume`: the rerun must not collide with the container
// the first run kept (kept, under its name, for inspection); the trial
// ends with one record, the rerun's.
func TestHostileResumeBesideKeptContainer(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	os.MkdirAll(tasks, 0o755)
	trustTask(t, filepath.Join(tasks, "slow.toml"), "32M", 3000, 50)
	out := filepath.Join(root, "out")
	l := startLive(t, bin, "run", "--keep", "--tasks-dir", tasks, "--tasks", "hostile-trust/slow", "--ratios", "1", "--repeats", "1", "--out", out)
	dir := l.waitLine(`^\s+writing to (\S+)$`, 5*time.Minute)[1]
	id := filepath.Base(dir)
	t.Cleanup(func() { removeExperimentContainers(id) })
	waitForCond(t, "the trial's container running", 3*time.Minute, func() bool { return len(experimentList(t, id, true)) > 0 })
	l.cmd.Process.Signal(syscall.SIGKILL)
	l.wait(time.Minute)
	keptName := "headroom-" + id + "-t0001"
	res := runBin(t, bin, nil, "run", "--keep", "--resume", id, "--out", out)
	lines := trialLines(t, dir)
	recs, _, err := store.ReadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	outcome := ""
	if len(recs) == 1 {
		outcome = string(recs[0].Outcome)
	}
	if res.code != 0 || outcome != "passed" || strings.Contains(res.stderr, "already in use") {
		t.Errorf("resume beside the kept container: exit %d, %d record(s), outcome %q:\n%s", res.code, len(recs), outcome, res.stderr)
	}
	var names []string
	for _, c := range experimentList(t, id, false) {
		names = append(names, strings.TrimPrefix(c.Names[0], "/"))
	}
	keptStill, rerunKept := false, false
	for _, n := range names {
		keptStill = keptStill || n == keptName
		rerunKept = rerunKept || n == keptName+"-2"
	}
	if !rerunKept {
		t.Errorf("the rerun's container is not kept as %s-2 (containers now %v)", keptName, names)
	}
	if !keptStill {
		t.Errorf("the first run's kept container %s is gone (containers now %v)", keptName, names)
	}
	lost := 0
	if outcome != "passed" {
		lost = 1
	}
	letoutRow(t, "`run --keep` killed (SIGKILL) mid-trial, then `run --keep --resume`: the rerun beside the kept container of the same trial",
		fmt.Sprintf("exit %d; t0001 %s, one record read (%d line(s) in trials.jsonl, the last wins); the first run's container kept as %s, the rerun's as %s-2",
			res.code, outcome, len(lines), "headroom-<id>-t0001", "headroom-<id>-t0001"),
		lost, 0, len(recs)-1)
}
