package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/internal/exactjson"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
)

// A Harbor job directory, as `harbor jobs start` writes it: the job's
// config.json and result.json (counts, no trial_name), and one directory
// per trial holding its config.json (TrialConfig) when it starts and its
// result.json (TrialResult) when it ends. The field names and types are
// those of Harbor's pydantic models (harbor.models.trial.result,
// harbor.models.trial.config); only what an import needs is read.

type harborTiming struct {
	StartedAt  *harborTime `json:"started_at"`
	FinishedAt *harborTime `json:"finished_at"`
}

// harborTime is a time as Harbor writes it: ISO 8601 with its zone, or,
// from releases that took datetime.now() without one, no zone (read as
// UTC, which is what those releases' machines mostly ran in; the zone is
// not in the file to say otherwise).
type harborTime struct{ time.Time }

func (h *harborTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a time is a string like 2026-11-20T09:06:10Z: %w", err)
	}
	t, ok := parseISOTime(s)
	if !ok {
		return fmt.Errorf("%q is not an ISO 8601 time", s)
	}
	h.Time = t
	return nil
}

// parseISOTime reads Python's isoformat(), with or without a zone.
func parseISOTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

type harborResult struct {
	ID        string `json:"id"`
	TaskName  string `json:"task_name"`
	TrialName string `json:"trial_name"`
	Config    struct {
		Task struct {
			Path string `json:"path"`
			Name string `json:"name"`
		} `json:"task"`
		Agent struct {
			Name      string `json:"name"`
			ModelName string `json:"model_name"`
		} `json:"agent"`
		Environment struct {
			Type             string         `json:"type"`
			OverrideCPUs     *float64       `json:"override_cpus"`
			OverrideMemoryMB *float64       `json:"override_memory_mb"`
			Kwargs           map[string]any `json:"kwargs"`
		} `json:"environment"`
		JobID string `json:"job_id"`
	} `json:"config"`
	AgentInfo struct {
		Name      string `json:"name"`
		Version   string `json:"version"`
		ModelInfo *struct {
			Name     string `json:"name"`
			Provider string `json:"provider"`
		} `json:"model_info"`
	} `json:"agent_info"`
	VerifierResult *struct {
		Rewards model.RecordedRewards `json:"rewards"`
	} `json:"verifier_result"`
	ExceptionInfo *struct {
		Type    string `json:"exception_type"`
		Message string `json:"exception_message"`
	} `json:"exception_info"`
	StartedAt        *harborTime   `json:"started_at"`
	FinishedAt       *harborTime   `json:"finished_at"`
	EnvironmentSetup *harborTiming `json:"environment_setup"`
	AgentSetup       *harborTiming `json:"agent_setup"`
	AgentExecution   *harborTiming `json:"agent_execution"`
	Verifier         *harborTiming `json:"verifier"`
}

// harborJob is one job directory's trials and what was left out.
type harborJob struct {
	dir     string
	results []harborResult
	files   []string
	missing []string // trial directories with no result.json: unfinished
}

// readHarborJob reads a job directory; its problems are one line each.
func readHarborJob(dir string) (harborJob, Problems) {
	j := harborJob{dir: dir}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return j, Problems{fmt.Sprintf("%s: %v", dir, err)}
	}
	var probs Problems
	// seen is each result.json read, by identity: one file in two trial
	// directories (hard links, or a link within the job) is one trial
	// given twice, refused before it is parsed again (8 links to one
	// 64 MB file took 4.2 GB before the duplicate ids were refused, the
	// thirty-second attacker's 2).
	seen := map[confine.ID]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if len(j.results) >= maxTrials {
			// Stop reading: every trial parsed is held until the
			// experiment is written.
			return j, append(probs, tooManyTrials(dir, len(j.results)+1))
		}
		tdir := filepath.Join(dir, e.Name())
		file := filepath.Join(tdir, "result.json")
		if id, ok := confine.Identity(file); ok {
			if other, dup := seen[id]; dup {
				probs = append(probs, fmt.Sprintf("%s is the same file as %s: each trial writes its own result.json; give the job as Harbor wrote it", file, other))
				continue
			}
			seen[id] = file
		}
		data, err := readResultFile(dir, file)
		if errors.Is(err, fs.ErrNotExist) {
			if _, cerr := os.Stat(filepath.Join(tdir, "config.json")); cerr == nil {
				j.missing = append(j.missing, tdir)
			}
			continue
		}
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: %v", file, err))
			continue
		}
		var r harborResult
		if err := exactjson.Unmarshal(data, &r); err != nil {
			probs = append(probs, fmt.Sprintf("%s: not a Harbor trial result: %v", file, jsonWhere(data, err)))
			continue
		}
		if r.TrialName == "" || r.TaskName == "" {
			probs = append(probs, fmt.Sprintf("%s: not a Harbor trial result: no trial_name or task_name", file))
			continue
		}
		if r.FinishedAt == nil {
			j.missing = append(j.missing, tdir)
			continue
		}
		j.results = append(j.results, r)
		j.files = append(j.files, file)
	}
	if len(j.results) == 0 && len(j.missing) == 0 && len(probs) == 0 {
		probs = append(probs, fmt.Sprintf("%s: not a Harbor job directory: no trial directory with a result.json under it (give the directory Harbor wrote for the job, jobs/<job name>)", dir))
	}
	return j, probs
}

