package taskfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/verdict"
	"go.yaml.in/yaml/v3"
)

// Where a Terminal-Bench 2.0 / Harbor task's files go in its container,
// as Harbor puts them.
const (
	SolutionDir    = "/solution"
	TestsDir       = "/tests"
	VerifierLogDir = "/logs/verifier"
	// TestStdoutFile is where Harbor's verifier tees test.sh's stdout.
	TestStdoutFile = VerifierLogDir + "/test-stdout.txt"
	AgentLogDir    = "/logs/agent"
	// OracleLogFile is where Harbor's oracle sends solve.sh's stdout and
	// stderr (`set -o pipefail; bash solve.sh 2>&1 | tee
	// /logs/agent/oracle.txt`); a verifier may read it.
	OracleLogFile = AgentLogDir + "/oracle.txt"
	// InstructionFile is where an agent finds its instruction.
	InstructionFile = "/headroom/instruction.md"
)

// Agents every task directory gets.
const (
	AgentOracle = "oracle" // runs the task's reference solution
	AgentNop    = "nop"    // does nothing: what the verifier says of the untouched environment
)

// Defaults of the older terminal-bench format, which has no resources.
const (
	defaultBuildTimeout  = 10 * time.Minute
	tbOldAgentTimeout    = 360 * time.Second
	tbOldVerifierTimeout = 60 * time.Second
)

// TaskDirKind says whether dir is a task directory and of which format:
// model.FormatHarbor (task.toml beside instruction.md, environment/,
// tests/ or solution/), model.FormatTerminalBench (task.yaml), or "".
func TaskDirKind(dir string) string {
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	switch {
	case has("task.toml") && (has("instruction.md") || has("environment") || has("tests") || has("solution")):
		return model.FormatHarbor
	case has("task.yaml"):
		return model.FormatTerminalBench
	}
	return ""
}

// LoadTaskDir loads one task directory of either Terminal-Bench format.
// Messages and the task's source name the directory as given; the files
// it copies into containers and builds from are absolute, so that a
// resume may run from elsewhere.
func LoadTaskDir(dir string) (Loaded, error) {
	var l Loaded
	var err error
	switch TaskDirKind(dir) {
	case model.FormatHarbor:
		l, err = loadHarbor(dir)
	case model.FormatTerminalBench:
		l, err = loadTBOld(dir)
	default:
		return Loaded{}, fmt.Errorf("%s: not a task directory: expected task.toml with instruction.md (Terminal-Bench 2.0 / Harbor) or task.yaml (terminal-bench)", dir)
	}
	if err == nil {
		absolute(&l.Task)
		if err = confineTask(dir, &l.Task); err != nil {
			return Loaded{}, err
		}
		noteBuildKitAll(&l.Task)
		// The benchmark's own container: only the resource limit differs.
		l.Task.SetProfile(model.ProfileHarbor)
	}
	return l, err
}

// absolute makes a task's host paths absolute.
func absolute(t *model.Task) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil && p != "" {
			return a
		}
		return p
	}
	t.Dir = abs(t.Dir)
	if t.Build != nil {
		b := *t.Build
		b.Context = abs(b.Context)
		t.Build = &b
	}
	fix := func(st *model.Step) {
		files := make([]model.Upload, len(st.Files))
		for i, u := range st.Files {
			u.From = abs(u.From)
			files[i] = u
		}
		if st.Files != nil {
			st.Files = files
		}
	}
	fix(&t.Verifier)
	for i := range t.Sidecars {
		sc := &t.Sidecars[i]
		if sc.Build != nil {
			b := *sc.Build
			b.Context = abs(b.Context)
			sc.Build = &b
		}
		st := model.Step{Files: sc.Files}
		fix(&st)
		sc.Files = st.Files
	}
	t.Phases = append([]model.Phase(nil), t.Phases...)
	for i := range t.Phases {
		p := &t.Phases[i]
		fix(&p.Verifier)
		setup := append([]model.Step(nil), p.Setup...)
		for j := range setup {
			fix(&setup[j])
		}
		if p.Setup != nil {
			p.Setup = setup
		}
	}
	for i := range t.Agents {
		for j := range t.Agents[i].Steps {
			fix(&t.Agents[i].Steps[j])
		}
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// fileThere says whether the task's file p (what: a Dockerfile, a compose
// file) is there: an error when something else is (a directory where the
// engine's build would fail reading it, after `tasks validate` said ok).
func fileThere(p, what string) (bool, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, nil
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file (%s): the task's %s must be an ordinary file", p, fi.Mode().Type(), what)
	}
	return true, nil
}

