// Package parity loads a corpus of real public task directories
// (Terminal-Bench 2.0 / Harbor suites, terminal-bench 1 datasets) with
// headroom's loader and checks what it read against the task files, as
// the tasks' own harnesses read them. See PROVENANCE.md.
//
// A refusal not listed in expected.txt fails the test (a false refusal:
// the task's own harness would run it), and so does a field read
// differently from what the harness reads, unless expected.txt lists it
// with the reason. An entry that no longer happens fails too: the list
// only shrinks.
package parity

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
	"go.yaml.in/yaml/v3"
)

// corpusDir is where the corpus is: parity/testdata/corpus (under testdata,
// so the go tool skips the Go files of its tasks) unless
// HEADROOM_PARITY_CORPUS says otherwise.
func corpusDir(t *testing.T) string {
	dir := os.Getenv("HEADROOM_PARITY_CORPUS")
	if dir == "" {
		dir = filepath.Join("testdata", "corpus")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no parity corpus at %s (see parity/PROVENANCE.md for how it is assembled; HEADROOM_PARITY_CORPUS names another place)", dir)
	}
	return dir
}

// expectation is one line of expected.txt.
type expectation struct {
	kind  string // "refuse" or "misread"
	field string // misread: the field
	glob  string // source/task, may hold * (path.Match)
	text  string // refuse: a part of the error
	line  int
	hit   bool
}

