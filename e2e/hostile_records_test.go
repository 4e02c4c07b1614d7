//go:build hostile

package e2e

// The hostile-input suite's "records lost or duplicated" rows (issue
// #24, items 1–5): each injects for real — the real binary on the real
// engine, a real rm -rf or mv of the experiment directory while its
// sweep runs, real second writers, real signals, a real task printing a
// gigabyte, hand-edited records — and reports what headroom recorded and
// what was lost, leaked or forged, each of which must be 0. Waits are on
// the binary's own lines of progress, with deadlines.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// hostileBin is the binary under test: built from this tree once for the
// whole suite, or the one HEADROOM_HOSTILE_BIN names (with hr-workload
// beside it), to show a row failing on a build without its fix. Each
// row built its own: 100 links of a 50 MB binary, 3 to 13 s each, a
// third of the suite's 30 minutes.
//
// A row that calls it runs beside the other rows (t.Parallel: at most
// -parallel, GOMAXPROCS by default, at once) unless serialRows names it;
// go test runs every serial row first, with nothing beside it.
func hostileBin(t *testing.T) string {
	t.Helper()
	if !strings.Contains(t.Name(), "/") && serialRows[t.Name()] == "" {
		if _, again := parallelRows.LoadOrStore(t.Name(), true); !again {
			t.Parallel()
		}
	}
	if b := os.Getenv("HEADROOM_HOSTILE_BIN"); b != "" {
		return b
	}
	sharedBin.once.Do(func() {
		if sharedBin.dir, sharedBin.err = os.MkdirTemp("", "headroom-hostile-bin-"); sharedBin.err == nil {
			sharedBin.bin, sharedBin.err = enginetest.BuildHeadroom(sharedBin.dir)
		}
	})
	if sharedBin.err != nil {
		t.Fatal(sharedBin.err)
	}
	return sharedBin.bin
}

// sharedBin is the suite's one build of headroom (TestMain removes it).
var sharedBin struct {
	once     sync.Once
	dir, bin string
	err      error
}

// parallelRows are the rows already made parallel (a row may reach
// hostileBin more than once, through its helpers).
var parallelRows sync.Map

// serialRows are the rows that run alone, and why: their verdict reads
// the host's load, or they set the process's environment, or they run
// `clean` over the whole engine, or kill a headroom whose containers a
// clean beside them would take.
var serialRows = map[string]string{
	"TestHostileR13LoopTimeoutIsTheTasks":                "judged not contended unless the host's load passes its CPUs",
	"TestHostileR6OwnThrottleNotContention":              "judged not contended: its wait must be its own",
	"TestHostileR20ThrashAtItsLimitIsNotTheHosts":        "judged not contended: the memory pressure must be its trials' own",
	"TestHostileR15FiftyMillionLines":                    "a 30 s agent timeout against headroom's pace alone",
	"TestHostileR4SidecarNoNetwork":                      "its no-network trial was an infra-error in 0.8 s beside the other rows once (CI rehearsal, 2026-12-06; reason not kept): each trial makes networks of its own",
	"TestHostileImageHealthForever":                      "t.Setenv (HEADROOM_IMAGE_HEALTH_WAIT)",
	"TestHostileR3EnvironmentHealthcheckForever":         "t.Setenv (HEADROOM_IMAGE_HEALTH_WAIT)",
	"TestHostileR3StepHealthcheckForever":                "t.Setenv (HEADROOM_IMAGE_HEALTH_WAIT)",
	"TestHostileR3CleanRemovesOthers":                    "clean over the whole engine",
	"TestHostileR8atk8ownerCleanOfACopy":                 "clean of a copied store",
	"TestHostileR13CleanLeavesARunInAnotherPidNamespace": "clean over the whole engine",
	"TestHostileR6KilledBuildNetworkCleanOut":            "kills headroom mid-build, then cleans",
	"TestHostileReaperWhileARunStarts":                   "clean over the whole engine beside a starting run",
	"TestHostileHeadroomStopped":                         "kills headroom, its containers left for the reap",
	"TestHostileR3Kill9FromTheHost":                      "kills from the host",
	"TestHostileResumeBesideKeptContainer":               "a kept container beside a resume",
}

