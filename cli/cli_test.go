package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/report"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/store"
)

// These tests run the real binary, as a user would.
var binary string

func TestMain(m *testing.M) {
	// In-process commands (NewRoot) connect as the binary does.
	runner.Register(docker.Definition())
	dir, err := os.MkdirTemp("", "headroom-cli")
	if err != nil {
		panic(err)
	}
	if binary, err = enginetest.BuildHeadroom(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	before := headroomContainers()
	imagesBefore := testTaskImages()
	code := m.Run()
	os.RemoveAll(dir)
	// The task images these tests' own tasks built (cli/…, examples/…),
	// made during this run: removed by tag, as the hostile rows remove
	// theirs (removeTaskImages); one that was there before is left.
	enginetest.RemoveNewImages(imagesBefore, testTaskImages())
	// Nothing may be left behind by any test: each container of headroom's
	// made during the run and still there is named, with its experiment.
	if before != nil {
		var left []string
		for id, what := range headroomContainers() {
			if _, had := before[id]; !had {
				left = append(left, what)
			}
		}
		if len(left) > 0 {
			fmt.Fprintf(os.Stderr, "%d container(s) left behind by the cli tests: %s\n", len(left), strings.Join(left, "; "))
			code = 1
		}
	}
	os.Exit(code)
}

// testTaskImages are the engine's task images of the tasks these tests
// make (headroom-task/cli-…, headroom-task/examples-…).
func testTaskImages() map[string][]string {
	return enginetest.TaskImages(docker.TaskRepo, "cli-", "examples-")
}

// headroomContainers are the engine's containers labelled headroom, by
// id: their name, state and experiment (nil: no engine answered).
func headroomContainers() map[string]string {
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label="+runner.LabelExperiment, "--format", "{{.ID}} {{.Label \""+runner.LabelOwner+"\"}} {{.Names}} {{.State}} {{.Label \""+runner.LabelExperiment+"\"}}").Output()
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, rest, ok := strings.Cut(l, " ")
		owner, what, ok2 := strings.Cut(rest, " ")
		// A live trial of another headroom on this shared engine (its
		// owner process still running, neither this test nor a headroom
		// it started) is not ours.
		if !ok || !ok2 || (owner != runner.Owner() && runner.OwnerAlive(owner) && !startedByUs(owner)) {
			continue
		}
		m[id] = what
	}
	return m
}

// startedByUs says whether an owner label's process is a child of this
// test process (a headroom binary it ran and has not reaped).
func startedByUs(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) < 2 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + parts[1] + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return false
	}
	// After the command's closing parenthesis: state, then the parent's pid.
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 1 && f[1] == strconv.Itoa(os.Getpid())
}

type result struct {
	code           int
	stdout, stderr string
}

func headroom(t *testing.T, args ...string) result {
	t.Helper()
	return headroomWithin(t, 5*time.Minute, args...)
}

