package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/internal/exactjson"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// A terminal-bench 1 run directory (runs/<run id>): run_metadata.json
// (RunMetadata) and results.json (BenchmarkResults, whose results are
// one TrialResults each), field names and types as the harness's
// pydantic models (terminal_bench.harness.models) write them.

type tbMetadata struct {
	RunID       string   `json:"run_id"`
	AgentName   string   `json:"agent_name"`
	ModelName   *string  `json:"model_name"`
	DatasetPath string   `json:"dataset_path"`
	NAttempts   int      `json:"n_attempts"`
	TaskIDs     []string `json:"task_ids"`
	DatasetSize int      `json:"dataset_size"`
}

type tbRecord struct {
	ID             string  `json:"id"`
	TrialName      string  `json:"trial_name"`
	TaskID         string  `json:"task_id"`
	IsResolved     *bool   `json:"is_resolved"`
	FailureMode    string  `json:"failure_mode"`
	TrialStartedAt *string `json:"trial_started_at"`
	TrialEndedAt   *string `json:"trial_ended_at"`
	AgentStartedAt *string `json:"agent_started_at"`
	AgentEndedAt   *string `json:"agent_ended_at"`
	TestStartedAt  *string `json:"test_started_at"`
	TestEndedAt    *string `json:"test_ended_at"`
}

// tbResults is BenchmarkResults: its records and what the harness
// computed of them (n_resolved, accuracy: written since its first
// releases, absent from hand-made files).
type tbResults struct {
	Results   []tbRecord `json:"results"`
	NResolved *int       `json:"n_resolved"`
	Accuracy  *float64   `json:"accuracy"`
}

// tbHarness is the container terminal-bench's harness runs, which no
// run records: its compose file's cpus and no memory limit, which
// headroom's `--scale cpu --ratios 1x` reproduces (tasks show says so per
// task).
const tbHarness = "terminal-bench harness: compose cpus, no memory limit"

// TerminalBench reads terminal-bench 1 run directories into one
// experiment, under the ratio that gives the harness's container on the
// CPU scale (1x; the manifest's scale is cpu). Every record of
// results.json is a trial, as the harness counts it: its accuracy is
// n_resolved over all records, error records (no verdict, no times)
// included.
func TerminalBench(dirs []string, o Options) (Import, error) {
	if err := DistinctDirs(dirs); err != nil {
		return Import{}, Problems{err.Error()}
	}
	var probs Problems
	var trials []trial
	var sources []store.ImportSource
	var notes []string
	var runs []tbRun
	for _, d := range dirs {
		run, p := readTBRun(d, o)
		probs = append(probs, p...)
		trials = append(trials, run.trials...)
		notes = append(notes, run.notes...)
		sources = append(sources, store.ImportSource{Harness: "terminal-bench", Dir: d, Ratio: model.Ratio{K: 1}, Settings: tbHarness, Trials: len(run.trials), Unknown: unknownNoTelemetry, Own: run.own})
		runs = append(runs, run)
	}
	probs = append(probs, tbDuplicateRuns(runs)...)
	if len(trials) > maxTrials {
		probs = append(probs, tooManyTrials(strings.Join(dirs, ", "), len(trials)))
	}
	if len(probs) > 0 {
		return Import{}, probs
	}
	im := assemble("terminal-bench", trials, sources, o)
	im.Manifest.Scale = model.ScaleCPU
	im.Notes = notes
	return im, nil
}

// tbRun is one run directory read: its trials, and for each the record
// it came from (its identity, tbKey, and where it is in results.json).
type tbRun struct {
	dir    string
	trials []trial
	keys   []string
	wheres []string
	own    *store.HarnessScore
	notes  []string
}