// live is the real binary running, its stderr read a line at a time as
// it comes: what a test waits on.
type live struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout bytes.Buffer

	mu      sync.Mutex
	lines   []string
	changed chan struct{}
	done    chan struct{}
	code    int
	rusage  *syscall.Rusage
}

func startLive(t *testing.T, bin string, args ...string) *live {
	t.Helper()
	l := &live{t: t, changed: make(chan struct{}, 1), done: make(chan struct{})}
	l.cmd = exec.Command(bin, args...)
	l.cmd.Env = append(os.Environ(), "NO_COLOR=1")
	l.cmd.Stdout = &l.stdout
	pr, err := l.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 256<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.mu.Unlock()
			select {
			case l.changed <- struct{}{}:
			default:
			}
		}
		err := l.cmd.Wait()
		l.mu.Lock()
		l.code = l.cmd.ProcessState.ExitCode()
		if ee, ok := err.(*exec.ExitError); ok && !ee.Exited() {
			l.code = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
		l.rusage, _ = l.cmd.ProcessState.SysUsage().(*syscall.Rusage)
		l.mu.Unlock()
		close(l.done)
	}()
	t.Cleanup(func() {
		select {
		case <-l.done:
		default:
			l.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-l.done:
			case <-time.After(2 * time.Minute):
				l.cmd.Process.Kill()
				<-l.done
			}
		}
	})
	return l
}

func (l *live) stderr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waitLine waits for a line of stderr matching re and returns its
// submatches; it fails the test if the binary ends or the deadline
// passes first.
func (l *live) waitLine(re string, within time.Duration) []string {
	l.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(within)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if m := rx.FindStringSubmatch(line); m != nil {
				l.mu.Unlock()
				return m
			}
		}
		l.mu.Unlock()
		select {
		case <-l.changed:
		case <-l.done:
			select {
			case <-l.changed:
				continue // its last lines
			default:
			}
			l.t.Fatalf("headroom exited %d before a line matching %q:\n%s", l.code, re, l.stderr())
		case <-deadline:
			l.t.Fatalf("no line matching %q within %s:\n%s", re, within, l.stderr())
		}
	}
}

// wait waits for the binary to exit and returns its exit code (128+n
// for a death by signal n).
func (l *live) wait(within time.Duration) int {
	l.t.Helper()
	select {
	case <-l.done:
	case <-time.After(within):
		l.t.Fatalf("headroom still running after %s:\n%s", within, l.stderr())
	}
	return l.code
}

// slowTasks writes a headroom task of one step of ms milliseconds in the
// built-in image (no download), under a fresh directory.
func slowTasks(t *testing.T, ms int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tasks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf(`[task]
name = "hostile-records/slow"
[environment]
image = "builtin"
memory = "32M"
cpus = 0.5
[agent]
timeout_sec = 120
[verifier]
timeout_sec = 60
workload = { style = "pytest", duration_ms = 50, base_mb = 4 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "solve"
  workload = { style = "python", duration_ms = %d, base_mb = 8 }
`, ms)
	if err := os.WriteFile(filepath.Join(dir, "slow.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// containersLeft counts the containers on the engine labelled with
// experiment id.
func containersLeft(t *testing.T, id string) int {
	t.Helper()
	return len(experimentList(t, id, false))
}

// trialLines reads a trials.jsonl: its records, by line.
func trialLines(t *testing.T, dir string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: record %.200q: %v", dir, l, err)
		}
		out = append(out, r)
	}
	return out
}

// reportedFinished are the trials the binary's progress said finished
// with an outcome of their own (not cancelled, not "not recorded").
func reportedFinished(stderr string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`(?m)^\[\s*\d+/\d+\] (\S+)\s+(t\d{4}) `).FindAllStringSubmatch(stderr, -1) {
		if m[1] != "cancelled" {
			ids = append(ids, m[2])
		}
	}
	return ids
}

// missing counts the ids with no record among recs.
func missing(ids []string, recs []map[string]any) int {
	have := map[string]bool{}
	for _, r := range recs {
		have[fmt.Sprint(r["id"])] = true
	}
	n := 0
	for _, id := range ids {
		if !have[id] {
			n++
		}
	}
	return n
}

// distinct counts records and their distinct trial ids.
func distinct(recs []map[string]any) (lines, ids int) {
	seen := map[string]bool{}
	for _, r := range recs {
		seen[fmt.Sprint(r["id"])] = true
	}
	return len(recs), len(seen)
}