// headroomWithin is headroom with its own bound: a sweep whose length
// follows the load of a shared machine (2 minutes quiet, 5+ at a load of
// 35 on 2 cores) gets more than a command does.
func headroomWithin(t *testing.T, within time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func needEngine(t *testing.T) {
	t.Helper()
	enginetest.NeedDocker(t)
}

func TestBadInputIsOneLineAndExitTwo(t *testing.T) {
	out := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--ratios", "0.5x"}, "below 1x"},
		{[]string{"run", "--ratios", "0x"}, "below 1x"},
		{[]string{"run", "--ratios", "abc"}, `ratio "abc" is not a multiple`},
		{[]string{"run", "--ratios", "1,1"}, "listed twice"},
		{[]string{"run", "--agent", "oracle,oracle", "--repeats", "1"}, "--agents: agent oracle is listed twice"},
		{[]string{"run", "--agents", "oracle", "--agents", "nop,oracle"}, "--agents: agent oracle is listed twice"},
		{[]string{"run", "--tasks", "no-such-task"}, `unknown task "no-such-task"`},
		{[]string{"run", "--repeats", "0"}, "--repeats must be between 1"},
		{[]string{"run", "--concurrency", "-1"}, "--concurrency must be between 1"},
		{[]string{"run", "--format", "xml"}, "--format must be one of table, markdown, csv, json"},
		{[]string{"run", "--seed", "-4"}, "--seed must be a non-negative integer"},
		{[]string{"run", "--reserve", "lots"}, "--reserve"},
		{[]string{"run", "--backend", "kubernetes", "--reserve", "2G"}, "--reserve is the Docker host's: on Kubernetes each node's allocatable memory"},
		{[]string{"run", "--backend", "kubernetes", "--kubeconfig", "/nonexistent/kubeconfig", "--namespace", "Bad_NS", "--out", out}, `--namespace "Bad_NS" is not a valid namespace name`},
		{[]string{"run", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"run", "--tasks-dir", "testdata/allbroken", "--out", out}, "no task in the tasks directory could be loaded"},
		// One file of the directory not loading is a task missing from the
		// score (a new user's run exited 0 over the rest, the warning
		// scrolled away): refused, saying how to run the rest.
		{[]string{"run", "--tasks-dir", "testdata/halfbroken", "--out", out}, "1 task file did not load (testdata/halfbroken/broken.toml"},
		// A missing file or directory is a sentence naming it and what to
		// give, not "stat testdata/nowhere: no such file or directory".
		{[]string{"run", "--tasks-dir", "testdata/nowhere"}, "tasks directory testdata/nowhere does not exist: give a directory that holds task directories"},
		{[]string{"tasks", "list", "--tasks-dir", "testdata/nowhere"}, "tasks directory testdata/nowhere does not exist: give a directory"},
		{[]string{"tasks", "validate", "testdata/nowhere/nope.toml"}, "testdata/nowhere/nope.toml does not exist: give validate a task file (headroom *.toml, a task directory's task.toml or task.yaml) or a directory of them"},
		{[]string{"tasks", "validate", "testdata/allbroken/broken.toml"}, "1 task file has errors"},
		// --tasks-dir, which `tasks --help` lists, is a directory to check
		// (a new user's: it was refused as no argument).
		{[]string{"tasks", "validate", "--tasks-dir", "testdata/allbroken"}, "1 task file has errors"},
		{[]string{"tasks", "show", "nope"}, `unknown task "nope"`},
		{[]string{"nonsense"}, "unknown command"},
		// The same job twice imported every trial twice (36 from 18).
		{[]string{"import", "harbor", "--out", out, "../importer/testdata/harbor/tb2-docker-1x", "../importer/testdata/harbor/tb2-docker-1x/"}, "../importer/testdata/harbor/tb2-docker-1x and ../importer/testdata/harbor/tb2-docker-1x/ are the same directory: give each job or run once"},
		{[]string{"import", "terminal-bench", "--out", out, "../importer/testdata/tb1/2026-11-22__10-00-00", "../importer/testdata/tb1/2026-11-22__10-00-00"}, "are the same directory: give each job or run once"},
		{[]string{"report", "testdata/experiments/corrupt-trials"}, "trials.jsonl:2:"},
		{[]string{"report", "testdata/experiments/bad-manifest"}, "manifest.json"},
		{[]string{"report", "testdata"}, "not an experiment directory"},
		{[]string{"report", "testdata/experiments/torn", "--format", "yaml"}, "--format must be one of"},
		{[]string{"run", "--resume", "testdata/experiments/bad-manifest"}, "manifest.json"},
		{[]string{"calibrate", "testdata/experiments/torn", "--target", "lots"}, "--target must be percentage points"},
		{[]string{"run", "--floor", "-1G"}, "--floor"},
		{[]string{"run", "--sample-hz", "0"}, "--sample-hz must be more than 0 and at most 1000 samples a second (got 0)"},
		// NaN is neither <= 0 nor > 1000: nan was accepted.
		{[]string{"run", "--sample-hz", "nan"}, "--sample-hz must be more than 0 and at most 1000 samples a second (got NaN)"},
		{[]string{"run", "--sample-hz", "-Inf"}, "--sample-hz must be more than 0 and at most 1000 samples a second (got -Inf)"},
		{[]string{"run", "--reserve", "99999999999999999999G"}, `--reserve: size "99999999999999999999G" is too large: the most is 1PiB`},
		{[]string{"run", "--ratios", "Inf"}, `ratio "Inf" is above 1000x: use "uncapped" for no limit`},
		{[]string{"run", "--ratios", "1,1e309"}, `ratio "1e309" is above 1000x: use "uncapped" for no limit`},
		{[]string{"report", "testdata/experiments/torn", "--baseline", "7x"}, "--baseline 7x: experiment torn did not run that ratio; its ratios are 1x"},
		{[]string{"report", "testdata/experiments/torn", "--plot-trial", "t0001=a.png", "--plot-trial", "t0002=a.png"}, "a.png is named twice"},
		{[]string{"report", "testdata/experiments/torn", "--plot-trial", "t0001"}, "--plot-trial takes TRIAL=FILE"},
		{[]string{"report", "testdata/experiments/torn", "--plot", "x.gif"}, "--plot: plot file x.gif: use a .png or .svg name"},
		{[]string{"report", "--plot", "x.gif"}, "--plot: plot file x.gif: use a .png or .svg name"},
		{[]string{"report", "--plot", "x.png", "--out", out}, "--plot and --plot-trial draw one experiment: name it"},
		{[]string{"report", "testdata/experiments/torn", "--plot-trial", "t0001=a.jpg"}, "--plot-trial t0001=a.jpg: plot file a.jpg: use a .png or .svg name"},
		{[]string{"report", "a", "b"}, "report takes at most one experiment: its id or its directory (none: the store's only one, or a list of them), not 2 arguments (a b); usage: headroom report [EXP]"},
		{[]string{"calibrate"}, "calibrate needs an experiment: its id or its directory (`headroom report --list` lists them); usage: headroom calibrate EXP"},
		{[]string{"compare", "testdata/experiments/torn"}, "compare needs two experiments, A and B"},
		{[]string{"compare", "a", "b", "c"}, "compare takes two experiments, A and B"},
		{[]string{"tasks", "show"}, "tasks show needs a task's name (`headroom tasks list` lists them)"},
		{[]string{"tasks", "validate"}, "tasks validate needs one or more task files or directories"},
		{[]string{"tasks", "audit"}, "tasks audit needs one or more task directories"},
		{[]string{"agents", "show"}, "agents show needs an agent definition's name"},
		{[]string{"import", "harbor"}, "import harbor needs one or more run directories to import; usage: headroom import harbor JOBDIR..."},
		{[]string{"compare", "testdata/experiments/torn", "testdata/experiments/torn"}, "are the same experiment (torn)"},
		{[]string{"compare", "testdata/experiments/torn", "./testdata/../testdata/experiments/torn/"}, "are the same experiment (torn)"},
		{[]string{"calibrate", "testdata/experiments/torn", "--target", "0"}, "--target must be more than 0 and less than 100% of runs"},
		{[]string{"calibrate", "testdata/experiments/torn", "--target", "100%"}, "--target must be more than 0 and less than 100% of runs"},
		{[]string{"calibrate", "testdata/experiments/torn", "--target", "0pp"}, "--target must be more than 0"},
		{[]string{"demo", "--record", "demo.txt"}, "--record demo.txt: name the recording FILE.cast"},
	}
	for _, tt := range tests {
		r := headroom(t, tt.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		last := lines[len(lines)-1]
		if r.code != 2 || !strings.Contains(last, tt.want) || !strings.HasPrefix(last, "headroom: ") {
			t.Errorf("headroom %s: exit %d, stderr %q; want exit 2 and a line with %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
		}
		if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
			t.Errorf("headroom %s: stack trace:\n%s", strings.Join(tt.args, " "), r.stderr)
		}
	}
}

func TestTornTrialsFileIsReportedNotFatal(t *testing.T) {
	r := headroom(t, "report", "testdata/experiments/torn")
	if r.code != 0 || !strings.Contains(r.stderr, "torn line") || !strings.Contains(r.stdout, "cli/quick") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestValidateNamesFileAndLine(t *testing.T) {
	r := headroom(t, "tasks", "validate", "testdata/allbroken/broken.toml", "testdata/tasks")
	if r.code != 2 || !strings.Contains(r.stdout, "error testdata/allbroken/broken.toml:3:") || !strings.Contains(r.stdout, "ok    cli/tiny") {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
}

// A misspelt section is named with its line and the section meant; a
// command the built-in image does not have is warned, not passed as ok.
func TestValidateSectionTypoAndBuiltinCommand(t *testing.T) {
	r := headroom(t, "tasks", "validate", "testdata/validate/section-typo.toml")
	if r.code != 2 || !strings.Contains(r.stdout, "error testdata/validate/section-typo.toml:4: [enviroment]: did you mean [environment]?") {
		t.Errorf("section typo: exit %d\n%s", r.code, r.stdout)
	}
	// A misspelt key refuses the file as a run refuses it: a new user's
	// validate said ok, then run said "no task could be loaded". Its line
	// is said as every other error's is (file:6:, not "file: line 6:").
	r = headroom(t, "tasks", "validate", "testdata/validate/key-typo.toml")
	if r.code != 2 || !strings.Contains(r.stdout, "error testdata/validate/key-typo.toml:6: environment.memroy: did you mean memory?: fix the key") {
		t.Errorf("key typo: exit %d\n%s", r.code, r.stdout)
	}
	r = headroom(t, "tasks", "validate", "testdata/validate/builtin-true.toml")
	if r.code != 0 || !strings.Contains(r.stdout, `warning: agent "agent" step "noop": command ["true"] runs on image "builtin", which is FROM scratch`) {
		t.Errorf("true on the built-in image: exit %d\n%s", r.code, r.stdout)
	}
}

// A Harbor task without solution/solve.sh loads, and run refuses it
// without --agents: validate says so beside its "ok".
func TestValidateSaysNoAgentSolvesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nosolve")
	writeTree(t, dir, harborFiles("cli/nosolve", "[environment]\nmemory_mb = 64\n", map[string]string{
		"tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
	}))
	r := headroom(t, "tasks", "validate", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "ok    cli/nosolve") || !strings.Contains(r.stdout, "note: no agent solves it") || !strings.Contains(r.stdout, "--agents nop") {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
}

// harborFiles are a Harbor task directory's files: task.toml naming the
// task, with rest after its [task] table; an instruction; a Dockerfile
// FROM the real-task image; a verifier. files add to them or replace
// them (no solution unless given).
func harborFiles(name, rest string, files map[string]string) map[string]string {
	all := map[string]string{
		"task.toml":              "schema_version = \"1.1\"\n[task]\nname = \"" + name + "\"\n" + rest,
		"instruction.md":         "Do it.\n",
		"environment/Dockerfile": "FROM headroom-debian:bookworm\n",
		"tests/test.sh":          "#!/bin/bash\n",
	}
	maps.Copy(all, files)
	return all
}

// writeTree writes files (paths under dir, their directories made).
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The Kubernetes flags are the commands' that open a backend: calibrate
// or report listed --kubeconfig and --pod-probe as if they used them.
func TestBackendFlagsOnlyWhereABackendOpens(t *testing.T) {
	help := func(args ...string) string {
		r := headroom(t, append(args, "--help")...)
		if r.code != 0 {
			t.Fatalf("%v --help: exit %d %s", args, r.code, r.stderr)
		}
		return r.stdout
	}
	for _, c := range [][]string{{}, {"run"}, {"demo"}, {"doctor"}, {"clean"}, {"images", "build"}} {
		if h := help(c...); !strings.Contains(h, "--kubeconfig") || !strings.Contains(h, "--pod-probe") || !strings.Contains(h, "--backend") {
			t.Errorf("headroom %v opens a backend, its help lacks the backend's flags:\n%s", c, h)
		}
	}
	for _, c := range [][]string{{"calibrate"}, {"report"}, {"compare"}, {"tasks", "list"}, {"tasks", "validate"}, {"tasks", "audit"}, {"agents", "list"}, {"import", "harbor"}} {
		if h := help(c...); strings.Contains(h, "--kubeconfig") || strings.Contains(h, "--namespace") || strings.Contains(h, "--backend") {
			t.Errorf("headroom %v opens no backend, its help lists the backend's flags:\n%s", c, h)
		}
	}
	if h := help("tasks", "show"); !strings.Contains(h, "--backend") || strings.Contains(h, "--kubeconfig") {
		t.Errorf("tasks show takes --backend alone:\n%s", h)
	}
	if r := headroom(t, "report", "--kubeconfig", "x"); r.code != 2 || !strings.Contains(r.stderr, "unknown flag: --kubeconfig") {
		t.Errorf("report --kubeconfig: exit %d %s", r.code, r.stderr)
	}
	r := headroom(t, "tasks", "show", "builtin/compile-project", "--backend", "kubernetes")
	if r.code != 0 || strings.Contains(r.stdout, "Docker") || !strings.Contains(r.stdout, "limits.memory=") {
		t.Errorf("tasks show --backend kubernetes: exit %d\n%s", r.code, r.stdout)
	}
}

func TestTasksListAndShow(t *testing.T) {
	r := headroom(t, "tasks", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "builtin/bn-fit-modify") || !strings.Contains(r.stdout, "heavy,lean") {
		t.Errorf("list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = headroom(t, "tasks", "show", "bn-fit-modify")
	if r.code != 0 || !strings.Contains(r.stdout, "--memory=134217728 --memory-swap=134217728 --memory-reservation=134217728") {
		t.Errorf("show: %d\n%s", r.code, r.stdout)
	}
}

func TestSpecLargerThanTheHostIsRefused(t *testing.T) {
	needEngine(t)
	r := headroom(t, "run", "--tasks-dir", "testdata/huge", "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "cli/huge guarantees 100TiB but this host can guarantee at most") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

func noContainersLeft(t *testing.T, experiment string) {
	t.Helper()
	if n := containersOf(t, experiment); n > 0 {
		t.Errorf("%d container(s) of %s left behind", n, experiment)
	}
}

// containersOf counts the engine's containers of an experiment, in one of
// the given states if any are given.
func containersOf(t *testing.T, experiment string, states ...string) int {
	t.Helper()
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	f := filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+experiment))
	for _, s := range states {
		f.Add("status", s)
	}
	left, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(left)
}

// --keep names what it kept as each trial ends, by name and id, so it
// can be found again (it never said which), and the clean that takes it.
func TestKeepNamesTheKeptContainer(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", "testdata/tasks", "--tasks", "tiny", "--ratios", "uncapped", "--repeats", "1", "--keep", "--out", root)
	m, err := store.ReadManifest(onlyExperiment(t, root))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	f := filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+m.ID))
	kept, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range kept {
			_ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
		}
	})
	if r.code != 0 || len(kept) != 1 {
		t.Fatalf("exit %d, %d container(s) kept\n%s", r.code, len(kept), r.stderr)
	}
	// The command that removes it names the --out: `clean` alone takes
	// every dead run's leftovers on the engine (a new user's).
	want := fmt.Sprintf("kept for inspection: container headroom-%s-t0001 (id %s); `headroom clean --out %s` removes them", m.ID, kept[0].ID[:12], root)
	if !strings.Contains(r.stderr, want) {
		t.Errorf("no line %q:\n%s", want, r.stderr)
	}
}

func onlyExperiment(t *testing.T, root string) string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 1 {
		t.Fatalf("experiments in %s: %v %v", root, entries, err)
	}
	return filepath.Join(root, entries[0].Name())
}