func loadHarbor(dir string) (Loaded, error) {
	file := filepath.Join(dir, "task.toml")
	data, err := readTaskFile(dir, file)
	if err != nil {
		return Loaded{}, err
	}
	return parseHarbor(dir, file, data)
}

// ReadSource reads the file a task was loaded from (its Source) as the
// loader reads it: a regular file of at most MaxTaskFileBytes, inside its
// directory where it is a task directory's task.toml. The console re-read
// a task's file at each start with os.ReadFile: a FIFO put in its place
// froze the console until something wrote to it (the thirty-second
// attacker's 4), a link to /dev/zero would have grown it without end.
func ReadSource(source string) ([]byte, error) {
	root := ""
	if dir, ok := harborTaskFile(source); ok {
		root = dir
	}
	return readTaskFile(root, source)
}

// harborTaskFile says whether source is a Harbor task directory's
// task.toml, and that directory.
func harborTaskFile(source string) (string, bool) {
	dir := filepath.Dir(source)
	return dir, filepath.Base(source) == "task.toml" && TaskDirKind(dir) == model.FormatHarbor
}

// ParseSource parses the bytes of the file a task was loaded from (its
// Source): a task directory's task.toml as that directory's task, any
// other file as one of headroom's own task files. It is how an edit is
// checked before it is written.
func ParseSource(source string, data []byte) (Loaded, error) {
	if dir, ok := harborTaskFile(source); ok {
		l, err := parseHarbor(dir, source, data)
		if err == nil {
			absolute(&l.Task)
			err = confineTask(dir, &l.Task)
		}
		return l, err
	}
	return Parse(source, data)
}