// tbKey is a record's identity: its id (TrialResults.id, a uuid4 the
// harness draws for each trial), or, in a file without ids, its
// trial_name, which the harness makes unique within a run
// (<task>.<attempt>-of-<n>.<run id>) and which names the run.
func tbKey(r tbRecord) string {
	if r.ID != "" {
		return "id " + r.ID
	}
	return "trial_name " + r.TrialName
}

// tbDuplicateRuns refuses the import when one terminal-bench trial (its
// record's id, else its trial_name) is in two run directories: a run
// directory copied (cp -r) and given with the original. `import
// terminal-bench R R2 R3`, R2 and R3 copies of a run of one resolved
// trial, imported 3 trials, "hello · oracle 3/3", each copy's own score
// "the same". Refused, not skipped, as harborDuplicateTrials refuses a
// copied Harbor job: which copy is the run's own cannot be told. One
// line per pair of directories, naming one such trial.
func tbDuplicateRuns(runs []tbRun) Problems {
	type at struct{ dir, where string }
	first := map[string]at{}
	type pair struct{ dir, earlier string }
	count := map[pair]int{}
	example := map[pair][2]string{}
	var order []pair
	for _, run := range runs {
		for i, k := range run.keys {
			f, dup := first[k]
			if !dup {
				first[k] = at{run.dir, run.wheres[i]}
				continue
			}
			p := pair{run.dir, f.dir}
			if count[p] == 0 {
				order = append(order, p)
				example[p] = [2]string{run.wheres[i], f.where}
			}
			count[p]++
		}
	}
	var probs Problems
	for _, p := range order {
		ex := example[p]
		probs = append(probs, fmt.Sprintf("%s: %s already imported from %s (the same terminal-bench trial: e.g. %s repeats %s): a copied run directory, whose trials would count twice; give each run once, without copies", p.dir, model.Quantity(count[p], "trial"), p.earlier, ex[0], ex[1]))
	}
	return probs
}