// jsonMatrix reads `run --format json`'s output: the document and each
// ratio's outcomes.
func jsonMatrix(t *testing.T, stdout string) (report.JSONReport, map[string][]model.Outcome) {
	t.Helper()
	var doc report.JSONReport
	if err := report.ReadJSON([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not the JSON matrix: %v\n%s", err, stdout)
	}
	got := map[string][]model.Outcome{}
	for _, c := range doc.Cells {
		got[c.Ratio.String()] = c.Outcomes
	}
	return doc, got
}

func TestHeadlessSweepEndToEnd(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", "testdata/tasks", "--tasks", "tiny", "--ratios", "1,uncapped", "--repeats", "2", "--seed", "5", "--format", "json", "--out", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	doc, got := jsonMatrix(t, r.stdout)
	if fmt.Sprint(got["1x"]) != "[oom-killed oom-killed]" || fmt.Sprint(got["uncapped"]) != "[passed passed]" {
		t.Errorf("matrix %v", got)
	}
	if !strings.Contains(r.stderr, "OOM  ") || !strings.Contains(r.stderr, "killed in step install") {
		t.Errorf("progress should show the OOM kill as it lands:\n%s", r.stderr)
	}
	dir := onlyExperiment(t, root)
	results, torn, err := store.ReadTrials(dir)
	if err != nil || torn || len(results) != 4 {
		t.Fatalf("trials.jsonl: %d records, torn %v, %v", len(results), torn, err)
	}
	m, err := store.ReadManifest(dir)
	if err != nil || m.Status != "finished" || m.Seed != 5 || m.Engine.Version == "" || m.Host.MemoryBytes == 0 || len(m.Tasks) != 1 || !strings.Contains(m.Tasks[0].Reproduce["1x"], "--memory=") || !strings.Contains(m.Tasks[0].Reproduce["1x"], "--cap-drop ALL") || m.Tasks[0].ImageID == "" {
		t.Errorf("manifest %+v %v", m, err)
	}
	// The trace: compacted when the trial ended (samples.hrt), or the CSV
	// it streamed to.
	_, errHRT := os.Stat(filepath.Join(dir, "trials", results[0].ID, store.SamplesCompact))
	if _, err := os.Stat(filepath.Join(dir, "trials", results[0].ID, store.SamplesCSV)); err != nil && errHRT != nil {
		t.Error(err)
	}
	noContainersLeft(t, doc.Experiment)

	// The experiment is reported, plotted, calibrated and compared later.
	for _, f := range []string{"table", "markdown", "csv", "json"} {
		if r := headroom(t, "report", dir, "--format", f); r.code != 0 || !strings.Contains(r.stdout, "cli/tiny") {
			t.Errorf("report --format %s: exit %d\n%s%s", f, r.code, r.stdout, r.stderr)
		}
	}
	plot := filepath.Join(t.TempDir(), "shape.svg")
	trialPlot := filepath.Join(t.TempDir(), "trial.png")
	trialPlot2 := filepath.Join(t.TempDir(), "trial2.svg")
	// --plot-trial given twice draws both (it used to keep the last).
	if r := headroom(t, "report", doc.Experiment, "--out", root, "--plot", plot, "--plot-trial", results[0].ID+"="+trialPlot, "--plot-trial", results[1].ID+"="+trialPlot2); r.code != 0 {
		t.Errorf("report --plot: exit %d %s", r.code, r.stderr)
	}
	for _, f := range []string{plot, trialPlot, trialPlot2} {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	r = headroom(t, "calibrate", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "cli/tiny") || !strings.Contains(r.stdout, "raise") {
		t.Errorf("calibrate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := headroom(t, "compare", dir, dir); r.code != 2 || !strings.Contains(r.stderr, "are the same experiment") {
		t.Errorf("compare E E: exit %d %s", r.code, r.stderr)
	}
	r = headroom(t, "compare", dir, twinExperiment(t, dir))
	// Both questions, labelled: the paired p and the pooled exact test
	// (an experiment against its twin: nothing changed, p 1 for both;
	// unsure, as two trials a cell rule out no difference past 3pp).
	if r.code != 0 || !strings.Contains(r.stdout, "Setups match") || !strings.Contains(r.stdout, " 0pp ") || strings.Contains(r.stdout, "+0pp") || !strings.Contains(r.stdout, "pooled p") ||
		!regexp.MustCompile(`1\.000 +1 +unsure +1\.000`).MatchString(r.stdout) || !strings.Contains(r.stdout, "did this suite's score change?") {
		t.Errorf("compare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := headroom(t, "report", "no-such-experiment", "--out", root); r.code != 2 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("unknown experiment: exit %d %q", r.code, r.stderr)
	}
	if r := headroom(t, "report", dir, "--baseline", "0.5x"); r.code != 2 {
		t.Errorf("bad baseline: exit %d", r.code)
	}
}

// --scale cpu lifts the memory limit the ratio would set: the tiny task
// killed at 1x above passes there, and the manifest and the trial's
// policy record the scale (the console's Setup hands the same to the
// engine).
func TestScaleCPULeavesMemoryUnlimited(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", "testdata/tasks", "--tasks", "tiny", "--ratios", "1", "--scale", "cpu", "--repeats", "1", "--seed", "5", "--format", "json", "--out", root)
	if r.code != 0 || !strings.Contains(r.stderr, "scaling cpu") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	dir := onlyExperiment(t, root)
	m, err := store.ReadManifest(dir)
	if err != nil || m.Scale != model.ScaleCPU {
		t.Fatalf("manifest scale %q, %v", m.Scale, err)
	}
	results, _, err := store.ReadTrials(dir)
	if err != nil || len(results) != 1 {
		t.Fatalf("%d trials, %v", len(results), err)
	}
	p := results[0].Trial.Policy
	if results[0].Outcome != model.Passed || p.Scale != model.ScaleCPU || p.HardLimitBytes != 0 || p.LimitCPUs == 0 {
		t.Errorf("outcome %s policy %+v: want passed, CPU limited, memory not", results[0].Outcome, p)
	}
	noContainersLeft(t, m.ID)
}

func TestInterruptCancelsRemovesAndExits130(t *testing.T) {
	interruptSweep(t, readersStay)
}

// `headroom run | grep` then Ctrl-C: the terminal's SIGINT reaches grep
// too, which is gone before the report is written. The sweep still ends
// as an interrupted one: records, the resume hint, exit 130 (not 141,
// SIGPIPE, mid-shutdown).
func TestInterruptWithStdoutsReaderGoneExits130(t *testing.T) {
	interruptSweep(t, stdoutGone)
}

// `headroom run 2>&1 | grep` then Ctrl-C: the progress lines of the
// cancelled trials have no reader either. Unhandled, the first of them
// ended headroom with SIGPIPE before those trials were recorded.
func TestInterruptWithBothReadersGoneRecordsTheCancelled(t *testing.T) {
	interruptSweep(t, bothGone)
}

// Who reads headroom's output when Ctrl-C comes.
const (
	readersStay = iota
	stdoutGone  // run | grep
	bothGone    // run 2>&1 | grep
)

func interruptSweep(t *testing.T, readers int) {
	pipeGone := readers != readersStay
	needEngine(t)
	root := t.TempDir()
	since := time.Now().Add(-time.Second)
	cmd := exec.Command(binary, "run", "--tasks-dir", "testdata/tasks", "--tasks", "long", "--ratios", "1,2", "--repeats", "2", "--out", root)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var reader *os.File
	if pipeGone {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, reader = w, r
		defer w.Close()
		defer r.Close()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if pipeGone {
		cmd.Stdout.(*os.File).Close() // the child holds its own copy
	}
	sc := bufio.NewScanner(stderr)
	var experiment string
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 1 && f[0] == "experiment" {
			experiment = strings.TrimSuffix(f[1], ":")
			break
		}
	}
	if experiment == "" {
		t.Fatal("no experiment line")
	}
	// Wait, with a deadline, for both concurrent trials' containers to start.
	cli, _ := docker.Connect()
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	msgs, errs := cli.Events(ctx, events.ListOptions{Since: strconv.FormatInt(since.Unix(), 10), Filters: filters.NewArgs(
		filters.Arg("label", runner.LabelExperiment+"="+experiment), filters.Arg("event", "start"))})
	for started := 0; started < 2; {
		select {
		case <-msgs:
			started++
		case err := <-errs:
			t.Fatalf("trials never started: %v", err)
		}
	}
	if reader != nil {
		reader.Close()
	}
	if readers == bothGone {
		stderr.Close()
	}
	cmd.Process.Signal(syscall.SIGINT)
	var rest strings.Builder
	drained := make(chan struct{})
	go func() {
		for readers != bothGone && sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
		close(drained)
	}()
	<-drained
	err = cmd.Wait()
	// The hint must work as printed: the run used --out.
	if want := "\n  headroom run --resume " + experiment + " --out " + root + "\n"; readers != bothGone && !strings.Contains(rest.String(), want) {
		t.Errorf("resume hint without %s:\n%s", want, rest.String())
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want 130", err)
	}
	results, _, err := store.ReadTrials(onlyExperiment(t, root))
	if err != nil || len(results) != 4 {
		t.Fatalf("%d results %v", len(results), err)
	}
	for _, r := range results {
		if r.Outcome != model.Cancelled {
			t.Errorf("%s: %s", r.ID, r.Outcome)
		}
	}
	m, _ := store.ReadManifest(onlyExperiment(t, root))
	if m.Status != "interrupted" {
		t.Errorf("manifest status %q", m.Status)
	}
	noContainersLeft(t, experiment)
}

// The acceptance sweep: the whole built-in catalog × {1x, 3x, uncapped} ×
// 3 repeats kills many at 1x, fewer at 3x, none uncapped, and holds a task
// that passes only beyond 3x beside one no ratio affects.
func TestBuiltinCatalogShowsTheShape(t *testing.T) {
	needEngine(t)
	if testing.Short() {
		t.Skip("the full catalog sweep takes about two minutes (126 trials; 5+ under load)")
	}
	root := t.TempDir()
	r := headroomWithin(t, 20*time.Minute, "run", "--ratios", "1,3,uncapped", "--repeats", "3", "--seed", "1", "--format", "json", "--out", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	defer noInternalCommandLines(t, root, r)
	var doc report.JSONReport
	if err := report.ReadJSON([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	kills := map[string]int{}
	passesOnlyUncapped := false
	insensitive := false
	byRow := map[string]map[string]report.JSONCell{}
	for _, c := range doc.Cells {
		for _, o := range c.Outcomes {
			if o == model.OOMKilled || o == model.PassedAfterOOM {
				kills[c.Ratio.String()]++
			}
		}
		row := c.Task + "·" + c.Agent
		if byRow[row] == nil {
			byRow[row] = map[string]report.JSONCell{}
		}
		byRow[row][c.Ratio.String()] = c
	}
	for _, cells := range byRow {
		if cells["3x"].Successes == 0 && cells["uncapped"].Successes == 3 {
			passesOnlyUncapped = true
		}
		if fmt.Sprint(cells["1x"].Outcomes) == fmt.Sprint(cells["uncapped"].Outcomes) && cells["1x"].InfraErrors == 0 {
			insensitive = true
		}
	}
	t.Logf("kills by ratio: %v\n%s", kills, r.stderr)
	if !(kills["1x"] > kills["3x"] && kills["uncapped"] == 0) {
		t.Errorf("kills by ratio %v: want many at 1x, fewer at 3x, none uncapped", kills)
	}
	if !passesOnlyUncapped || !insensitive {
		t.Errorf("want a task that passes only beyond 3x (%v) and one no ratio affects (%v)", passesOnlyUncapped, insensitive)
	}
	noContainersLeft(t, doc.Experiment)
}

// noInternalCommandLines checks a built-in sweep's whole output as a
// person reads it, the headless lines, the report and the records'
// display fields (activities, kills, their process trees): a built-in
// step's process is named by the step's own command, never by headroom's
// in-container argv (hr-workload run --step NAME --profile {JSON}).
func noInternalCommandLines(t *testing.T, root string, run result) {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 1 {
		t.Fatalf("experiments under %s: %v %v", root, entries, err)
	}
	exp := filepath.Join(root, entries[0].Name())
	rep := headroom(t, "report", exp)
	if rep.code != 0 {
		t.Fatalf("report: exit %d\n%s", rep.code, rep.stderr)
	}
	texts := map[string]string{"run's stderr": run.stderr, "run's stdout": run.stdout, "the report": rep.stdout + rep.stderr}
	data, err := os.ReadFile(filepath.Join(exp, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	shown, kills := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var tr model.TrialResult
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range tr.Activities {
			names = append(names, a.Command)
		}
		for _, o := range tr.OOMs {
			names = append(names, o.Command)
			for _, p := range o.Tree {
				names = append(names, p.Command)
			}
			if o.Command != "" {
				kills++
			}
		}
		shown += len(names)
		texts[tr.ID+"'s record"] = strings.Join(names, "\n")
	}
	if shown == 0 || kills == 0 {
		t.Errorf("the records name %d processes and %d killed ones: the check saw nothing to check", shown, kills)
	}
	if !strings.Contains(run.stderr, "pip install pandas networkx scikit-learn") {
		t.Errorf("the headless lines never name the showcase's install by its command:\n%s", run.stderr)
	}
	for what, text := range texts {
		for _, internal := range []string{"--profile {", "hr-workload run"} {
			if i := strings.Index(text, internal); i >= 0 {
				t.Errorf("%s shows headroom's internal command line %q: …%s…", what, internal, text[max(i-80, 0):min(i+80, len(text))])
			}
		}
	}
}

// SIGKILL mid-sweep: what finished is on disk intact, the next start reaps
// the dead run's containers, and --resume completes exactly the missing
// trials with the same seeds.
func TestSIGKILLThenReapThenResume(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	cmd := exec.Command(binary, "run", "--tasks-dir", "testdata/resume", "--ratios", "1,uncapped", "--repeats", "2", "--seed", "11", "--concurrency", "2", "--out", root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait, with a deadline, for a finished trial on disk and a slow one
	// running, then kill without warning.
	var dir string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		entries, _ := os.ReadDir(root)
		if len(entries) == 1 {
			dir = filepath.Join(root, entries[0].Name())
			if rs, _, err := store.ReadTrials(dir); err == nil && len(rs) >= 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no trial finished")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	before, torn, err := store.ReadTrials(dir)
	if err != nil {
		t.Fatalf("trials.jsonl unreadable after SIGKILL: %v", err)
	}
	t.Logf("%d trial(s) recorded before the kill (torn last line: %v)", len(before), torn)
	if len(before) >= 8 {
		t.Skip("the sweep finished before the kill; nothing to resume")
	}
	id := filepath.Base(dir)
	// A container the engine was still creating when headroom died appears
	// only later: the resume removes it when its name is wanted again,
	// without the reaper's message; one whose removal the dead run had
	// asked for goes by itself. Those standing must be reaped.
	leftovers := containersOf(t, id, "created", "running", "exited")
	r := headroom(t, "run", "--resume", id, "--out", root, "--format", "json")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	if leftovers > 0 && !strings.Contains(r.stderr, "removed leftover container") {
		t.Errorf("the resume should reap the killed run's containers and say so:\n%s", r.stderr)
	}
	after, _, err := store.ReadTrials(dir)
	if err != nil || len(after) != 8 {
		t.Fatalf("%d trials after resume (%v), want all 8", len(after), err)
	}
	seen := map[string]bool{}
	for _, b := range before {
		seen[b.ID] = true
	}
	m, _ := store.ReadManifest(dir)
	if m.Status != "finished" || len(m.Resumes) != 1 {
		t.Fatalf("manifest status %q resumes %+v", m.Status, m.Resumes)
	}
	for _, id := range m.Resumes[0].Rerun {
		if seen[id] {
			for _, b := range before {
				if b.ID == id && b.Outcome != model.Cancelled && b.Outcome != model.InfraError {
					t.Errorf("resume reran %s, which had finished as %s", id, b.Outcome)
				}
			}
		}
	}
	if len(m.Resumes[0].Interrupted)+len(before) != 8 {
		t.Errorf("interrupted %v + %d recorded != 8", m.Resumes[0].Interrupted, len(before))
	}
	for _, a := range after {
		if a.Outcome != model.Passed {
			t.Errorf("%s: %s (%s)", a.ID, a.Outcome, a.Reason)
		}
		want := model.TrialSeed(11, a.Task, a.Agent, a.Repeat)
		if a.Seed != want {
			t.Errorf("%s seed %d, want the planned %d", a.ID, a.Seed, want)
		}
	}
	noContainersLeft(t, id)
	if r := headroom(t, "run", "--resume", id, "--out", root); r.code != 2 || !strings.Contains(r.stderr, "nothing to rerun") {
		t.Errorf("resuming a complete experiment: exit %d %q", r.code, r.stderr)
	}
	if r := headroom(t, "run", "--resume", id, "--out", root, "--ratios", "2"); r.code != 2 || !strings.Contains(r.stderr, "cannot change it") {
		t.Errorf("resume with a new ratio: exit %d %q", r.code, r.stderr)
	}
	// The agent settings are the manifest's: a --pass-reward given was
	// ignored, exit 0 (the twenty-seventh attacker's 4).
	for _, flag := range [][]string{{"--pass-reward", "0.5"}, {"--timeout-scale", "0.1"}} {
		if r := headroom(t, append([]string{"run", "--resume", id, "--out", root}, flag...)...); r.code != 2 || !strings.Contains(r.stderr, flag[0]+" cannot change it") {
			t.Errorf("resume with %v: exit %d %q", flag, r.code, r.stderr)
		}
	}
}

func TestUnwritableOutputDirectoryFailsBeforeAnyTrial(t *testing.T) {
	needEngine(t)
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o600)
	r := headroom(t, "run", "--tasks-dir", "testdata/resume", "--tasks", "quick", "--ratios", "1", "--repeats", "1", "--out", filepath.Join(file, "sub"))
	if r.code == 0 || !strings.Contains(r.stderr, "--out "+filepath.Join(file, "sub")) || !strings.Contains(r.stderr, "name a directory headroom can create and write to") || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

// copyDir copies a fixture directory tree, so a test can change it.
// twinExperiment copies an experiment under another id: the same trials,
// a run compare accepts as another (it refuses one experiment twice).
func twinExperiment(t *testing.T, dir string) string {
	t.Helper()
	twin := filepath.Join(t.TempDir(), filepath.Base(dir)+"-twin")
	copyDir(t, dir, twin)
	path := filepath.Join(twin, store.ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = fmt.Sprint(m["id"], "-twin")
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Each record names its experiment: the twin's name the twin.
	recs := filepath.Join(twin, store.TrialsFile)
	data, err = os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(fmt.Sprint(m["id"]), "-twin")
	data = bytes.ReplaceAll(data, []byte(`"experiment":"`+id+`"`), []byte(`"experiment":"`+id+`-twin"`))
	if err := os.WriteFile(recs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return twin
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A suite with a task whose image does not build and one lacking the
// asked agent: the good task's trials run and pass, the two others' are
// infra-errors saying why (not in the rates, listed in the report and
// the manifest), nothing is left behind, and the exit code is 3. Once
// the Dockerfile is fixed, a resume runs its trials. --fail-fast refuses
// the sweep before any trial, as before.
func TestBrokenTasksDoNotStopTheSweep(t *testing.T) {
	needEngine(t)
	suite := t.TempDir()
	copyDir(t, "testdata/brokensuite", suite)
	root := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", suite, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "2", "--seed", "3", "--format", "json", "--out", root)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	var doc report.JSONReport
	if err := report.ReadJSON([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, r.stdout)
	}
	if len(doc.Cells) != 1 || doc.Cells[0].Task != "cli/good" || fmt.Sprint(doc.Cells[0].Outcomes) != "[passed passed]" {
		t.Errorf("cells %+v, want cli/good passed twice", doc.Cells)
	}
	if len(doc.Ratios) != 1 || doc.Ratios[0].Counted != 2 || doc.Ratios[0].SuccessRate == nil || *doc.Ratios[0].SuccessRate != 1 {
		t.Errorf("rates %+v: the tasks that could not run must stay out of them", doc.Ratios)
	}
	why := map[string]string{}
	for _, n := range doc.NotRun {
		why[n.Task] = n.Reason
	}
	if w := why["cli/broken"]; !strings.Contains(w, "cli/broken") || !strings.Contains(w, "Unable to locate package no-such-package") || !strings.Contains(w, "100") {
		t.Errorf("cli/broken's reason %q should name the task, the build's last lines and its exit code", w)
	}
	if w := why["cli/nosolution"]; !strings.Contains(w, "no agent oracle") || !strings.Contains(w, "nop") {
		t.Errorf("cli/nosolution's reason %q should name the agent asked and the agents it has", w)
	}
	notRun := 0
	for _, tr := range doc.Trials {
		if tr.Task != "cli/good" {
			notRun++
			if tr.Outcome != model.InfraError || !tr.TaskNotRun || tr.ContainerID != "" {
				t.Errorf("%s %s: %s not-run %v container %q", tr.ID, tr.Task, tr.Outcome, tr.TaskNotRun, tr.ContainerID)
			}
		}
	}
	if notRun != 4 {
		t.Errorf("%d not-run trials, want 4 (2 tasks × 2 repeats)", notRun)
	}
	if !strings.Contains(r.stderr, "2 tasks could not run") || strings.Count(r.stderr, "      could not run: ") != 2 {
		t.Errorf("stderr should say each task's reason once and sum up:\n%s", r.stderr)
	}
	dir := onlyExperiment(t, root)
	m, err := store.ReadManifest(dir)
	if err != nil || m.Status != "finished" {
		t.Fatalf("manifest %v %v", m.Status, err)
	}
	for _, te := range m.Tasks {
		if (te.NotRun != "") != (te.Name != "cli/good") {
			t.Errorf("manifest task %s not_run %q", te.Name, te.NotRun)
		}
	}
	noContainersLeft(t, doc.Experiment)
	if r := headroom(t, "report", dir); r.code != 0 || !strings.Contains(r.stdout, "Could not run") || !strings.Contains(r.stdout, "cli/broken · oracle") {
		t.Errorf("report table: exit %d\n%s", r.code, r.stdout)
	}

	// Fixed, the broken task runs on resume; the agentless one still cannot.
	if err := os.WriteFile(filepath.Join(suite, "broken", "environment", "Dockerfile"), []byte("FROM headroom-debian:bookworm\nWORKDIR /app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = headroom(t, "run", "--resume", doc.Experiment, "--out", root, "--format", "json")
	if r.code != 3 || !strings.Contains(r.stderr, "rerunning 4 trials") || !strings.Contains(r.stderr, "still cannot run: cli/nosolution") {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	after, _, err := store.ReadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range after {
		switch {
		case tr.Task == "cli/nosolution" && !tr.TaskNotRun:
			t.Errorf("%s: %s, want still not run", tr.ID, tr.Outcome)
		case tr.Task != "cli/nosolution" && tr.Outcome != model.Passed:
			t.Errorf("%s %s after the fix: %s (%s)", tr.ID, tr.Task, tr.Outcome, tr.Reason)
		}
	}
	if m, _ := store.ReadManifest(dir); len(m.Tasks) == 3 {
		for _, te := range m.Tasks {
			if (te.NotRun != "") != (te.Name == "cli/nosolution") {
				t.Errorf("after the resume, manifest task %s not_run %q", te.Name, te.NotRun)
			}
		}
	}
	noContainersLeft(t, doc.Experiment)

	// --fail-fast: refused before any trial, no experiment made.
	ffRoot := t.TempDir()
	r = headroom(t, "run", "--tasks-dir", "testdata/brokensuite", "--tasks", "cli/good,cli/broken", "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--fail-fast", "--out", ffRoot)
	if r.code != 1 || !strings.Contains(r.stderr, "cli/broken") || !strings.Contains(r.stderr, "no-such-package") && !strings.Contains(r.stderr, "100") {
		t.Errorf("--fail-fast: exit %d\n%s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(ffRoot); len(entries) != 0 {
		t.Errorf("--fail-fast left an experiment: %v", entries)
	}
}

// An unknown --backend is the user's mistake: exit 2, naming the
// backends there are, before anything connects.
func TestUnknownBackendIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"--backend", "nomad", "doctor"}, {"run", "--backend", "nomad", "--tasks", "tiny", "--tasks-dir", "testdata/tasks"}, {"clean", "--backend", "nomad"}} {
		r := headroom(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, `--backend nomad: no such backend; use one of docker`) {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// A Dockerfile with an instruction no builder knows is the task file's
// error (exit 2), naming the line: validate said "ok" beside a warning,
// and only the build refused it (a new user's RUNN).
func TestValidateRefusesADockerfileNoBuilderReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runn")
	writeTree(t, dir, harborFiles("cli/runn", "", map[string]string{
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nRUNN echo hi\n",
	}))
	r := headroom(t, "tasks", "validate", dir)
	if r.code != 2 || !strings.Contains(r.stdout, "error cli/runn") || !strings.Contains(r.stdout, "Dockerfile:2: unknown instruction \"RUNN\"") || strings.Contains(r.stdout, "ok    cli/runn") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A separate verifier's Dockerfile is one of the task's builds: validate
// read only the task's image and its services', said "ok", and the
// verifier's build was refused at the first trial.
func TestValidateReadsTheSeparateVerifiersDockerfile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vrunn")
	writeTree(t, dir, harborFiles("cli/vrunn", "[verifier]\nenvironment_mode = \"separate\"\n", map[string]string{
		"tests/Dockerfile": "FROM headroom-debian:bookworm\nRUNN echo hi\n",
	}))
	r := headroom(t, "tasks", "validate", dir)
	if r.code != 2 || !strings.Contains(r.stdout, "error cli/vrunn") || !strings.Contains(r.stdout, "Dockerfile:2: unknown instruction \"RUNN\"") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A resume runs the rest as the experiment's trials ran: `run
// --trace=false` stopped and resumed by the line headroom printed (which
// names no such flag) recorded untraced trials and traced ones in one
// cell (the twenty-third attacker's 5). Left out, the flag takes the
// manifest's value; given otherwise, it is refused.
func TestResumeRunsTheTrialsAsTheExperimentRanThem(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", "testdata/resume", "--tasks", "cli/quick", "--ratios", "1", "--repeats", "3", "--concurrency", "1", "--trace=false", "--out", root)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Fatalf("%d experiments", len(entries))
	}
	dir := filepath.Join(root, entries[0].Name())
	// The last two trials' records go, as if the run had been stopped.
	enginetest.KeepRecords(t, dir, 1)
	if r := headroom(t, "run", "--resume", entries[0].Name(), "--out", root, "--trace"); r.code != 2 || !strings.Contains(r.stderr, "--trace=false") {
		t.Errorf("a resume with --trace of an untraced experiment: exit %d\n%s", r.code, r.stderr)
	}
	if r := headroom(t, "run", "--resume", entries[0].Name(), "--out", root); r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	recs, _, err := store.ReadTrials(dir)
	if err != nil || len(recs) != 3 {
		t.Fatalf("%d records (%v)", len(recs), err)
	}
	for _, rec := range recs {
		if !rec.Untraced {
			t.Errorf("%s traced after the resume: one cell holds both ways", rec.ID)
		}
	}
	noContainersLeft(t, entries[0].Name())
}

// A misspelt key in another harness's file loads, as that harness loads
// it, but validate does not pass it: the task would run from the
// default's 2 GiB, 32 times the 64 MiB meant (a new user's memroy_mb,
// exit 0 beside a warning).
func TestValidateDoesNotPassAHarnessFilesTypo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typo")
	writeTree(t, dir, harborFiles("cli/typo", "[environment]\nmemroy_mb = 64\n", map[string]string{
		"solution/solve.sh": "#!/bin/bash\n",
	}))
	r := headroom(t, "tasks", "validate", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "task.toml:5: environment.memroy_mb: did you mean memory_mb?") || !strings.Contains(r.stderr, "a likely typo in 1 task file") ||
		!strings.Contains(r.stdout, "typo  cli/typo") || strings.Contains(r.stdout, "ok    cli/typo") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without the typo it passes.
	writeTree(t, dir, map[string]string{"task.toml": "schema_version = \"1.1\"\n[task]\nname = \"cli/typo\"\n[environment]\nmemory_mb = 64\n"})
	if r := headroom(t, "tasks", "validate", dir); r.code != 0 {
		t.Errorf("fixed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A task named with --tasks whose file failed to load is said to have
// failed, by its file: the run led with "unknown task" and called the
// load failure a warning (a new user's).
func TestRunNamesTheFileOfANamedTaskThatFailed(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"bad.toml": "[task]\nname = \"cli/bad\"\n[environment]\nmemory = \"64MB\n"})
	r := headroom(t, "run", "--tasks-dir", dir, "--tasks", "cli/bad", "--ratios", "1", "--repeats", "1", "--out", t.TempDir())
	if want := `task "cli/bad" did not load: ` + filepath.Join(dir, "bad.toml") + " failed"; r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "unknown task") {
		t.Errorf("exit %d, want %q\n%s", r.code, want, r.stderr)
	}
}

// A run refuses a build no builder reads before any container, as
// validate does, in validate's words: it passed the task on to its first
// trial, whose infra error was Docker's raw parse error (a new user's).
func TestRunRefusesADockerfileNoBuilderReads(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"runn/task.toml":              "schema_version = \"1.1\"\n[task]\nname = \"cli/runn\"\n",
		"runn/instruction.md":         "Do it.\n",
		"runn/environment/Dockerfile": "FROM headroom-debian:bookworm\nRUNN echo hi\n",
		"runn/tests/test.sh":          "#!/bin/bash\n",
	})
	out := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", dir, "--tasks", "runn", "--agents", "nop", "--ratios", "1", "--repeats", "1", "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, `Dockerfile:2: unknown instruction "RUNN"`) || !strings.Contains(r.stderr, `task "runn" did not load`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("an experiment was started: %v", entries)
	}
}

// A mistyped flag is answered with the flag most likely meant (a new
// user's --ratio got "unknown flag" alone); a name near none gets none.
func TestUnknownFlagSuggestsTheNearest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--ratio", "1"}, "unknown flag: --ratio; did you mean --ratios? (`headroom run --help` lists the flags)"},
		{[]string{"tasks", "validate", "--tasks-dri", "x"}, "did you mean --tasks-dir? (`headroom tasks validate --help`"},
		{[]string{"run", "--repeat=3"}, "did you mean --repeats?"},
	} {
		if r := headroom(t, tc.args...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %q\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
	if r := headroom(t, "run", "--zzzzzz"); r.code != 2 || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("--zzzzzz: exit %d\n%s", r.code, r.stderr)
	}
}

// A task of the directory that no agent solves (no solution/solve.sh) is
// left out by --skip-broken, said so; without the flag the sweep is
// refused naming it and the flag. --skip-broken refused the whole sweep
// for it, which validate had passed with a note (a new user's).
func TestSkipBrokenLeavesOutATaskNoAgentSolves(t *testing.T) {
	needEngine(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"nosolve/task.toml":      "schema_version = \"1.1\"\n[task]\nname = \"cli/nosolve\"\n",
		"nosolve/instruction.md": "Do it.\n",
		"nosolve/tests/test.sh":  "#!/bin/bash\n",
		"quick.toml":             "[task]\nname = \"cli/solved\"\n[environment]\nimage = \"builtin\"\nmemory = \"64M\"\n[verifier]\nworkload = { duration_ms = 10, base_mb = 1 }\n[[agents]]\nname = \"a\"\n[[agents.steps]]\nname = \"s\"\nworkload = { duration_ms = 10, base_mb = 1 }\n",
	})
	writeTree(t, dir, map[string]string{"nosolve/environment/Dockerfile": "FROM headroom-debian:bookworm\n"})
	out := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", dir, "--ratios", "1", "--repeats", "1", "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, "1 task (cli/nosolve) has no agent that solves it") || !strings.Contains(r.stderr, "--skip-broken") {
		t.Errorf("without --skip-broken: exit %d\n%s", r.code, r.stderr)
	}
	r = headroom(t, "run", "--tasks-dir", dir, "--ratios", "1", "--repeats", "1", "--skip-broken", "--out", out)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: skipped cli/nosolve: no agent solves it") || !strings.Contains(r.stderr, "1 trial") {
		t.Errorf("--skip-broken: exit %d\n%s", r.code, r.stderr)
	}
}