func parseHarbor(dir, file string, data []byte) (_ Loaded, err error) {
	var f fileTask
	data, lax := laxNumbers(file, data)
	ignored, err := f.decode(file, data)
	if err != nil {
		return Loaded{}, err
	}
	defer func() {
		if err != nil {
			err = typoFirst(file, data, ignored, tomlKeys(), err)
		}
	}()
	if len(f.Agents) > 0 || len(f.Verifier.Command) > 0 || f.Verifier.Workload != nil {
		return Loaded{}, fmt.Errorf("%s: a task directory's task.toml cannot define [[agents]] or a [verifier] command: its agents are oracle/nop/command and its verifier is tests/test.sh", file)
	}
	if f.Task.Name == "" {
		// Early Terminal-Bench 2.0 files have no [task] table.
		f.Task.Name = taskDirName(dir)
	}
	extra, devs := f.dropHeadroomOnly(file, data)
	ignored = append(ignored, extra...)
	sort.Strings(ignored)
	sizes, err := f.harborSizes()
	if err != nil {
		return Loaded{}, atKeyLine(file, data, err)
	}
	// Harbor's default is a container with internet access.
	t, err := f.common(file, "bridge")
	if err != nil {
		return Loaded{}, atKeyLine(file, data, err)
	}
	t.Format, t.Dir = model.FormatHarbor, dir
	if c := t.Resources.CPUs; c != math.Trunc(c) && !slices.Contains(t.Resources.Defaulted, "cpus") {
		t.Deviations = append(t.Deviations, model.Deviation{What: "fractional cpus",
			Detail: fmt.Sprintf("cpus = %v runs with %v CPUs; Harbor's model takes a whole number and refuses the task", c, c)})
	}
	t.Deviations = append(t.Deviations, devs...)
	if len(f.Environment.IdleCommand) == 0 {
		// Harbor's compose file: command: ["sh", "-c", "sleep infinity"].
		t.IdleCommand = []string{"sh", "-c", "sleep infinity"}
	}
	if t.Instruction, err = readInstruction(dir, filepath.Join(dir, "instruction.md")); err != nil {
		return Loaded{}, err
	}
	envDir := filepath.Join(dir, "environment")
	build, err := seconds("[environment] build_timeout_sec", f.Environment.BuildTimeoutSec, defaultBuildTimeout)
	if err != nil {
		return Loaded{}, atKeyLine(file, data, err)
	}
	if there, err := fileThere(filepath.Join(envDir, "Dockerfile"), "Dockerfile"); err != nil {
		return Loaded{}, err
	} else if there {
		t.Build = &model.Build{Context: envDir, Dockerfile: "Dockerfile", Timeout: build}
	}
	var startFiles []model.Upload
	if p := filepath.Join(envDir, composeFile); exists(p) {
		if startFiles, err = applyCompose(&t, p, dir, harborHarness(&t, envDir, t.Image)); err != nil {
			return Loaded{}, err
		}
	}
	if t.Image == "" && t.Build == nil {
		return Loaded{}, fmt.Errorf("%s: no environment: add environment/Dockerfile or set [environment] docker_image", dir)
	}
	if f.Verifier.TimeoutSec == nil {
		t.VerifierTimeout = harborVerifierTimeout
	}
	t.Deviations = append(t.Deviations, f.harborOnly()...)
	t.Verdict.Reward = &model.RewardRule{Dir: VerifierLogDir, Pass: 1}
	// Harbor's base compose file bind-mounts these from the trial's
	// directory on its host, whatever the task's own compose file says.
	t.HarnessMounts = []string{VerifierLogDir, AgentLogDir, model.ArtifactsDir}
	if len(f.Steps) > 0 {
		if err := f.harborSteps(dir, &t); err != nil {
			return Loaded{}, fmt.Errorf("%s: %w", file, err)
		}
	} else if err := f.harborSingle(dir, file, data, &t); err != nil {
		return Loaded{}, err
	}
	t.Agents = append(t.Agents, nopAgent())
	withStartFiles(&t, startFiles)
	if err := validateTask(&t); err != nil {
		return Loaded{}, atKeyLine(file, data, err)
	}
	warnings := append(lax, sizes...)
	if _, err := os.Lstat(filepath.Join(dir, "instruction.md")); len(f.Steps) == 0 && errors.Is(err, fs.ErrNotExist) {
		// Harbor reads it to start the task, and refuses one without
		// it; headroom would run the agent on an empty instruction, and
		// validate said ok (a new user's try).
		warnings = append(warnings, filepath.Join(dir, "instruction.md")+" is missing: Harbor refuses a task without one; headroom runs the agent with an empty instruction")
	}
	return Loaded{Task: t, Ignored: ignored, Warnings: warnings}.noticeTypos(tomlKeys(), data), nil
}

// harborSingle gives t Harbor's one agent phase and tests/test.sh;
// errors name their file.
func (f *fileTask) harborSingle(dir, file string, data []byte, t *model.Task) error {
	test := filepath.Join(dir, "tests", "test.sh")
	if ok, err := inTask(dir, test); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%s: missing: the verifier tests/test.sh is what decides the task", test)
	}
	venv, vpass, devs := envList("[verifier.env]", f.Verifier.Env)
	t.Deviations = append(t.Deviations, devs...)
	vuser, err := userName("[verifier] user", f.Verifier.User)
	if err != nil {
		return atKeyLine(file, data, err)
	}
	t.Verifier = model.Step{
		Name: "verify", Show: "bash " + TestsDir + "/test.sh",
		Argv: []string{TestsDir + "/test.sh"}, Trace: true, SelfTraced: tracesItself(dir, test),
		TeeStdout: TestStdoutFile, NeedBash: true,
		Env: venv, PassEnv: vpass, User: vuser,
		Files: []model.Upload{{From: filepath.Join(dir, "tests"), To: TestsDir}, {To: VerifierLogDir}},
	}
	if err := f.harborCollect(dir, file, t); err != nil {
		return err
	}
	solve := filepath.Join(dir, "solution", "solve.sh")
	senv, spass, devs := envList("[solution.env]", f.Solution.Env)
	t.Deviations = append(t.Deviations, devs...)
	hasSolve, err := inTask(dir, solve)
	if err != nil {
		return err
	}
	if hasSolve {
		t.Agents = append(t.Agents, model.Agent{
			Name: AgentOracle, Description: "the task's reference solution, solution/solve.sh",
			Steps: []model.Step{{
				Name: "solve", Show: "bash " + SolutionDir + "/solve.sh",
				Argv: []string{SolutionDir + "/solve.sh"}, Trace: true, SelfTraced: tracesItself(dir, solve), NeedBash: true, OutputFile: OracleLogFile,
				Env: senv, PassEnv: spass,
				Files: []model.Upload{{From: filepath.Join(dir, "solution"), To: SolutionDir}, {To: AgentLogDir}},
			}},
		})
	}
	return nil
}