// jsonWhere says where in the file a JSON error is.
func jsonWhere(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := strings.Count(string(data[:min(int(se.Offset), len(data))]), "\n") + 1
		return fmt.Sprintf("line %d: %v", line, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %s: %v is not a %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// Harbor reads Harbor job directories into one experiment: each job's
// resource settings become a ratio (or a named configuration, when they
// are no multiple of the task's spec), each trial a record.
func Harbor(dirs []string, o Options) (Import, error) {
	if o.PassReward == 0 {
		o.PassReward = 1
	}
	if err := DistinctDirs(dirs); err != nil {
		return Import{}, Problems{err.Error()}
	}
	var probs Problems
	var jobs []harborJob
	held := 0
	for _, d := range dirs {
		j, p := readHarborJob(d)
		probs = append(probs, p...)
		if held += len(j.results); held > maxTrials {
			return Import{}, append(probs, tooManyTrials(strings.Join(dirs, ", "), held))
		}
		if len(j.missing) > 0 && !o.AllowPartial {
			probs = append(probs, fmt.Sprintf("%s: %s never finished (no result.json, or no finished_at), e.g. %s: a job still running or cut short; import its finished trials with --allow-partial", d, model.Quantity(len(j.missing), "trial"), filepath.Base(j.missing[0])))
		}
		jobs = append(jobs, j)
	}
	probs = append(probs, harborDuplicateTrials(jobs)...)
	if len(probs) > 0 {
		return Import{}, probs
	}
	specs := map[string]*model.Resources{}
	var trials []trial
	var sources []store.ImportSource
	var notes []string
	for _, j := range jobs {
		if len(j.missing) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s left out", j.dir, model.Quantity(len(j.missing), "unfinished trial")))
		}
		ratio, settings := harborJobRatio(j, specs)
		var jobTrials []trial
		for i, r := range j.results {
			t := harborTrial(j.dir, r, o.PassReward)
			t.ratio, t.imported.Settings = ratio, settings
			t.spec = specs[j.files[i]]
			if t.spec != nil {
				t.policy = harborPolicy(*t.spec, r, ratio)
			}
			jobTrials = append(jobTrials, t)
		}
		trials = append(trials, jobTrials...)
		own, note := harborOwnScore(j.dir, jobTrials, o.PassReward)
		if note != "" {
			notes = append(notes, note)
		}
		sources = append(sources, store.ImportSource{Harness: "harbor", Dir: j.dir, Ratio: ratio, Settings: settings, Trials: len(j.results), Unknown: unknownNoTelemetry, Own: own})
	}
	im := assemble("harbor", trials, sources, o)
	im.Notes = notes
	return im, nil
}

// harborJobResult is the job's result.json (JobResult) as far as its
// score goes: the finished trials (n_completed_trials; n_trials before
// Harbor renamed it) and, per agent · model · dataset, the metrics
// (Mean by default: every finished trial's reward, none counting 0) and
// which trials got which reward.
type harborJobResult struct {
	Stats struct {
		NCompleted *int `json:"n_completed_trials"`
		NTrials    *int `json:"n_trials"`
		Evals      map[string]struct {
			Metrics     []map[string]any               `json:"metrics"`
			RewardStats map[string]map[string][]string `json:"reward_stats"`
		} `json:"evals"`
	} `json:"stats"`
}

// harborOwnScore is the job's score as Harbor wrote it in the job's
// result.json, and why headroom's count of the same trials differs,
// if it does; nil (and a note saying why, when there is one) without
// a score to read.
func harborOwnScore(dir string, trials []trial, pass float64) (*store.HarnessScore, string) {
	file := filepath.Join(dir, "result.json")
	data, err := readResultFile(dir, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	var jr harborJobResult
	if err == nil {
		err = exactjson.Unmarshal(data, &jr)
		if err != nil {
			err = errors.New(jsonWhere(data, err))
		}
	}
	if err != nil {
		return nil, fmt.Sprintf("%s: the job's own score not read (%v): the report shows headroom's count alone", file, err)
	}
	own := &store.HarnessScore{Passes: -1, Trials: len(trials), From: "result.json"}
	switch {
	case jr.Stats.NCompleted != nil:
		own.Trials, own.From = *jr.Stats.NCompleted, "result.json stats.n_completed_trials"
	case jr.Stats.NTrials != nil:
		own.Trials, own.From = *jr.Stats.NTrials, "result.json stats.n_trials"
	}
	passes, means, counted := 0, 0, true
	var mean float64
	for _, ev := range jr.Stats.Evals {
		for _, m := range ev.Metrics {
			if v, ok := m["mean"].(float64); ok {
				mean, means = v, means+1
			}
		}
		byValue, ok := ev.RewardStats["reward"]
		if !ok && len(ev.RewardStats) == 1 {
			for _, v := range ev.RewardStats {
				byValue = v
			}
		} else if !ok && len(ev.RewardStats) > 1 {
			counted = false
		}
		for value, names := range byValue {
			if v, err := strconv.ParseFloat(value, 64); err == nil && v >= pass {
				passes += len(names)
			}
		}
	}
	switch {
	case len(jr.Stats.Evals) == 0:
		return nil, ""
	case means == 1 && len(jr.Stats.Evals) == 1:
		own.Metric, own.Value, own.From = "mean reward", mean, own.From+", evals.*.metrics mean"
	case counted:
		own.Metric, own.Value = fmt.Sprintf("trials at reward ≥ %g", pass), float64(passes)/float64(max(own.Trials, 1))
	default:
		return nil, ""
	}
	if counted {
		own.Passes, own.From = passes, own.From+", reward_stats"
	}
	own.Differences = harborDifferences(own, trials, pass)
	return own, ""
}

// harborDifferences say why headroom's pass rate over a job's trials is
// not Harbor's score of them, one line per cause.
func harborDifferences(own *store.HarnessScore, trials []trial, pass float64) []string {
	var out []string
	cancelled, partial := 0, map[float64]bool{}
	for _, t := range trials {
		if !t.outcome.Counted() {
			cancelled++
		}
		if t.reward != nil && *t.reward != 0 && *t.reward != pass {
			partial[*t.reward] = true
		}
	}
	if cancelled > 0 {
		out = append(out, fmt.Sprintf("%s cancelled: Harbor's mean counts each as reward 0, headroom's rates leave cancelled trials out", model.Quantity(cancelled, "trial")))
	}
	if len(partial) > 0 && own.Metric == "mean reward" {
		var vs []string
		for v := range partial {
			vs = append(vs, fmt.Sprintf("%g", v))
		}
		sort.Strings(vs)
		out = append(out, fmt.Sprintf("rewards other than 0 and %g (%s): Harbor's mean averages them, headroom passes a trial at reward ≥ %g", pass, strings.Join(vs, ", "), pass))
	}
	if own.Trials != len(trials) {
		out = append(out, fmt.Sprintf("Harbor's result.json counts %s, the job directory holds %s with a result", model.Quantity(own.Trials, "finished trial"), model.Quantity(len(trials), "trial")))
	}
	return out
}

// harborSettings is the resource settings a trial ran with, as its
// config recorded them.
func harborSettings(r harborResult) string {
	env := r.Config.Environment
	typ := env.Type
	if typ == "" {
		typ = "docker" // Harbor's default environment
	}
	parts := []string{typ}
	if env.OverrideCPUs != nil {
		parts = append(parts, fmt.Sprintf("override_cpus=%g", *env.OverrideCPUs))
	}
	if env.OverrideMemoryMB != nil {
		parts = append(parts, fmt.Sprintf("override_memory_mb=%g", *env.OverrideMemoryMB))
	}
	if v, ok := env.Kwargs["memory_limit_multiplier"]; ok {
		parts = append(parts, fmt.Sprintf("memory_limit_multiplier=%v", v))
	}
	return strings.Join(parts, ", ")
}

// harborJobRatio tells the job's resource settings as a ratio where they
// are one: Harbor's Docker environment limits each container to its
// task's spec (1x); GKE's memory_limit_multiplier k is kx (none: no
// limit, uncapped); an absolute override is a ratio only where every
// task's spec can be read (its task directory, at the path the trial's
// config names) and gives the same multiple. Anything else is a named
// configuration, its settings as written.
func harborJobRatio(j harborJob, specs map[string]*model.Resources) (model.Ratio, string) {
	settings := map[string]bool{}
	for _, r := range j.results {
		settings[harborSettings(r)] = true
	}
	if len(settings) != 1 {
		var all []string
		for s := range settings {
			all = append(all, s)
		}
		sort.Strings(all)
		return model.Ratio{Name: filepath.Base(j.dir)}, "mixed: " + strings.Join(all, "; ")
	}
	var s string
	for k := range settings {
		s = k
	}
	r0 := j.results[0]
	env := r0.Config.Environment
	from, note := map[string]bool{}, ""
	for i, r := range j.results {
		if dir, l, err := taskfile.FindRecordedTaskDir(j.dir, r.Config.Task.Path, r.TaskName); err == nil {
			res := l.Task.Resources
			specs[j.files[i]] = &res
			from[dir] = true
		}
	}
	if len(from) > 0 {
		// Where the spec a ratio is reckoned from was read: the same job
		// made 32x or 2x by the task directory under the working
		// directory, and nothing said which (the twenty-sixth attacker's
		// 3).
		dirs := slices.Sorted(maps.Keys(from))
		if len(dirs) > 3 {
			dirs = append(dirs[:3], fmt.Sprintf("%d more", len(from)-3))
		}
		note = "; spec read from " + strings.Join(dirs, ", ")
	}
	typ := env.Type
	switch {
	case env.OverrideMemoryMB == nil && env.OverrideCPUs == nil && (typ == "" || typ == "docker"):
		return model.Ratio{K: 1}, s + note
	case typ == "gke" && env.OverrideMemoryMB == nil && env.OverrideCPUs == nil:
		v, ok := env.Kwargs["memory_limit_multiplier"]
		if !ok || v == nil {
			return model.Uncapped, s + note
		}
		if k, ok := v.(float64); ok && k >= 1 {
			return model.Ratio{K: math.Round(k*1000) / 1000}, s + note
		}
	case env.OverrideMemoryMB != nil && env.OverrideCPUs == nil:
		k, uniform := 0.0, true
		for _, f := range j.files {
			spec := specs[f]
			if spec == nil {
				uniform = false
				break
			}
			kk := math.Round(*env.OverrideMemoryMB*float64(model.MiB)/float64(spec.MemoryBytes)*1000) / 1000
			if k != 0 && kk != k {
				uniform = false
			}
			k = kk
		}
		if uniform && k >= 1 {
			return model.Ratio{K: k}, s + note
		}
	}
	name := strings.NewReplacer(", ", "-", "=", "", " ", "").Replace(s)
	return model.Ratio{Name: name}, s + note
}

// harborPolicy is what the trial's container had, where its spec is
// known: the spec guaranteed (Harbor sets no reservation on Docker:
// said in the settings), the limit the override's or the ratio's.
func harborPolicy(spec model.Resources, r harborResult, ratio model.Ratio) model.ResourcePolicy {
	p := model.NewPolicy(spec, ratio, 0)
	if ratio.Name != "" {
		p = model.ResourcePolicy{Ratio: ratio, GuaranteeBytes: spec.MemoryBytes, GuaranteeCPUs: spec.CPUs}
	}
	env := r.Config.Environment
	if env.OverrideMemoryMB != nil {
		p.HardLimitBytes = int64(*env.OverrideMemoryMB) * model.MiB
	}
	if env.OverrideCPUs != nil {
		p.LimitCPUs = *env.OverrideCPUs
	}
	return p
}

// harborTrial turns one trial result into a record: its outcome and
// cause from its exception where Harbor's says enough, its reward, and
// its phases' durations as steps (their exit codes are not recorded).
func harborTrial(job string, r harborResult, pass float64) trial {
	t := trial{job: job, name: r.TrialName, task: r.TaskName, format: model.FormatHarbor, path: r.Config.Task.Path}
	agent := r.AgentInfo.Name
	if agent == "" {
		agent = r.Config.Agent.Name
	}
	mdl := r.Config.Agent.ModelName
	if mdl == "" && r.AgentInfo.ModelInfo != nil {
		mdl = r.AgentInfo.ModelInfo.Name
	}
	t.agent = agent
	if mdl != "" {
		t.agent = agent + "@" + mdl
	}
	if r.StartedAt != nil {
		t.start = r.StartedAt.Time
	}
	t.end = r.FinishedAt.Time
	t.imported = model.Imported{Harness: "harbor", Job: job, Trial: r.TrialName, Model: mdl, Unknown: unknownNoTelemetry}
	for _, ph := range []struct {
		name, phase string
		tm          *harborTiming
	}{{"environment setup", "setup", r.EnvironmentSetup}, {"agent setup", model.PhaseInstall, r.AgentSetup},
		{"agent", model.PhaseAgent, r.AgentExecution}, {"verifier", model.PhaseVerifier, r.Verifier}} {
		if ph.tm == nil || ph.tm.StartedAt == nil || ph.tm.FinishedAt == nil {
			continue
		}
		t.steps = append(t.steps, model.StepResult{Name: ph.name, Show: ph.name + " (as Harbor timed it)", Phase: ph.phase,
			Start: ph.tm.StartedAt.Time, End: ph.tm.FinishedAt.Time, ExitCode: -1, ExitUnknown: "Harbor records the phase's time, not its exit status"})
	}
	var rewardNote string
	if v := r.VerifierResult; v != nil && len(v.Rewards) > 0 {
		rw := model.ScalarReward(v.Rewards)
		t.reward = &rw
		if rw < pass {
			rewardNote = fmt.Sprintf("reward %g < %g", rw, pass)
		}
	} else {
		rewardNote = "no reward recorded"
	}
	if e := r.ExceptionInfo; e != nil {
		t.imported.Exception, t.imported.Message = e.Type, firstLine(e.Message)
	}
	t.outcome, t.cause, t.reason = harborOutcome(r, t.reward, pass, rewardNote)
	return t
}

// harborOutcome reads a trial's reward as its verdict and its
// exception as what happened on the way. The reward stands beside any
// exception, as in Harbor: its trial records an agent's timeout or
// non-zero exit and runs the verifier all the same, and its metrics
// average every finished trial's reward (none counting 0) whatever its
// exception. Without a passing reward the exception says the outcome
// where it tells: a timeout by its type, an environment that failed to
// start, a kill (exit 137: Harbor's Docker shows an OOM kill only so,
// and the kernel's word is not in the job directory).
func harborOutcome(r harborResult, reward *float64, pass float64, rewardNote string) (model.Outcome, model.Cause, string) {
	passed := reward != nil && *reward >= pass
	e := r.ExceptionInfo
	if e == nil || e.Type == "" {
		if passed {
			return model.Passed, model.CauseNone, ""
		}
		return model.Failed, model.CauseNone, rewardNote
	}
	msg := firstLine(e.Message)
	said := e.Type
	if msg != "" {
		said += ": " + msg
	}
	kill := "the agent exited 137, killed (as Harbor's Docker shows an OOM kill; the kernel's word is not in the job, so the limit it hit is not known): " + said
	switch {
	case e.Type == "AgentTimeoutError" && passed:
		return model.PassedAfterTimeout, model.CauseAgentTimeout, "passed after the agent ran past its time limit (" + said + "): Harbor ran the verifier on what the agent left"
	case e.Type == "AgentTimeoutError":
		return model.Timeout, model.CauseAgentTimeout, "agent ran past its time limit (" + said + "); " + rewardNote
	case e.Type == "NonZeroAgentExitCodeError" && killed137(e.Message) && passed:
		return model.PassedAfterOOM, model.CauseNone, "passed although " + kill
	case e.Type == "NonZeroAgentExitCodeError" && killed137(e.Message):
		return model.OOMKilled, model.CauseNone, kill
	case passed:
		return model.Passed, model.CauseNone, "passed; Harbor also recorded " + said
	case reward != nil:
		// The verifier ran and did not pass it: the task failed, with
		// the exception beside (a non-zero exit, an API error, ...).
		return model.Failed, model.CauseNone, rewardNote + "; Harbor also recorded " + said
	}
	switch e.Type {
	case "VerifierTimeoutError":
		return model.Timeout, model.CauseVerifierTimeout, "verifier ran past its time limit (" + said + ")"
	case "AgentSetupTimeoutError":
		return model.Timeout, model.CauseAgentTimeout, "the agent's setup ran past its time limit (" + said + ")"
	case "EnvironmentStartTimeoutError", "EnvironmentBuildError", "DockerComposeError":
		return model.InfraError, model.CauseEnvironment, "the environment failed to start (" + said + ")"
	case "CancelledError", "KeyboardInterrupt":
		return model.Cancelled, model.CauseNone, "cancelled (" + said + ")"
	case "RewardFileNotFoundError", "RewardFileEmptyError", "VerifierOutputParseError":
		return model.Failed, model.CauseNone, "the verifier gave no reward (" + said + ")"
	case "NonZeroAgentExitCodeError":
		return model.Failed, model.CauseNone, rewardNote + "; the agent exited non-zero (" + said + ")"
	}
	if strings.Contains(e.Message, "Docker compose command failed") || strings.Contains(e.Message, "docker compose") {
		return model.InfraError, model.CauseEnvironment, "the environment failed (" + said + ")"
	}
	return model.InfraError, model.CauseNone, "Harbor recorded " + said + " (" + rewardNote + ")"
}

// killed137 says whether an agent's exit was a SIGKILL: the exit code
// the message gives first, where Harbor puts its own ("Command failed
// (exit 137): CMD ..."). What follows is the agent's command line and
// output, which are the task's words: an instruction about an
// "OOMKilled" pod, or output saying "exited 137", made an agent that
// exited 1 an OOM kill (the twenty-fifth attacker's 1). "OOMKilled"
// counts only in a message that gives no exit code, on its first line.
func killed137(msg string) bool {
	if m := exitCodeSaid.FindStringSubmatch(msg); m != nil {
		for _, n := range m[1:] {
			if n != "" {
				return n == "137"
			}
		}
	}
	line, _, _ := strings.Cut(msg, "\n")
	return strings.Contains(line, "OOMKilled")
}

// exitCodeSaid finds an exit code as harnesses and shells say one.
var exitCodeSaid = regexp.MustCompile(`\(exit (\d+)\)|exit code (\d+)|exited with code (\d+)|exited (\d+)`)

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

// harborDuplicateTrials refuses the import when one Harbor trial (its
// result.json's id) is in it twice: a job directory copied (cp -r) and
// given with the original, or a trial directory copied within a job.
// Refused, not skipped: which copy is the job's own cannot be told, and
// a copied job with its own settings would silently import as a ratio it
// never ran. One line per pair of directories, naming one such trial.
// An older Harbor's result has no id: its trial_name (the task's and a
// random suffix, unique in a job) tells the copies instead; a trial
// directory copied under another name in such a job imported 9 trials
// from 8, 4 passed against the job's own 3 (the thirtieth attacker's).
func harborDuplicateTrials(jobs []harborJob) Problems {
	type at struct{ job, file string }
	type key struct{ by, v string }
	first := map[key]at{}
	type pair struct{ job, earlier, by string }
	count := map[pair]int{}
	example := map[pair][2]string{}
	var order []pair
	for _, j := range jobs {
		for i, r := range j.results {
			k := key{"id", r.ID}
			if r.ID == "" {
				k = key{"trial_name", r.TrialName}
			}
			f, dup := first[k]
			if !dup {
				first[k] = at{j.dir, j.files[i]}
				continue
			}
			p := pair{j.dir, f.job, k.by}
			if count[p] == 0 {
				order = append(order, p)
				example[p] = [2]string{j.files[i], f.file}
			}
			count[p]++
		}
	}
	var probs Problems
	for _, p := range order {
		ex := example[p]
		where := "already imported from " + p.earlier
		if p.job == p.earlier {
			where = "already in the same job"
		}
		same := "the same Harbor trial id"
		if p.by == "trial_name" {
			same = "the same trial_name, and no id to tell them apart"
		}
		probs = append(probs, fmt.Sprintf("%s: %s %s (%s: e.g. %s repeats %s): a copied job or trial directory, whose trials would count twice; give each job once, without copies", p.job, model.Quantity(count[p], "trial"), where, same, ex[0], ex[1]))
	}
	return probs
}