func readTBRun(dir string, o Options) (tbRun, Problems) {
	run := tbRun{dir: dir}
	var meta tbMetadata
	mfile := filepath.Join(dir, "run_metadata.json")
	rfile := filepath.Join(dir, "results.json")
	data, err := readResultFile(dir, mfile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Some published runs keep results.json alone; without it the
		// directory is no run at all.
		if _, rerr := os.Stat(rfile); rerr != nil {
			return run, Problems{fmt.Sprintf("%s: not a terminal-bench run directory: no run_metadata.json or results.json (give runs/<run id>)", dir)}
		}
		meta.AgentName = "unknown"
		run.notes = append(run.notes, fmt.Sprintf("%s: no run_metadata.json: its agent and model are unknown (agent \"unknown\") and its plan cannot be checked for trials that never ran", dir))
	case err != nil:
		return run, Problems{fmt.Sprintf("%s: %v", mfile, err)}
	default:
		if err := exactjson.Unmarshal(data, &meta); err != nil {
			return run, Problems{fmt.Sprintf("%s: not terminal-bench run metadata: %v", mfile, jsonWhere(data, err))}
		}
	}
	data, err = readResultFile(dir, rfile)
	if errors.Is(err, fs.ErrNotExist) {
		return run, Problems{fmt.Sprintf("%s: no results.json: no trial of the run finished (terminal-bench writes it as each one ends)", dir)}
	}
	if err != nil {
		return run, Problems{fmt.Sprintf("%s: %v", rfile, err)}
	}
	var res tbResults
	if err := exactjson.Unmarshal(data, &res); err != nil {
		return run, Problems{fmt.Sprintf("%s: not terminal-bench results: %v", rfile, jsonWhere(data, err))}
	}
	if len(res.Results) > maxTrials {
		return run, Problems{tooManyTrials(rfile, len(res.Results))}
	}
	agent, mdl := meta.AgentName, ""
	if meta.ModelName != nil && *meta.ModelName != "" {
		mdl = *meta.ModelName
		agent += "@" + mdl
	}
	var probs Problems
	// A record repeated within results.json (the same id, or without
	// ids the same trial_name) is one trial, counted once: a file with
	// one resolved record written twice imported 2 trials, 2/2, where
	// the run had one.
	seen := map[string]int{}
	var repeats []string
	resolved, resolvedOnce := 0, 0
	for i, r := range res.Results {
		where := fmt.Sprintf("%s: results[%d]", rfile, i)
		if r.TaskID == "" || r.TrialName == "" {
			probs = append(probs, where+": no task_id or trial_name")
			continue
		}
		ok := r.IsResolved != nil && *r.IsResolved
		if ok {
			resolved++
		}
		k := tbKey(r)
		if j, dup := seen[k]; dup {
			repeats = append(repeats, fmt.Sprintf("results[%d] repeats results[%d], %s", i, j, k))
			continue
		}
		seen[k] = i
		if ok {
			resolvedOnce++
		}
		run.trials = append(run.trials, tbTrial(dir, meta, agent, mdl, r))
		run.keys = append(run.keys, k)
		run.wheres = append(run.wheres, fmt.Sprintf("%s results[%d]", rfile, i))
	}
	// The plan is checked against the trials, a repeated record once: a
	// run of 2 planned with one record written twice is cut short.
	if planned, n := tbPlanned(meta), len(res.Results)-len(repeats); len(probs) == 0 && planned > n {
		missing := fmt.Sprintf("%s planned in run_metadata.json (%s × %s) but %d in results.json", model.Quantity(planned, "trial"), model.Quantity(planned/max(meta.NAttempts, 1), "task"), model.Quantity(max(meta.NAttempts, 1), "attempt"), n)
		if !o.AllowPartial {
			return run, Problems{fmt.Sprintf("%s: %s: a run still running or cut short; import its finished trials with --allow-partial", dir, missing)}
		}
		run.notes = append(run.notes, fmt.Sprintf("%s: %s: %s that never finished left out", dir, missing, model.Quantity(planned-n, "trial")))
	}
	var repeated string
	if len(repeats) > 0 {
		repeated = fmt.Sprintf("%s repeating an earlier one, the same trial (e.g. %s): each trial counted once", model.Quantity(len(repeats), "record"), repeats[0])
		run.notes = append(run.notes, rfile+": "+repeated)
	}
	run.own = tbOwnScore(res, resolved, resolvedOnce, repeated)
	return run, probs
}

// tbPlanned is how many trials the run's metadata planned (0: unknown):
// its tasks (task_ids, else dataset_size) times its attempts.
func tbPlanned(meta tbMetadata) int {
	tasks := len(meta.TaskIDs)
	if tasks == 0 {
		tasks = meta.DatasetSize
	}
	return tasks * max(meta.NAttempts, 1)
}

// tbTrial is one record as a trial. A record without times (an error the
// harness caught before the trial ran) is a trial all the same: the
// harness counts it, unresolved.
func tbTrial(dir string, meta tbMetadata, agent, mdl string, r tbRecord) trial {
	t := trial{job: dir, name: r.TrialName, task: r.TaskID, agent: agent, ratio: model.Ratio{K: 1},
		start: tbTime(r.TrialStartedAt), end: tbTime(r.TrialEndedAt),
		format: model.FormatTerminalBench, path: filepath.Join(meta.DatasetPath, r.TaskID)}
	t.imported = model.Imported{Harness: "terminal-bench", Job: dir, Trial: r.TrialName, Model: mdl, Exception: r.FailureMode, Settings: tbHarness, Unknown: unknownNoTelemetry}
	for _, ph := range []struct {
		name, phase string
		a, b        *string
	}{{"agent", model.PhaseAgent, r.AgentStartedAt, r.AgentEndedAt}, {"tests", model.PhaseVerifier, r.TestStartedAt, r.TestEndedAt}} {
		if a, b := tbTime(ph.a), tbTime(ph.b); !a.IsZero() && !b.IsZero() {
			t.steps = append(t.steps, model.StepResult{Name: ph.name, Show: ph.name + " (as terminal-bench timed it)", Phase: ph.phase,
				Start: a, End: b, ExitCode: -1, ExitUnknown: "terminal-bench records the phase's time, not its exit status"})
		}
	}
	if t.end.Before(t.start) {
		t.end = t.start
	}
	t.outcome, t.cause, t.reason = tbOutcome(r.IsResolved, r.FailureMode)
	if t.start.IsZero() && t.end.IsZero() {
		t.reason = strings.TrimPrefix(t.reason+"; terminal-bench recorded no times (the trial ended before it started)", "; ")
	}
	return t
}