// hasTrace says whether a trial's memory trace reads back with samples
// (compacted, or the full-resolution CSV a compaction cut short leaves).
func hasTrace(dir, id string) bool {
	samples, _, err := store.ReadTrace(dir, id)
	return err == nil && len(samples) > 0
}

// startSweep starts `run` of trials repeats of the slow task and waits
// for its experiment directory and its first record.
func startSweep(t *testing.T, bin, tasks, out string, repeats, concurrency int) (*live, string) {
	t.Helper()
	l := startLive(t, bin, "run", "--tasks-dir", tasks, "--tasks", "hostile-records/slow", "--ratios", "1", "--repeats", strconv.Itoa(repeats),
		"--concurrency", strconv.Itoa(concurrency), "--out", out)
	dir := l.waitLine(`^\s+writing to (\S+)$`, 5*time.Minute)[1]
	return l, dir
}

// removeWhileWritten removes dir as `rm -rf` does, again while headroom
// still writes into it (a trace file made between the listing and the
// unlink fails it with "directory not empty"), for up to a minute.
func removeWhileWritten(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := os.RemoveAll(dir)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

// Item 1: the experiment directory removed (rm -rf) after the first of
// four trials is recorded. headroom must stop, save the records it had
// written (read back from the file it still holds), re-create nothing,
// and exit non-zero naming where they went.
func TestHostileExperimentRemovedMidRun(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	out := filepath.Join(t.TempDir(), "out")
	l, dir := startSweep(t, bin, slowTasks(t, 2500), out, 4, 1)
	l.waitLine(`^\[1/4\] passed`, 3*time.Minute)
	removeWhileWritten(t, dir)
	code := l.wait(3 * time.Minute)
	stderr := l.stderr()
	id := filepath.Base(dir)
	if code == 0 || !strings.Contains(stderr, "was removed while the sweep ran") {
		t.Errorf("exit %d after rm -rf, want non-zero naming the removal:\n%s", code, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the removed directory is back: %v", err)
	}
	rescued := dir + ".rescued"
	recs := trialLines(t, rescued)
	rep := runBin(t, bin, nil, "report", rescued)
	if rep.code != 0 || !strings.Contains(stderr, rescued) {
		t.Errorf("the rescued experiment: report exit %d %s; named in stderr: %v", rep.code, rep.stderr, strings.Contains(stderr, rescued))
	}
	finished := reportedFinished(stderr)
	lost := missing(finished, recs)
	letoutRow(t, "rm -rf of the experiment directory while `run` (4 trials, concurrency 1) runs, after its first record",
		fmt.Sprintf("exit %d, \"the experiment directory … was removed while the sweep ran\"; the sweep stopped; the %d record(s) reported finished saved with the manifest to <id>.rescued (report reads it); the trials after shown cancelled, not recorded; nothing re-created at the path", code, len(recs)),
		lost, containersLeft(t, id), 0)
}

// Item 1: the experiment directory moved (mv) mid-run. headroom must
// stop and name where it went; the moved directory holds every record
// reported, nothing appears at the old path, and a resume there
// completes the sweep.
func TestHostileExperimentMovedMidRun(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	out := filepath.Join(t.TempDir(), "out")
	l, dir := startSweep(t, bin, slowTasks(t, 2500), out, 4, 1)
	l.waitLine(`^\[1/4\] passed`, 3*time.Minute)
	moved := filepath.Join(filepath.Dir(out), "moved-"+filepath.Base(dir))
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	code := l.wait(3 * time.Minute)
	stderr := l.stderr()
	if code == 0 || !strings.Contains(stderr, "was moved to "+moved) {
		t.Errorf("exit %d after mv, want non-zero naming %s:\n%s", code, moved, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a directory re-created at the old path: %v", err)
	}
	recs := trialLines(t, moved)
	lost := missing(reportedFinished(stderr), recs)
	// The resume the error names completes it where it is now.
	res := runBin(t, bin, nil, "run", "--resume", moved, "--out", out)
	after := trialLines(t, moved)
	_, ids := distinct(after)
	noTrace := 0
	for _, r := range after {
		if !hasTrace(moved, fmt.Sprint(r["id"])) {
			noTrace++
		}
	}
	if res.code != 0 || ids != 4 || noTrace != 0 {
		t.Errorf("resume in the moved directory: exit %d, %d distinct trials, %d without a trace:\n%s", res.code, ids, noTrace, res.stderr)
	}
	letoutRow(t, "mv of the experiment directory while `run` (4 trials) runs, after its first record",
		fmt.Sprintf("exit %d, \"… was moved to <new path>: its %d record(s) are there\"; the sweep stopped; nothing at the old path; `run --resume <new path>` completed it: %d trials, each with its trace", code, len(recs), ids),
		lost+4-ids+noTrace, containersLeft(t, filepath.Base(dir)), 0)
}

// Item 2: an experiment resumed while its own run still runs, and two
// resumes at once of a run killed with SIGKILL. One writer at a time:
// the second is refused naming the holder; the experiment ends with one
// record per trial.
func TestHostileSecondWriter(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := slowTasks(t, 2500)
	out := filepath.Join(t.TempDir(), "out")

	// A resume while the run runs.
	a, dir := startSweep(t, bin, tasks, out, 4, 1)
	a.waitLine(`^\[1/4\] `, 3*time.Minute)
	second := runBin(t, bin, nil, "run", "--resume", dir, "--out", out)
	holder := fmt.Sprintf("being written by pid %d", a.cmd.Process.Pid)
	if second.code != 2 || !strings.Contains(second.stderr, holder) {
		t.Errorf("resume beside the running run: exit %d, want 2 naming %q:\n%s", second.code, holder, second.stderr)
	}
	if code := a.wait(3 * time.Minute); code != 0 {
		t.Errorf("the first run: exit %d:\n%s", code, a.stderr())
	}
	lines, ids := distinct(trialLines(t, dir))
	noTrace := 0
	for i := 1; i <= 4; i++ {
		if !hasTrace(dir, fmt.Sprintf("t%04d", i)) {
			noTrace++
		}
	}
	letoutRow(t, "`run --resume` of an experiment while its own `run` (4 trials) still runs",
		fmt.Sprintf("the resume refused, exit %d: \"experiment … is being written by pid N (headroom run …), started …\"; the run went on: %d records for %d trials, %d without its trace", second.code, lines, ids, noTrace),
		4-ids+lines-ids+noTrace, containersLeft(t, filepath.Base(dir)), 0)

	// Two resumes at once of a run SIGKILLed mid-sweep.
	k, dir2 := startSweep(t, bin, tasks, out, 4, 1)
	k.waitLine(`^\[1/4\] `, 3*time.Minute)
	k.cmd.Process.Signal(syscall.SIGKILL)
	k.wait(time.Minute)
	b := startLive(t, bin, "run", "--resume", dir2, "--out", out)
	c := startLive(t, bin, "run", "--resume", dir2, "--out", out)
	bc, cc := b.wait(5*time.Minute), c.wait(5*time.Minute)
	winner, loser, lc := b, c, cc
	if bc != 0 {
		winner, loser, lc = c, b, bc
	}
	named := strings.Contains(loser.stderr(), fmt.Sprintf("being written by pid %d", winner.cmd.Process.Pid))
	if min(bc, cc) != 0 || lc != 2 || !named {
		t.Errorf("two resumes at once: exits %d and %d, want 0 and 2 naming the winner (%v):\n%s\n---\n%s", bc, cc, named, b.stderr(), c.stderr())
	}
	lines2, ids2 := distinct(trialLines(t, dir2))
	letoutRow(t, "two `run --resume` at once of a run killed with SIGKILL after its first record",
		fmt.Sprintf("one resumed (exit %d), the other refused (exit %d) naming the winner's pid, command and start; %d records for %d trials", min(bc, cc), lc, lines2, ids2),
		4-ids2+lines2-ids2, containersLeft(t, filepath.Base(dir2)), 0)
}

// Item 3: SIGHUP (the terminal closed) mid-sweep is SIGTERM: the running
// trials stopped, removed and recorded cancelled, exit 130.
func TestHostileSIGHUP(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	out := filepath.Join(t.TempDir(), "out")
	l, dir := startSweep(t, bin, slowTasks(t, 4000), out, 4, 2)
	// A trial running: its container up (a built-in step prints no
	// process line of its own since its process is the step itself).
	waitContainer(t, filepath.Base(dir), 3*time.Minute)
	l.cmd.Process.Signal(syscall.SIGHUP)
	code := l.wait(3 * time.Minute)
	recs := trialLines(t, dir)
	cancelled := 0
	for _, r := range recs {
		if r["outcome"] == string(model.Cancelled) {
			cancelled++
		}
	}
	_, ids := distinct(recs)
	if code != 130 || cancelled == 0 || !strings.Contains(l.stderr(), "interrupted: unfinished trials were stopped") {
		t.Errorf("after SIGHUP: exit %d (SIGTERM's is 130), %d cancelled records:\n%s", code, cancelled, l.stderr())
	}
	letoutRow(t, "SIGHUP to `run` (4 trials, concurrency 2) while its first trials run",
		fmt.Sprintf("exit %d, as SIGTERM; %d records, %d of them cancelled; \"interrupted: unfinished trials were stopped, removed and recorded as cancelled\"", code, len(recs), cancelled),
		4-ids, containersLeft(t, filepath.Base(dir)), 0)
}

// Item 4: a task printing about a gigabyte: a 50 MB argument to one
// traced command, then 300 commands printing 3.2 MB each. The log, the
// record, stderr and headroom's memory stay bounded; what was dropped
// is counted in the record and said in the log.
func TestHostileOutputWithoutBound(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	solve := "#!/bin/bash\n" +
		"echo \"$(head -c 50000000 /dev/zero | tr '\\0' y)\" > /dev/null\n" +
		"for i in $(seq 300); do yes \"$(printf '%0999d' $i)\" | head -c 3200000; done\n" +
		"echo done\n"
	// The same task quiet first: its image built, and headroom's own
	// memory on a trial that prints a line, to hold the loud one against.
	harborTask(t, tasks, "loud", "hostile-records/loud", map[string]string{"solution/solve.sh": "#!/bin/bash\necho quiet\n"})
	t.Cleanup(func() { removeTaskImages(t, "hostile-records/loud") })
	quiet := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", "hostile-records/loud", "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", filepath.Join(root, "quiet"))
	if quiet.code != 0 {
		t.Fatalf("quiet run exit %d:\n%s\n%s", quiet.code, quiet.stdout, quiet.stderr)
	}
	harborTask(t, tasks, "loud", "hostile-records/loud", map[string]string{"solution/solve.sh": solve})
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", "hostile-records/loud", "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	if run.code != 0 {
		t.Fatalf("run exit %d:\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	dir, recs, left := records(t, out)
	data, _ := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
	longestRecord := 0
	for _, l := range strings.Split(string(data), "\n") {
		longestRecord = max(longestRecord, len(l))
	}
	longestErr := 0
	for _, l := range strings.Split(run.stderr, "\n") {
		longestErr = max(longestErr, len(l))
	}
	st, err := os.Stat(filepath.Join(dir, "trials", "t0001", "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	logb, _ := os.ReadFile(filepath.Join(dir, "trials", "t0001", "log.txt"))
	dropped, _ := recs[0]["output_dropped_bytes"].(float64)
	// A loud trial costs a fixed amount more than a quiet one (the event
	// stream's buffers full of 2,000-byte lines, the garbage of 1 MiB
	// pieces): 22-50 MiB over 6 runs here, and the same at 1 GB and at
	// 2.93 GB of output (71 and 75 MiB peak); before the caps it grew
	// with the output (395 MiB at 1 GB). The margin is 96 MiB, not 64:
	// the garbage collector's timing moves it, and a CI run's load took it
	// to 120 MiB over a 56 MiB quiet run (2026-12-03; 99–101 MiB over
	// 51–58 quiet here after, and 100 MiB on the build before that day's
	// changes: no growth), still far under what growing with the output is.
	rss, quietRSS := run.maxRSSKiB>>10, quiet.maxRSSKiB>>10
	if st.Size() > 18<<20 || longestRecord > 2<<20 || longestErr > 4<<10 || rss > quietRSS+96 || dropped < 900e6 ||
		!strings.Contains(string(logb), "of this step's output not kept here") || !strings.Contains(string(logb), "this trial's log reached 16MiB") {
		t.Errorf("log %d bytes, record line %d, stderr line %d, RSS %d MiB (%d MiB quiet), %0.f bytes counted dropped; want ≤ 18 MiB, 2 MiB, 4 KiB, the quiet run's RSS + 96 MiB, ≥ 900 MB with notes in the log",
			st.Size(), longestRecord, longestErr, rss, quietRSS, dropped)
	}
	letoutRow(t, "a traced solve.sh printing 1.01 GB (a 50 MB argument, then 300 commands of 3.2 MB)",
		fmt.Sprintf("passed; log.txt %.1f MB (each step's first and last MiB, 16 MiB a trial, with notes), record line %.2f MB (%.0f MB counted as dropped), longest stderr line %d bytes, headroom's peak RSS %d MiB (%d MiB for the same task printing one line)", float64(st.Size())/1e6, float64(longestRecord)/1e6, dropped/1e6, longestErr, rss, quietRSS),
		1-len(recs), left, 0)
}

// Item 5: hand-edited records given to report: a line from another
// experiment (replacing a real trial), an unknown 7x ratio, an end
// before its start, a record appended again under a new id (its cell's
// repeat counted twice). Each is refused, exit 2, naming file and line.
func TestHostileHandEditedRecords(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := slowTasks(t, 100)
	out := filepath.Join(t.TempDir(), "out")
	var dirs []string
	for i := 0; i < 2; i++ {
		r := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", "hostile-records/slow", "--ratios", "1,3", "--repeats", "1", "--out", out)
		if r.code != 0 {
			t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
		}
		dirs = append(dirs, regexp.MustCompile(`(?m)^\s+writing to (\S+)$`).FindStringSubmatch(r.stderr)[1])
	}
	read := func(dir string) []string {
		b, err := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	edit := func(line string, f func(r map[string]any)) string {
		var r map[string]any
		json.Unmarshal([]byte(line), &r)
		f(r)
		b, _ := json.Marshal(r)
		return string(b)
	}
	mine, theirs := read(dirs[0]), read(dirs[1])
	cases := []struct{ name, want string }{
		{"a line of another experiment appended (its t0001 would replace this one's)", "a record from another experiment"},
		{"a record's ratio edited to 7x", "ratio 7x is not one of this experiment's"},
		{"a record's end moved 111,214 s before its start", "before it starts"},
		// Round eleven: the same trial counted twice in its cell.
		{"a record appended again under a new id (t0003)", "one repeat of a cell recorded twice under two ids"},
	}
	accepted := 0
	var said []string
	for i, c := range cases {
		dir := filepath.Join(t.TempDir(), filepath.Base(dirs[0]))
		if err := exec.Command("cp", "-a", dirs[0], dir).Run(); err != nil {
			t.Fatal(err)
		}
		lines := append([]string(nil), mine...)
		switch i {
		case 0:
			lines = append(lines, theirs[0])
		case 1:
			lines[1] = edit(lines[1], func(r map[string]any) { r["ratio"] = "7x" })
		case 2:
			lines[1] = edit(lines[1], func(r map[string]any) {
				start, _ := time.Parse(time.RFC3339Nano, r["start"].(string))
				r["end"] = start.Add(-111214 * time.Second).Format(time.RFC3339Nano)
			})
		case 3:
			lines = append(lines, edit(lines[0], func(r map[string]any) { r["id"] = "t0003" }))
		}
		if err := os.WriteFile(filepath.Join(dir, "trials.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		line := 2
		if i == 0 || i == 3 {
			line = 3
		}
		rep := runBin(t, bin, nil, "report", dir)
		where := fmt.Sprintf("%s:%d: ", filepath.Join(dir, "trials.jsonl"), line)
		if rep.code != 2 || !strings.Contains(rep.stderr, where) || !strings.Contains(rep.stderr, c.want) {
			accepted++
			t.Errorf("%s: report exit %d, want 2 naming %q and %q:\n%s%s", c.name, rep.code, where, c.want, rep.stdout, rep.stderr)
		}
		said = append(said, fmt.Sprintf("%s: exit %d", c.name, rep.code))
	}
	letoutRow(t, "hand-edited trials.jsonl given to `report`: a line of another experiment, a 7x ratio, an end before its start, a record appended again under a new id",
		strings.Join(said, "; ")+" — each naming trials.jsonl:LINE, the trial and the field", 0, containersLeft(t, filepath.Base(dirs[0]))+containersLeft(t, filepath.Base(dirs[1])), accepted)
}