// harborCollect gives t its collect hooks, its artifacts and, when the
// task asks for one, its separate verifier: a container of its own
// whose image carries the tests (none are copied in), which gets the
// collected artifacts and a fresh /logs/verifier.
func (f *fileTask) harborCollect(dir, file string, t *model.Task) error {
	var devs []model.Deviation
	var err error
	if t.Collect, devs, err = collectSteps("[[verifier.collect]]", f.Verifier.Collect); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	t.Deviations = append(t.Deviations, devs...)
	if t.Artifacts, devs, err = artifactPaths(f.Artifacts); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	t.Deviations = append(t.Deviations, devs...)
	separate, err := separateMode(f.Verifier.EnvironmentMode, f.Verifier.Environment)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(t.Artifacts) > 0 || len(t.Collect) > 0 {
		t.Deviations = append(t.Deviations, model.Deviation{What: "artifacts not kept",
			Detail: "what the collect hooks and artifacts gather is used by the verifier but not saved with the trial; Harbor copies it to the trial's directory"})
	}
	if !separate {
		return nil
	}
	if t.SeparateVerifier, err = f.separateVerifier(dir, file); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	t.Deviations = append(t.Deviations, f.verifierDevs...)
	// The verifier's phase policy is its own container's.
	t.VerifierNetwork = nil
	t.Verifier.Files = []model.Upload{{To: VerifierLogDir}}
	return nil
}

func nopAgent() model.Agent {
	return model.Agent{Name: AgentNop, Description: "does nothing; the verifier judges the untouched environment", Check: true,
		Steps: []model.Step{{Name: "nop", Show: "(nothing)", Argv: []string{"sh", "-c", ":"}}}}
}