// tbOwnScore is the run's accuracy as results.json states it, with the
// harness's own resolved count; nil when it states none. resolved is the
// is_resolved records among all of them, repeats included (as the
// harness counted), resolvedOnce among the trials (a repeat once);
// repeated, when not empty, says which records repeat another and were
// counted once here, while the file's score counts them.
func tbOwnScore(res tbResults, resolved, resolvedOnce int, repeated string) *store.HarnessScore {
	if res.Accuracy == nil && res.NResolved == nil {
		return nil
	}
	own := &store.HarnessScore{Metric: "accuracy", From: "results.json accuracy, n_resolved", Passes: -1, Trials: len(res.Results)}
	if res.NResolved != nil {
		own.Passes = *res.NResolved
		own.Value = float64(own.Passes) / float64(max(len(res.Results), 1))
	}
	if res.Accuracy != nil {
		own.Value = *res.Accuracy
	}
	// An n_resolved that counts each trial once is a repeat written after
	// the harness counted: the repeat's line says it, not "edited".
	if own.Passes >= 0 && own.Passes != resolved && (repeated == "" || own.Passes != resolvedOnce) {
		own.Differences = append(own.Differences, fmt.Sprintf("results.json says n_resolved %d, but %d of its records are is_resolved: the file was edited after the harness wrote it", own.Passes, resolved))
	}
	if repeated != "" {
		own.Differences = append(own.Differences, "results.json: "+repeated+", where its score counts every record")
	}
	return own
}

// tbOutcome reads a record: is_resolved is the verdict, whatever the
// failure mode (terminal-bench runs the tests after an agent timeout or
// an agent error, and n_resolved counts the record); the failure mode
// says what happened on the way, and is the outcome only of a record
// the tests did not resolve.
func tbOutcome(resolved *bool, mode string) (model.Outcome, model.Cause, string) {
	failed := mode != "" && mode != "unset" && mode != "none"
	if resolved != nil && *resolved {
		switch {
		case mode == "agent_timeout":
			return model.PassedAfterTimeout, model.CauseAgentTimeout, "resolved after the agent ran past its time limit (agent_timeout): terminal-bench ran the tests on what it left, and they passed"
		case failed:
			return model.Passed, model.CauseNone, "resolved; terminal-bench also recorded " + mode
		}
		return model.Passed, model.CauseNone, ""
	}
	switch mode {
	case "agent_timeout":
		return model.Timeout, model.CauseAgentTimeout, "agent ran past its time limit (agent_timeout), and the tests did not resolve it"
	case "test_timeout":
		return model.Timeout, model.CauseVerifierTimeout, "the tests ran past their time limit (test_timeout)"
	case "agent_installation_failed":
		return model.InfraError, model.CauseEnvironment, "the agent could not be installed (agent_installation_failed)"
	case "unknown_agent_error", "unknown":
		return model.InfraError, model.CauseNone, "terminal-bench recorded " + mode
	}
	why := "unresolved"
	if failed {
		why += " (" + mode + ")"
	}
	return model.Failed, model.CauseNone, why
}

// tbTime reads the harness's ISO times (zero when absent or unreadable).
func tbTime(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	t, _ := parseISOTime(*s)
	return t
}
