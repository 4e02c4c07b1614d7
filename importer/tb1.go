package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// A terminal-bench 1 run directory (runs/<run id>): run_metadata.json
// (RunMetadata) and results.json (BenchmarkResults, whose results are
// one TrialResults each), field names and types as the harness's
// pydantic models (terminal_bench.harness.models) write them.

type tbMetadata struct {
	RunID       string  `json:"run_id"`
	AgentName   string  `json:"agent_name"`
	ModelName   *string `json:"model_name"`
	DatasetPath string  `json:"dataset_path"`
	NAttempts   int     `json:"n_attempts"`
}

type tbResults struct {
	Results []struct {
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
	} `json:"results"`
}

// tbHarness is the container terminal-bench's harness runs, which no
// run records: its compose file's cpus and no memory limit, which
// headroom's `--scale cpu --ratios 1x` reproduces (tasks show says so per
// task).
const tbHarness = "terminal-bench harness: compose cpus, no memory limit"

// TerminalBench reads terminal-bench 1 run directories into one
// experiment, under the ratio that gives the harness's container on the
// CPU scale (1x; the manifest's scale is cpu).
func TerminalBench(dirs []string, o Options) (Import, error) {
	var probs Problems
	var trials []trial
	var sources []store.ImportSource
	for _, d := range dirs {
		ts, p := readTBRun(d)
		probs = append(probs, p...)
		trials = append(trials, ts...)
		sources = append(sources, store.ImportSource{Harness: "terminal-bench", Dir: d, Ratio: model.Ratio{K: 1}, Settings: tbHarness, Trials: len(ts), Unknown: unknownNoTelemetry})
	}
	if len(probs) > 0 {
		return Import{}, probs
	}
	im := assemble("terminal-bench", trials, sources, o)
	im.Manifest.Scale = model.ScaleCPU
	return im, nil
}

func readTBRun(dir string) ([]trial, Problems) {
	var meta tbMetadata
	mfile := filepath.Join(dir, "run_metadata.json")
	data, err := os.ReadFile(mfile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Problems{fmt.Sprintf("%s: not a terminal-bench run directory: no run_metadata.json (give runs/<run id>)", dir)}
	}
	if err != nil {
		return nil, Problems{fmt.Sprintf("%s: %v", mfile, err)}
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, Problems{fmt.Sprintf("%s: not terminal-bench run metadata: %v", mfile, jsonWhere(data, err))}
	}
	rfile := filepath.Join(dir, "results.json")
	data, err = os.ReadFile(rfile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Problems{fmt.Sprintf("%s: no results.json: the run did not finish (terminal-bench writes it at the end)", dir)}
	}
	if err != nil {
		return nil, Problems{fmt.Sprintf("%s: %v", rfile, err)}
	}
	var res tbResults
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, Problems{fmt.Sprintf("%s: not terminal-bench results: %v", rfile, jsonWhere(data, err))}
	}
	agent, mdl := meta.AgentName, ""
	if meta.ModelName != nil && *meta.ModelName != "" {
		mdl = *meta.ModelName
		agent += "@" + mdl
	}
	var out []trial
	var probs Problems
	for i, r := range res.Results {
		where := fmt.Sprintf("%s: results[%d]", rfile, i)
		if r.TaskID == "" || r.TrialName == "" {
			probs = append(probs, where+": no task_id or trial_name")
			continue
		}
		start, end := tbTime(r.TrialStartedAt), tbTime(r.TrialEndedAt)
		if end.IsZero() {
			probs = append(probs, fmt.Sprintf("%s (%s): no trial_ended_at: the trial did not finish", where, r.TrialName))
			continue
		}
		t := trial{job: dir, name: r.TrialName, task: r.TaskID, agent: agent, ratio: model.Ratio{K: 1}, start: start, end: end,
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
		t.outcome, t.cause, t.reason = tbOutcome(r.IsResolved, r.FailureMode)
		out = append(out, t)
	}
	return out, probs
}

// tbOutcome reads the harness's verdict and failure mode.
func tbOutcome(resolved *bool, mode string) (model.Outcome, model.Cause, string) {
	switch mode {
	case "agent_timeout":
		return model.Timeout, model.CauseAgentTimeout, "agent ran past its time limit (agent_timeout)"
	case "test_timeout":
		return model.Timeout, model.CauseVerifierTimeout, "the tests ran past their time limit (test_timeout)"
	case "agent_installation_failed":
		return model.InfraError, model.CauseEnvironment, "the agent could not be installed (agent_installation_failed)"
	case "unknown_agent_error", "unknown":
		return model.InfraError, model.CauseNone, "terminal-bench recorded " + mode
	}
	if resolved != nil && *resolved {
		return model.Passed, model.CauseNone, ""
	}
	why := "unresolved"
	if mode != "" && mode != "unset" && mode != "none" {
		why += " (" + mode + ")"
	}
	return model.Failed, model.CauseNone, why
}

// tbTime reads the harness's ISO times (zero when absent or unreadable).
func tbTime(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, *s); err == nil {
			return t
		}
	}
	return time.Time{}
}