func readInstruction(root, p string) (string, error) {
	data, err := readTaskFile(root, p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// tbOldTask is the older terminal-bench task.yaml.
type tbOldTask struct {
	Instruction        string          `yaml:"instruction"`
	Descriptions       []tbDescription `yaml:"descriptions"`
	ParserName         string          `yaml:"parser_name"`
	TestScripts        []string        `yaml:"test_scripts"`
	Difficulty         string          `yaml:"difficulty"`
	Category           string          `yaml:"category"`
	Tags               []string        `yaml:"tags"`
	MaxAgentTimeoutSec *yamlNumber     `yaml:"max_agent_timeout_sec"`
	MaxTestTimeoutSec  *yamlNumber     `yaml:"max_test_timeout_sec"`
	// RunTestsInSameShell runs the tests in the agent's own shell session.
	RunTestsInSameShell bool `yaml:"run_tests_in_same_shell"`
}

// tbOldKeys are task.yaml keys of the older format: read, or known and of
// no use to headroom. Others are listed as ignored.
var tbOldKeys = map[string]bool{
	"instruction": true, "descriptions": true, "difficulty": true, "category": true, "tags": true,
	"max_agent_timeout_sec": true, "max_test_timeout_sec": true, "author_name": true, "author_email": true,
	"parser_name": true, "run_tests_in_same_shell": true, "disable_asciinema": true,
	"estimated_duration_sec": true, "expert_time_estimate_min": true, "junior_time_estimate_min": true, "test_scripts": true,
	// Descriptive keys the public datasets' adapters add; the harness reads none.
	"author": true, "env_name": true, "language": true,
}

func loadTBOld(dir string) (Loaded, error) {
	file := filepath.Join(dir, "task.yaml")
	data, err := readTaskFile(dir, file)
	if err != nil {
		return Loaded{}, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Loaded{}, yamlWrongType(file, data, err)
	}
	warnings := pyYAMLDedupe(file, &root)
	var y tbOldTask
	if err := root.Decode(&y); err != nil {
		var refused *yamlRefused
		if errors.As(err, &refused) {
			key := yamlKeyOnLine(strings.Split(string(data), "\n"), refused.line)
			if key != "" {
				key += ": "
			}
			return Loaded{}, fmt.Errorf("%s:%d: %s%s", file, refused.line, key, refused.why)
		}
		return Loaded{}, yamlWrongType(file, data, err)
	}
	var all map[string]any
	_ = root.Decode(&all)
	var ignored []string
	for k := range all {
		if !tbOldKeys[k] {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	name := taskDirName(dir)
	instruction := y.instruction()
	parser := y.ParserName
	if parser == "" {
		parser = verdict.DefaultParser
	}
	if err := verdict.Known(parser); err != nil {
		return Loaded{}, fmt.Errorf("%s: %w", file, err)
	}
	t := model.Task{
		Name: name, Source: file, Format: model.FormatTerminalBench, Dir: dir,
		Instruction: strings.TrimSpace(instruction), Description: firstLine(instruction),
		IdleCommand: []string{"sleep", "infinity"}, Network: "bridge",
		Capabilities: append([]string(nil), model.DefaultCapabilities...),
		Resources: model.Resources{CPUs: model.DefaultCPUs, MemoryBytes: model.DefaultMemoryBytes, PidsLimit: model.DefaultPidsLimit,
			Defaulted: []string{"memory", "cpus", "pids_limit", "allow_internet"}},
	}
	if t.AgentTimeout, err = seconds("max_agent_timeout_sec", y.MaxAgentTimeoutSec.float(), tbOldAgentTimeout); err != nil {
		return Loaded{}, atYAMLKey(file, data, "max_agent_timeout_sec", err)
	}
	if t.VerifierTimeout, err = seconds("max_test_timeout_sec", y.MaxTestTimeoutSec.float(), tbOldVerifierTimeout); err != nil {
		return Loaded{}, atYAMLKey(file, data, "max_test_timeout_sec", err)
	}
	if there, err := fileThere(filepath.Join(dir, "Dockerfile"), "Dockerfile"); err != nil {
		return Loaded{}, err
	} else if there {
		t.Build = &model.Build{Context: dir, Dockerfile: "Dockerfile", Timeout: defaultBuildTimeout}
	}
	var startFiles []model.Upload
	if p := filepath.Join(dir, composeFile); exists(p) {
		h := tbHarness(&t)
		if err := projectDotEnv(h, dir); err != nil {
			return Loaded{}, err
		}
		if startFiles, err = applyCompose(&t, p, dir, h); err != nil {
			return Loaded{}, err
		}
	}
	if t.Image == "" && t.Build == nil {
		return Loaded{}, fmt.Errorf("%s: no Dockerfile beside task.yaml (and no image in its docker-compose.yaml): headroom builds the task's image from it", dir)
	}
	run := filepath.Join(dir, "run-tests.sh")
	if !exists(run) {
		return Loaded{}, fmt.Errorf("%s: missing: the verifier run-tests.sh is what decides the task", run)
	}
	files := []model.Upload{{From: run, To: TestsDir}}
	if err := linkedOut(dir, filepath.Join(dir, "tests")); err != nil {
		return Loaded{}, err
	}
	if exists(filepath.Join(dir, "tests")) {
		files = append(files, model.Upload{From: filepath.Join(dir, "tests"), To: TestsDir})
	}
	scripts, err := harnessScripts(dir, run, y.TestScripts)
	if err != nil {
		return Loaded{}, fmt.Errorf("%s: %w", file, err)
	}
	files = append(files, scripts...)
	// The harness judges the verifier by its output, not its exit code.
	t.Verdict.Parser = parser
	// terminal-bench types its commands into a tmux session, whose shell
	// is an interactive login bash: its login files shape the tests'
	// environment (and the solution's).
	t.Verifier = model.Step{Name: "verify", Show: "bash " + TestsDir + "/run-tests.sh", Argv: []string{TestsDir + "/run-tests.sh"},
		Trace: true, SelfTraced: tracesItself(dir, run), LoginShell: true, Terminal: true, Env: []string{"TEST_DIR=" + TestsDir, tbPaneTerm}, Files: files}
	sol := filepath.Join(dir, "solution.sh")
	if err := linkedOut(dir, sol); err != nil {
		return Loaded{}, err
	}
	if exists(sol) {
		t.Agents = append(t.Agents, model.Agent{
			Name: AgentOracle, Description: "the task's reference solution, solution.sh",
			Steps: []model.Step{{Name: "solve", Show: "bash " + SolutionDir + "/solution.sh", Argv: []string{SolutionDir + "/solution.sh"},
				Trace: true, SelfTraced: tracesItself(dir, sol), LoginShell: true, Terminal: true, Env: []string{tbPaneTerm}, Files: []model.Upload{{From: sol, To: SolutionDir}}}},
		})
	} else if ysol := filepath.Join(dir, "solution.yaml"); exists(ysol) {
		oracle, dev, err := solutionYAML(dir, ysol)
		if err != nil {
			return Loaded{}, err
		}
		if oracle != nil {
			t.Agents = append(t.Agents, *oracle)
		}
		t.Deviations = append(t.Deviations, dev)
	}
	t.Agents = append(t.Agents, nopAgent())
	withStartFiles(&t, startFiles)
	t.Deviations = append(t.Deviations, tbOldDeviations(y)...)
	// The harness runs the compose file's cpus and no memory limit; a
	// task without compose limits runs unlimited.
	t.Harness = &model.HarnessContainer{}
	if !slices.Contains(t.Resources.Defaulted, "cpus") {
		t.Harness.CPUs = t.Resources.CPUs
	}
	if !slices.Contains(t.Resources.Defaulted, "memory") {
		t.Harness.MemoryBytes = t.Resources.MemoryBytes
	}
	if !t.Harness.ByDefaultScale(t.Resources) {
		t.Deviations = append(t.Deviations, model.Deviation{What: "harness resources differ",
			Detail: t.HarnessNote() + fmt.Sprintf(" (headroom's spec: %g CPU, %s%s)", t.Resources.CPUs, model.FormatBytes(t.Resources.MemoryBytes), defaultedNote(t.Resources))})
	}
	if err := validateTask(&t); err != nil {
		return Loaded{}, fmt.Errorf("%s: %w", file, err)
	}
	for _, n := range []struct {
		key string
		v   *yamlNumber
	}{{"max_agent_timeout_sec", y.MaxAgentTimeoutSec}, {"max_test_timeout_sec", y.MaxTestTimeoutSec}} {
		if n.v != nil && n.v.how != "" {
			warnings = append(warnings, fmt.Sprintf("%s:%d: %s: %s, as terminal-bench reads it", file, n.v.line, n.key, n.v.how))
		}
	}
	return Loaded{Task: t, Ignored: ignored, Warnings: warnings}.noticeTypos(tbOldKeys, data), nil
}

// tbPaneTerm is the TERM of a terminal-bench pane (tmux 3.3a, the
// Debian tmux the harness installs in the task's container, gives its
// panes tmux-256color): a script that asks tput for bold under `set -e`
// ended at TERM=dumb, the engine's, and failed where the harness passed
// it (the fifteenth attacker's 3).
const tbPaneTerm = "TERM=tmux-256color"

// TerminalDeviation is what every terminal-bench 1 task lists about its
// steps' terminal (model.Step.Terminal).
const TerminalDeviation = "stdin not the pane"

// tbOldDeviations are the ways an older terminal-bench task runs under
// headroom other than under its harness, whatever the profile. (Its
// missing resource spec is not one: the limit is what headroom varies on
// purpose, and the defaulted spec is flagged as such.)
func tbOldDeviations(y tbOldTask) []model.Deviation {
	out := []model.Deviation{{What: TerminalDeviation,
		Detail: "the harness types each command into a tmux pane, the terminal of its stdin, stdout and stderr; headroom's step driver gives the steps a pseudo-terminal of the pane's size (160x40, TERM=tmux-256color) for stdout and stderr, so Python's print and C's stdio write each line as it comes, as in the pane, but stdin is /dev/null and the terminal is not their controlling one: a program that reads its input meets its end where the pane waits for keys, `tty` says not a tty and /dev/tty cannot be opened. Under --exec-steps the steps get pipes instead: stdio buffers in blocks there, output not flushed when a program ends by os._exit is lost, and stdout and stderr can reach the tests' output in another order than the pane's"}}
	if y.RunTestsInSameShell {
		out = append(out, model.Deviation{What: "tests in a fresh shell",
			Detail: "run_tests_in_same_shell: the harness runs the tests in the agent's shell session (its working directory and exported variables); headroom starts them in a new one"})
	}
	return out
}

func defaultedNote(r model.Resources) string {
	if len(r.Defaulted) == 0 {
		return ""
	}
	return "; defaulted: " + strings.Join(r.Defaulted, ", ")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// solutionYAML reads a terminal-bench 1 task's solution.yaml, the oracle's
// commands as the harness types them into its tmux pane: a list of
// {command, min_timeout_sec, max_timeout_sec, block, append_enter}. Where
// each is typed with its Enter (append_enter: true), the shell runs them
// one after another as lines of one script, and so does headroom: a
// script of those lines, in a login shell as the pane's. A command typed
// without its Enter is keys for whatever reads the terminal then (an
// editor, a REPL), which headroom does not type: that task has no oracle
// here, and the deviation says why. Either way the deviation is listed.
// Before, a task with solution.yaml alone had no oracle and nothing said
// so (the thirteenth attacker's 5).
func solutionYAML(dir, file string) (*model.Agent, model.Deviation, error) {
	if err := linkedOut(dir, file); err != nil {
		return nil, model.Deviation{}, err
	}
	data, err := readTaskFile(dir, file)
	if err != nil {
		return nil, model.Deviation{}, err
	}
	var cmds []struct {
		Command     *string  `yaml:"command"`
		MinTimeout  *float64 `yaml:"min_timeout_sec"`
		MaxTimeout  *float64 `yaml:"max_timeout_sec"`
		Block       *bool    `yaml:"block"`
		AppendEnter *bool    `yaml:"append_enter"`
	}
	if err := yaml.Unmarshal(data, &cmds); err != nil {
		return nil, model.Deviation{}, fmt.Errorf("%s: not a list of commands ({command, block, append_enter, …}): %v", file, err)
	}
	var lines []string
	for i, c := range cmds {
		if c.Command == nil {
			return nil, model.Deviation{}, fmt.Errorf("%s: entry %d has no command", file, i+1)
		}
		if c.AppendEnter == nil || !*c.AppendEnter {
			return nil, model.Deviation{What: "no oracle: solution.yaml types keys",
				Detail: fmt.Sprintf("entry %d (%q) is typed without its Enter (append_enter not true): keys for whatever reads the pane then, which headroom does not type; name another agent", i+1, firstLine(*c.Command))}, nil
		}
		lines = append(lines, *c.Command)
	}
	script := "#!/bin/bash\n" + strings.Join(lines, "\n") + "\n"
	return &model.Agent{
			Name: AgentOracle, Description: "the task's reference solution, solution.yaml's commands as one script",
			Steps: []model.Step{{Name: "solve", Show: "bash " + SolutionDir + "/solution.sh (solution.yaml's commands)", Argv: []string{SolutionDir + "/solution.sh"},
				Trace: true, SelfTraced: scriptTracesItself(script), LoginShell: true, Terminal: true, Env: []string{tbPaneTerm}, Files: []model.Upload{{To: SolutionDir, Name: "solution.sh", Content: script, Executable: true}}}},
		}, model.Deviation{What: "solution.yaml run as a script",
			Detail: fmt.Sprintf("its %d commands run one after another in one login shell, as typed into the harness's pane each with its Enter; their min and max timeouts are not waited", len(lines))}, nil
}

// atYAMLKey puts the line of a task.yaml's top-level key before err, as a
// TOML file's errors are said ("task.yaml:3: max_agent_timeout_sec …"; a
// range error named the file alone, the twenty-fifth attacker found), or
// the file alone where the key is not on one line of its own.
func atYAMLKey(file string, data []byte, key string, err error) error {
	if n := onlyLine(data, regexp.MustCompile(`^["']?`+regexp.QuoteMeta(key)+`["']?\s*:`)); n > 0 {
		return fmt.Errorf("%s:%d: %w", file, n, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// taskDirName is the name a task directory gives its task: the last
// element of its absolute path, as the harnesses take it from the
// resolved directory. `tasks validate .` inside a task named it ".".
func taskDirName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Base(dir)
}

// harborSizes reads a Harbor task.toml's deprecated `memory` and
// `storage` strings as Harbor's EnvironmentConfig does: a G, M or K
// suffix (any case) after a number, whole MiB by truncation, and the
// string over memory_mb (storage_mb) where both are given, said in a
// warning. headroom's own size syntax had read "0.2G" as 204.8 MiB (204
// in Harbor), taken "2GB" and "1.5GiB" (Harbor refuses them) and refused
// both keys given (Harbor runs it): the thirty-fourth attacker's 3.
func (f *fileTask) harborSizes() (warnings []string, err error) {
	env := &f.Environment
	for _, k := range []struct {
		name, mbName string
		str          **string
		mb           **float64
	}{{"memory", "memory_mb", &env.Memory, &env.MemoryMB}, {"storage", "storage_mb", &env.Storage, &env.StorageMB}} {
		if *k.str == nil {
			continue
		}
		mib, err := harborSizeMB(**k.str)
		if err != nil {
			return nil, fmt.Errorf("[environment] %s: %v", k.name, err)
		}
		if *k.mb != nil {
			warnings = append(warnings, fmt.Sprintf("[environment] sets both %s and %s: Harbor takes %s (%q, %d MiB), and so does headroom", k.mbName, k.name, k.name, **k.str, mib))
		}
		v := float64(mib)
		*k.mb, *k.str = &v, nil
	}
	return warnings, nil
}

// harborSizeMB is Harbor's _parse_size_to_mb: the text trimmed and upper-
// cased, a number before G, M or K, in MiB truncated toward zero.
func harborSizeMB(s string) (int64, error) {
	// Python's str.strip() takes the file and group separators too
	// (U+001C–U+001F, whitespace to Python, not to Go), and its float()
	// reads any script's decimal digits (model.PythonFloat): "１G" is
	// 1024 to Harbor, "0x1p1G" nothing (the thirty-fifth attacker's 4).
	u := strings.ToUpper(strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }))
	scale := 0.0
	switch {
	case strings.HasSuffix(u, "G"):
		scale = 1024
	case strings.HasSuffix(u, "M"):
		scale = 1
	case strings.HasSuffix(u, "K"):
		scale = 1.0 / 1024
	default:
		return 0, fmt.Errorf("%q is not a size Harbor reads: a number then G, M or K (as \"512M\", \"2G\"); or give memory_mb", s)
	}
	n, err := model.PythonFloat(u[:len(u)-1])
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a size Harbor reads: a number then G, M or K (as \"512M\", \"2G\"); or give memory_mb", s)
	}
	mib := math.Trunc(n * scale)
	if mib > 1<<30 || mib < -(1<<30) {
		return 0, fmt.Errorf("%q is more than headroom takes (%d MiB)", s, 1<<30)
	}
	return int64(mib), nil
}