func readExpectations(t *testing.T, file string) []*expectation {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*expectation
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		bad := func() {
			t.Fatalf("%s:%d: want `refuse SOURCE/TASK TEXT...` or `misread FIELD SOURCE/TASK`, got %q", file, n, line)
		}
		if len(fields) < 3 {
			bad()
		}
		e := &expectation{kind: fields[0], line: n}
		switch e.kind {
		case "refuse":
			e.glob, e.text = fields[1], strings.Join(fields[2:], " ")
		case "misread":
			if len(fields) != 3 {
				bad()
			}
			e.field, e.glob = fields[1], fields[2]
		default:
			bad()
		}
		if _, err := filepath.Match(e.glob, ""); err != nil {
			t.Fatalf("%s:%d: bad pattern %q: %v", file, n, e.glob, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func match(exps []*expectation, kind, field, id, text string) bool {
	for _, e := range exps {
		if e.kind != kind || e.field != field {
			continue
		}
		if ok, _ := filepath.Match(e.glob, id); ok && strings.Contains(text, e.text) {
			e.hit = true
			return true
		}
	}
	return false
}

// result is one corpus directory's load.
type result struct {
	source, task, format string
	err                  error
	loaded               taskfile.Loaded
}

func (r result) id() string { return r.source + "/" + r.task }

// loadCorpus loads every corpus/<source>/<task> directory as --tasks-dir
// does, and each source through the catalog as a whole, which also
// refuses a second task of the same name.
func loadCorpus(t *testing.T, root string) []result {
	sources, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []result
	for _, s := range sources {
		if !s.IsDir() {
			continue
		}
		tasks, err := os.ReadDir(filepath.Join(root, s.Name()))
		if err != nil {
			t.Fatal(err)
		}
		byDir := map[string]int{}
		for _, d := range tasks {
			if !d.IsDir() {
				continue
			}
			dir := filepath.Join(root, s.Name(), d.Name())
			r := result{source: s.Name(), task: d.Name(), format: taskfile.TaskDirKind(dir)}
			if r.format == "" {
				r.format = "?"
				r.err = fmt.Errorf("%s: not recognised as a task directory", dir)
			} else {
				r.loaded, r.err = taskfile.LoadTaskDir(dir)
			}
			byDir[dir] = len(out)
			out = append(out, r)
		}
		// The catalog path: what `--tasks-dir <source>` would load.
		cat := &taskfile.Catalog{}
		if err := cat.AddDir(filepath.Join(root, s.Name())); err != nil {
			t.Errorf("catalog of %s: %v", s.Name(), err)
			continue
		}
		for _, p := range cat.Problems {
			msg := p.Error()
			if !strings.Contains(msg, "is already defined in") {
				continue
			}
			for dir, i := range byDir {
				if strings.HasPrefix(msg, dir+string(filepath.Separator)) && out[i].err == nil {
					out[i].err = p
				}
			}
		}
		if want := countLoaded(out, s.Name()); len(cat.Tasks) != want {
			t.Errorf("%s: --tasks-dir loads %d tasks, the directories one by one %d: the catalog walk finds other tasks than the task directories", s.Name(), len(cat.Tasks), want)
		}
	}
	return out
}

func countLoaded(rs []result, source string) int {
	n := 0
	for _, r := range rs {
		if r.source == source && r.err == nil {
			n++
		}
	}
	return n
}

var (
	reNumbers = regexp.MustCompile(`\d+`)
	reQuoted  = regexp.MustCompile(`"[^"]*"`)
)

// reason is an error with the task's own path, numbers and quoted values
// taken out, so that refusals of one kind group together.
func reason(r result, root string) string {
	msg := r.err.Error()
	msg = strings.ReplaceAll(msg, filepath.Join(root, r.source, r.task)+string(filepath.Separator), "")
	msg = strings.ReplaceAll(msg, filepath.Join(root, r.source, r.task), "<task>")
	msg = reQuoted.ReplaceAllString(msg, `"…"`)
	return reNumbers.ReplaceAllString(msg, "N")
}

func TestParityCorpus(t *testing.T) {
	root := corpusDir(t)
	exps := readExpectations(t, "expected.txt")
	results := loadCorpus(t, root)
	if len(results) == 0 {
		t.Fatalf("the corpus at %s holds no task directories", root)
	}

	// Load table: source × format.
	type key struct{ source, format string }
	type counts struct{ loaded, refused, expected int }
	table := map[key]*counts{}
	reasons := map[string][]string{}
	var keys []key
	for _, r := range results {
		k := key{r.source, r.format}
		if table[k] == nil {
			table[k] = &counts{}
			keys = append(keys, k)
		}
		if r.err == nil {
			table[k].loaded++
			continue
		}
		table[k].refused++
		rs := reason(r, root)
		reasons[rs] = append(reasons[rs], r.id())
		if match(exps, "refuse", "", r.id(), r.err.Error()) {
			table[k].expected++
		} else {
			t.Errorf("false refusal: %v", r.err)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].source != keys[j].source {
			return keys[i].source < keys[j].source
		}
		return keys[i].format < keys[j].format
	})
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "source\tformat\tdirs\tloaded\trefused\t(expected)\t")
	var tot counts
	for _, k := range keys {
		c := table[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t\n", k.source, k.format, c.loaded+c.refused, c.loaded, c.refused, c.expected)
		tot.loaded += c.loaded
		tot.refused += c.refused
		tot.expected += c.expected
	}
	fmt.Fprintf(tw, "total\t\t%d\t%d\t%d\t%d\t\n", tot.loaded+tot.refused, tot.loaded, tot.refused, tot.expected)
	tw.Flush()
	t.Logf("load table (%s):\n%s", root, b.String())
	if len(reasons) > 0 {
		var rs []string
		for r := range reasons {
			rs = append(rs, r)
		}
		sort.Slice(rs, func(i, j int) bool { return len(reasons[rs[i]]) > len(reasons[rs[j]]) })
		b.Reset()
		for _, r := range rs {
			ids := reasons[r]
			fmt.Fprintf(&b, "%4d  %s\n      e.g. %s\n", len(ids), r, strings.Join(ids[:min(3, len(ids))], ", "))
		}
		t.Logf("refusals by reason:\n%s", b.String())
	}

	// Keys the loader lists as ignored (a warning each, on every run).
	ignored := map[string]map[string]bool{}
	for _, r := range results {
		for _, k := range r.loaded.Ignored {
			if ignored[k] == nil {
				ignored[k] = map[string]bool{}
			}
			ignored[k][r.source] = true
		}
	}
	warned := 0
	for _, r := range results {
		if len(r.loaded.Ignored) > 0 {
			warned++
		}
	}
	b.Reset()
	ks := make([]string, 0, len(ignored))
	for k := range ignored {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		var srcs []string
		for s := range ignored[k] {
			srcs = append(srcs, s)
		}
		sort.Strings(srcs)
		fmt.Fprintf(&b, "      %s (%s)\n", k, strings.Join(srcs, ", "))
	}
	t.Logf("ignored keys: %d of %d loaded tasks get an ignored-key warning; %d distinct keys:\n%s", warned, tot.loaded, len(ks), b.String())

	// Spot checks: every loaded task's fields against its files.
	misreads := map[string][]string{}
	unexpected := map[string][]string{} // field: what was seen, one line a task
	checked := 0
	for _, r := range results {
		if r.err != nil {
			continue
		}
		var diffs []diff
		var err error
		switch r.format {
		case model.FormatHarbor:
			diffs, err = checkHarbor(r.loaded.Task)
		case model.FormatTerminalBench:
			diffs, err = checkTB1(r.loaded.Task)
		}
		if err != nil {
			t.Errorf("%s: reading its files to check: %v", r.id(), err)
			continue
		}
		checked++
		for _, d := range diffs {
			misreads[d.field] = append(misreads[d.field], r.id())
			if !match(exps, "misread", d.field, r.id(), "") {
				unexpected[d.field] = append(unexpected[d.field], fmt.Sprintf("%s: headroom %s; the harness %s", r.id(), d.got, d.want))
			}
		}
	}
	b.Reset()
	fields := make([]string, 0, len(misreads))
	for f := range misreads {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		ids := misreads[f]
		fmt.Fprintf(&b, "%4d  %s  e.g. %s\n", len(ids), f, strings.Join(ids[:min(3, len(ids))], ", "))
	}
	t.Logf("spot checks: %d loaded tasks checked field by field; fields read differently from the harness:\n%s", checked, b.String())
	for _, f := range fields {
		if u := unexpected[f]; len(u) > 0 {
			more := ""
			if len(u) > 5 {
				more = fmt.Sprintf("\n  … and %d more", len(u)-5)
			}
			t.Errorf("misread %s in %d task(s):\n  %s%s", f, len(u), strings.Join(u[:min(5, len(u))], "\n  "), more)
		}
	}

	for _, e := range exps {
		if !e.hit {
			t.Errorf("expected.txt:%d: %s %s%s %s no longer happens: remove the line", e.line, e.kind, e.field, map[bool]string{true: "", false: " "}[e.field == ""], e.glob)
		}
	}
}

// diff is a field headroom reads otherwise than the task's harness.
type diff struct{ field, got, want string }

func durationDiff(field string, got time.Duration, want float64) []diff {
	if math.Abs(got.Seconds()-want) > 0.001 {
		return []diff{{field, fmt.Sprintf("gives %v", got), fmt.Sprintf("gives %v", time.Duration(want*float64(time.Second)))}}
	}
	return nil
}

// number reads a TOML/YAML number of either kind.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func table(m map[string]any, k string) map[string]any {
	if v, ok := m[k].(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

// Harbor's defaults for what a task.toml leaves out.
const (
	harborCPUs            = 1
	harborMemoryMB        = 2048
	harborVerifierTimeout = 600
	harborBuildTimeout    = 600
)

// checkHarbor reads a task.toml and instruction.md as Harbor reads them
// and lists what the loaded task has otherwise.
func checkHarbor(task model.Task) ([]diff, error) {
	var raw map[string]any
	if _, err := toml.DecodeFile(filepath.Join(task.Dir, "task.toml"), &raw); err != nil {
		return nil, err
	}
	env, agent, verifier := table(raw, "environment"), table(raw, "agent"), table(raw, "verifier")
	rec := record(task)
	var ds []diff

	cpus := float64(harborCPUs)
	if v, ok := number(env["cpus"]); ok {
		cpus = v
	}
	if task.Resources.CPUs != cpus {
		ds = append(ds, diff{"cpus", fmt.Sprintf("gives %v", task.Resources.CPUs), fmt.Sprintf("gives %v", cpus)})
	}

	mem := int64(harborMemoryMB) * model.MiB
	if v, ok := number(env["memory_mb"]); ok {
		mem = int64(v * float64(model.MiB))
	} else if s, ok := env["memory"].(string); ok {
		n, err := model.ParseBytes(s)
		if err != nil {
			return nil, fmt.Errorf("[environment] memory %q: %v", s, err)
		}
		mem = n
	}
	if task.Resources.MemoryBytes != mem {
		ds = append(ds, diff{"memory", "gives " + model.FormatBytes(task.Resources.MemoryBytes), "gives " + model.FormatBytes(mem)})
	}

	if v, ok := number(agent["timeout_sec"]); ok {
		ds = append(ds, durationDiff("agent_timeout", task.AgentTimeout, v)...)
	}
	vt := float64(harborVerifierTimeout)
	if v, ok := number(verifier["timeout_sec"]); ok {
		vt = v
	}
	ds = append(ds, durationDiff("verifier_timeout", task.VerifierTimeout, vt)...)

	instr, err := os.ReadFile(filepath.Join(task.Dir, "instruction.md"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if strings.TrimSpace(task.Instruction) != strings.TrimSpace(string(instr)) {
		ds = append(ds, diff{"instruction", fmt.Sprintf("gives %d bytes", len(task.Instruction)), fmt.Sprintf("gives instruction.md's %d bytes", len(instr))})
	}

	bt := float64(harborBuildTimeout)
	if v, ok := number(env["build_timeout_sec"]); ok {
		bt = v
	}
	if task.Build != nil {
		ds = append(ds, durationDiff("build_timeout", task.Build.Timeout, bt)...)
	}

	// A task naming docker_image runs that image in Harbor, even with a
	// Dockerfile beside it (built only when forced). headroom may keep
	// the Dockerfile as a fallback; the image must be the named one.
	if img, _ := env["docker_image"].(string); img != "" && task.Image != img {
		ds = append(ds, diff{"docker_image", fmt.Sprintf("runs image %q", task.Image), fmt.Sprintf("runs the pinned image %q", img)})
	}

	// The network: allow_internet = false (and newer network_mode) take
	// the network away.
	if ai, ok := env["allow_internet"].(bool); ok && !ai && task.Network != "none" {
		ds = append(ds, diff{"network", fmt.Sprintf("gives network %q", task.Network), "gives no network (allow_internet = false)"})
	}
	if nm, _ := env["network_mode"].(string); nm == "no-network" && task.Network != "none" {
		ds = append(ds, diff{"network", fmt.Sprintf("gives network %q", task.Network), `gives no network (network_mode = "no-network")`})
	}

	if g, ok := number(env["gpus"]); ok && int(g) != task.GPUs {
		ds = append(ds, diff{"gpus", fmt.Sprintf("records %d", task.GPUs), fmt.Sprintf("asks for %v", g)})
	}

	// ${VAR:-default} templates in env tables resolve in Harbor.
	for _, e := range append(append([]string(nil), task.Env...), task.Verifier.Env...) {
		if strings.Contains(e, "${") {
			ds = append(ds, diff{"env_template", fmt.Sprintf("passes %q literally", e), "resolves the template"})
			break
		}
	}
	// workdir: where the agent's and verifier's commands start.
	if wd, _ := env["workdir"].(string); wd != "" && rec.str("workdir") != wd {
		ds = append(ds, diff{"workdir", fmt.Sprintf("starts in %q", rec.str("workdir")), fmt.Sprintf("starts in %q", wd)})
	}

	// [environment.healthcheck]: Harbor waits for it to pass before the
	// agent starts.
	if _, ok := env["healthcheck"].(map[string]any); ok && !rec.has("healthcheck") {
		ds = append(ds, diff{"healthcheck", "starts the agent without waiting", "waits for [environment.healthcheck] to pass before the agent starts"})
	}

	ds = append(ds, checkAfterAgent(task, raw, agent, verifier)...)

	// [[steps]]: a multi-step task runs its steps in order, each with its
	// own instruction, tests, timeouts and min_reward.
	steps, _ := raw["steps"].([]map[string]any)
	at := task.AgentTimeout.Seconds()
	if v, ok := number(agent["timeout_sec"]); ok {
		at = v
	}
	sd, err := checkSteps(task, raw, steps, at, vt)
	if err != nil {
		return nil, err
	}
	ds = append(ds, sd...)
	ds = append(ds, checkCompose(task, rec, filepath.Join(task.Dir, "environment", "docker-compose.yaml"), "main")...)
	return ds, nil
}

// checkAfterAgent reads what Harbor 1.3 does around a single-step
// task's agent: its [[verifier.collect]] hooks (those for the main
// service run in the task's container), a separate verifier
// (environment_mode = "separate", or a [verifier.environment] without a
// mode) built from tests/ with its own resources, the agent's and the
// verifier's phase network (no-network takes it away for the phase),
// and an allowlist's hosts.
func checkAfterAgent(task model.Task, raw, agent, verifier map[string]any) []diff {
	if steps, _ := raw["steps"].([]map[string]any); len(steps) > 0 {
		return nil
	}
	var ds []diff
	hooks, _ := verifier["collect"].([]map[string]any)
	main := 0
	for _, h := range hooks {
		if svc, _ := h["service"].(string); svc == "" || svc == "main" {
			main++
		}
	}
	if len(task.Collect) != main {
		ds = append(ds, diff{"verifier.collect", fmt.Sprintf("runs %d hook(s)", len(task.Collect)), fmt.Sprintf("runs %d in the main service", main)})
	}
	mode, _ := verifier["environment_mode"].(string)
	venv, hasEnv := verifier["environment"].(map[string]any)
	separate := mode == "separate" || (mode == "" && hasEnv)
	if separate != (task.SeparateVerifier != nil) {
		ds = append(ds, diff{"environment_mode", fmt.Sprintf("separate verifier %v", task.SeparateVerifier != nil), fmt.Sprintf("separate verifier %v", separate)})
	}
	if sv := task.SeparateVerifier; sv != nil && hasEnv {
		if v, ok := number(venv["cpus"]); ok && v != sv.Resources.CPUs {
			ds = append(ds, diff{"verifier.environment.cpus", fmt.Sprintf("gives %v", sv.Resources.CPUs), fmt.Sprintf("gives %v", v)})
		}
		if v, ok := number(venv["memory_mb"]); ok && int64(v)*model.MiB != sv.Resources.MemoryBytes {
			ds = append(ds, diff{"verifier.environment.memory", "gives " + model.FormatBytes(sv.Resources.MemoryBytes), fmt.Sprintf("gives %vMiB", v)})
		}
		if nm, _ := verifier["network_mode"].(string); nm == "no-network" && sv.Network != "none" {
			ds = append(ds, diff{"verifier.network_mode", "gives the separate verifier a network", "gives it none"})
		}
	}
	if nm, _ := agent["network_mode"].(string); nm == "no-network" {
		if task.Network != "none" && (task.AgentNetwork == nil || task.AgentNetwork.Mode != model.NetworkNone) {
			ds = append(ds, diff{"agent.network_mode", "gives the agent the container's network", "gives the agent phase no network"})
		}
	}
	env := table(raw, "environment")
	if nm, _ := env["network_mode"].(string); nm == "allowlist" {
		hosts, _ := env["allowed_hosts"].([]any)
		if len(hosts) != len(task.AllowedHosts) {
			ds = append(ds, diff{"allowed_hosts", fmt.Sprintf("allows %v", task.AllowedHosts), fmt.Sprintf("allows %v", hosts)})
		}
	}
	return ds
}

// checkSteps reads a multi-step task's [[steps]] and step directories as
// Harbor's multi-step trial does and lists what the loaded phases have
// otherwise: the steps and their order, each step's instruction (its
// steps/<name>/instruction.md), agent and verifier timeouts (the task's
// when the step sets none), min_reward (a number gates "reward"), the
// verifier's test.sh (the step's, else the shared one) and the reward
// strategy (mean unless "final").
func checkSteps(task model.Task, raw map[string]any, steps []map[string]any, agentTimeout, verifierTimeout float64) ([]diff, error) {
	if len(steps) == 0 {
		if len(task.Phases) > 0 {
			return []diff{{"steps", fmt.Sprintf("runs %d steps", len(task.Phases)), "runs one"}}, nil
		}
		return nil, nil
	}
	var names []string
	for _, s := range steps {
		n, _ := s["name"].(string)
		names = append(names, n)
	}
	if got := strings.Join(task.PhaseNames(), ","); got != strings.Join(names, ",") {
		return []diff{{"steps", fmt.Sprintf("runs steps [%s]", got), fmt.Sprintf("runs steps [%s]", strings.Join(names, ","))}}, nil
	}
	var ds []diff
	strategy, _ := raw["multi_step_reward_strategy"].(string)
	if strategy == "" {
		strategy = model.PhaseRewardMean
	}
	if task.PhaseReward != strategy {
		ds = append(ds, diff{"step_reward", fmt.Sprintf("combines the steps' rewards by %q", task.PhaseReward), fmt.Sprintf("by %q", strategy)})
	}
	for i, s := range steps {
		p := task.Phases[i]
		dir := filepath.Join(task.Dir, "steps", names[i])
		instr, err := os.ReadFile(filepath.Join(dir, "instruction.md"))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if strings.TrimSpace(p.Instruction) != strings.TrimSpace(string(instr)) {
			ds = append(ds, diff{"step_instruction", fmt.Sprintf("gives step %s %d bytes", p.Name, len(p.Instruction)), fmt.Sprintf("gives its instruction.md's %d bytes", len(instr))})
		}
		at, vt := agentTimeout, verifierTimeout
		if v, ok := number(table(s, "agent")["timeout_sec"]); ok {
			at = v
		}
		if v, ok := number(table(s, "verifier")["timeout_sec"]); ok {
			vt = v
		}
		ds = append(ds, durationDiff("step_agent_timeout", p.AgentTimeout, at)...)
		ds = append(ds, durationDiff("step_verifier_timeout", p.VerifierTimeout, vt)...)
		want := map[string]float64{}
		switch m := s["min_reward"].(type) {
		case map[string]any:
			for k, v := range m {
				want[k], _ = number(v)
			}
		default:
			if v, ok := number(m); ok {
				want["reward"] = v
			}
		}
		if fmt.Sprint(p.MinReward) != fmt.Sprint(map[string]float64(want)) && !(len(want) == 0 && len(p.MinReward) == 0) {
			ds = append(ds, diff{"step_min_reward", fmt.Sprintf("gates step %s on %v", p.Name, p.MinReward), fmt.Sprintf("on %v", want)})
		}
		// The verifier's test.sh: the step's own, landing over the shared tests/.
		var from []string
		for _, u := range p.Verifier.Files {
			if u.From != "" {
				from = append(from, u.From)
			}
		}
		var wantFrom []string
		for _, d := range []string{filepath.Join(task.Dir, "tests"), filepath.Join(dir, "tests")} {
			if _, err := os.Stat(d); err == nil {
				wantFrom = append(wantFrom, d)
			}
		}
		if strings.Join(from, ",") != strings.Join(wantFrom, ",") {
			ds = append(ds, diff{"step_tests", fmt.Sprintf("uploads [%s] for step %s", strings.Join(from, ","), p.Name), fmt.Sprintf("uploads [%s], the step's last", strings.Join(wantFrom, ","))})
		}
		_, wdErr := os.Stat(filepath.Join(dir, "workdir"))
		if (wdErr == nil) != (len(p.Setup) > 0) {
			ds = append(ds, diff{"step_workdir", fmt.Sprintf("has %d setup step(s) for step %s", len(p.Setup), p.Name), "uploads its workdir/ before the agent"})
		}
		if _, ok := s["healthcheck"].(map[string]any); ok && p.Healthcheck == nil {
			ds = append(ds, diff{"step_healthcheck", "starts the step's agent without waiting", "waits for [steps.healthcheck] to pass"})
		}
	}
	return ds, nil
}

// checkCompose: a compose file with services beside the task's own (a
// database, an API server) starts them as sidecars in the task's harness.
func checkCompose(task model.Task, rec recorded, file, main string) []diff {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var c struct {
		Services map[string]struct {
			WorkingDir  string `yaml:"working_dir"`
			Environment any    `yaml:"environment"`
			Deploy      struct {
				Resources struct {
					Limits struct {
						CPUs any `yaml:"cpus"`
					} `yaml:"limits"`
				} `yaml:"resources"`
			} `yaml:"deploy"`
		} `yaml:"services"`
	}
	if yaml.Unmarshal(data, &c) != nil {
		return nil
	}
	var ds []diff
	want := 0
	for name := range c.Services {
		if name != main {
			want++
		}
	}
	if got := rec.count("sidecars"); got != want {
		ds = append(ds, diff{"sidecars", fmt.Sprintf("starts %d sidecar(s)", got), fmt.Sprintf("starts %d service(s) beside %s (%s)", want, main, filepath.Base(file))})
	}
	svc, ok := c.Services[main]
	if !ok {
		return ds
	}
	// The main service's working_dir and literal environment entries
	// are the task container's.
	if wd := svc.WorkingDir; wd != "" && !strings.Contains(wd, "$") && rec.str("workdir") != wd {
		ds = append(ds, diff{"compose_working_dir", fmt.Sprintf("starts in %q", rec.str("workdir")), fmt.Sprintf("starts in %q (%s working_dir)", wd, filepath.Base(file))})
	}
	var envs []string
	switch e := svc.Environment.(type) {
	case []any:
		for _, v := range e {
			envs = append(envs, fmt.Sprint(v))
		}
	case map[string]any:
		for k, v := range e {
			envs = append(envs, k+"="+fmt.Sprint(v))
		}
	}
	for _, e := range envs {
		if strings.Contains(e, "$") || !strings.Contains(e, "=") {
			continue
		}
		if !slices.Contains(task.Env, e) {
			ds = append(ds, diff{"compose_environment", fmt.Sprintf("does not set %s", e), fmt.Sprintf("sets %s (%s environment)", e, filepath.Base(file))})
			break
		}
	}
	if s := fmt.Sprint(svc.Deploy.Resources.Limits.CPUs); svc.Deploy.Resources.Limits.CPUs != nil && !strings.Contains(s, "$") {
		if n, err := strconv.ParseFloat(s, 64); err == nil && n != task.Resources.CPUs {
			ds = append(ds, diff{"compose_cpus", fmt.Sprintf("gives %v cpus", task.Resources.CPUs), fmt.Sprintf("limits it to %v cpus (%s)", n, filepath.Base(file))})
		}
	}
	return ds
}

// recorded is a task as it is recorded (by its JSON names), so that the
// checks read fields other branches are adding without depending on
// their Go names.
type recorded map[string]any

func record(task model.Task) recorded {
	var m recorded
	if b, err := json.Marshal(task); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// str is the string at a path of keys, "" when there is none.
func (r recorded) str(path ...string) string {
	var v any = map[string]any(r)
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// has says whether the task records a field of that name.
func (r recorded) has(key string) bool { return r[key] != nil }

// count is the length of a list field.
func (r recorded) count(key string) int {
	l, _ := r[key].([]any)
	return len(l)
}

func orExitCode(parser string) string {
	if parser == "" {
		return "run-tests.sh's exit code"
	}
	return "the " + parser + " parser"
}

// The older terminal-bench harness's defaults.
const (
	tb1AgentTimeout = 360
	tb1TestTimeout  = 60
)

// checkTB1 reads a task.yaml as terminal-bench 1 reads it and lists what
// the loaded task has otherwise.
func checkTB1(task model.Task) ([]diff, error) {
	data, err := os.ReadFile(filepath.Join(task.Dir, "task.yaml"))
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	rec := record(task)
	var ds []diff
	at, tt := float64(tb1AgentTimeout), float64(tb1TestTimeout)
	if v, ok := number(raw["max_agent_timeout_sec"]); ok {
		at = v
	}
	if v, ok := number(raw["max_test_timeout_sec"]); ok {
		tt = v
	}
	ds = append(ds, durationDiff("agent_timeout", task.AgentTimeout, at)...)
	ds = append(ds, durationDiff("verifier_timeout", task.VerifierTimeout, tt)...)

	// The instruction: instruction, or the "base" entry of descriptions.
	instr, _ := raw["instruction"].(string)
	if descs, ok := raw["descriptions"].([]any); ok {
		for _, d := range descs {
			if m, ok := d.(map[string]any); ok && m["key"] == "base" {
				instr, _ = m["description"].(string)
			}
		}
	}
	if strings.TrimSpace(task.Instruction) != strings.TrimSpace(instr) {
		ds = append(ds, diff{"instruction", fmt.Sprintf("gives %q", firstWords(task.Instruction)), fmt.Sprintf("gives %q", firstWords(instr))})
	}

	// test_scripts: the harness copies each named script into the test
	// directory, from the task or from its own set.
	if names, ok := raw["test_scripts"].([]any); ok {
		for _, n := range names {
			name, _ := n.(string)
			if name != "" && !uploads(task.Verifier.Files, name) {
				ds = append(ds, diff{"test_scripts", fmt.Sprintf("supplies no %s", name), fmt.Sprintf("copies %s into the test directory", name)})
				break
			}
		}
	}

	// parser_name (pytest when absent): the verdict comes from the
	// verifier's output, read by that parser, not from its exit code.
	parser, _ := raw["parser_name"].(string)
	if parser == "" {
		parser = "pytest"
	}
	if got := rec.str("verdict", "parser"); got != parser {
		ds = append(ds, diff{"parser", fmt.Sprintf("judges by %s", orExitCode(got)), "judges by the " + parser + " parser over the test output"})
	}
	ds = append(ds, checkCompose(task, rec, filepath.Join(task.Dir, "docker-compose.yaml"), "client")...)
	return ds, nil
}

// uploads says whether a file named name reaches the container.
func uploads(files []model.Upload, name string) bool {
	for _, u := range files {
		if u.Name == name || filepath.Base(u.From) == name {
			return true
		}
		if u.From != "" {
			if st, err := os.Stat(u.From); err == nil && st.IsDir() {
				if _, err := os.Stat(filepath.Join(u.From, name)); err == nil {
					return true
				}
			}
		}
	}
	return false
}

func firstWords(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
