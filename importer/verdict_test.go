package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// byTrial indexes an import's records by the harness's own trial name.
func byTrial(im Import) map[string]model.TrialResult {
	out := map[string]model.TrialResult{}
	for _, r := range im.Trials {
		out[r.Imported.Trial] = r
	}
	return out
}

// rates counts an import's records as every report and comparison does.
func rates(im Import) model.Rates {
	var r model.Rates
	for _, t := range im.Trials {
		r.AddCause(t.Outcome, t.Cause)
	}
	return r
}

// is_resolved is terminal-bench's verdict whatever the failure mode: a
// resolved agent_timeout is a pass after a timeout, a resolved record
// with another failure mode a pass with it named, and an error record
// without times (the harness caught an error before the trial ran) a
// trial all the same, unresolved, as n_resolved and accuracy count it.
func TestTerminalBenchVerdictIsResolved(t *testing.T) {
	im, err := TerminalBench([]string{"testdata/tb1/2026-11-23__09-00-00"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := byTrial(im)
	for _, c := range []struct {
		trial   string
		outcome model.Outcome
		cause   model.Cause
		reason  string
	}{
		{"hello-world.1-of-3", model.Passed, model.CauseNone, ""},
		{"hello-world.2-of-3", model.PassedAfterTimeout, model.CauseAgentTimeout, "agent_timeout"},
		{"hello-world.3-of-3", model.Timeout, model.CauseAgentTimeout, "agent_timeout"},
		{"fix-permissions.1-of-3", model.Passed, model.CauseNone, "context_length_exceeded"},
		{"fix-permissions.2-of-3", model.InfraError, model.CauseNone, "no times"},
		{"fix-permissions.3-of-3", model.Failed, model.CauseNone, "parse_error"},
	} {
		r, ok := got[c.trial+".2026-11-23__09-00-00"]
		if !ok {
			t.Errorf("%s: not imported", c.trial)
			continue
		}
		if r.Outcome != c.outcome || r.Cause != c.cause || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("%s: %s (%s) %q, want %s (%s) with %q", c.trial, r.Outcome, r.Cause, r.Reason, c.outcome, c.cause, c.reason)
		}
	}
	if r := got["fix-permissions.2-of-3.2026-11-23__09-00-00"]; !r.Start.IsZero() || !r.End.IsZero() || len(r.Steps) != 0 {
		t.Errorf("the error record: start %v end %v steps %d, want no times invented", r.Start, r.End, len(r.Steps))
	}
	for _, r := range im.Trials {
		if r.Grading != model.GradingHarness {
			t.Errorf("%s: grading %q, want the harness's own (%q)", r.Imported.Trial, r.Grading, model.GradingHarness)
		}
	}
	rs := rates(im)
	own := im.Manifest.Imported[0].Own
	if own == nil || own.Passes != 3 || own.Trials != 6 || own.Value != 0.5 || len(own.Differences) != 0 {
		t.Fatalf("own score %+v, want n_resolved 3 of 6, accuracy 0.5, nothing to explain", own)
	}
	if rs.Successes != own.Passes || rs.Counted != own.Trials {
		t.Errorf("headroom counts %d of %d, the run %d of %d", rs.Successes, rs.Counted, own.Passes, own.Trials)
	}
}

func TestTerminalBenchOutcomes(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		resolved *bool
		mode     string
		want     model.Outcome
	}{
		{&yes, "unset", model.Passed},
		{&yes, "none", model.Passed},
		{&yes, "agent_timeout", model.PassedAfterTimeout},
		{&yes, "unknown_agent_error", model.Passed},
		{&yes, "fatal_llm_parse_error", model.Passed},
		{&no, "agent_timeout", model.Timeout},
		{nil, "test_timeout", model.Timeout},
		{nil, "parse_error", model.Failed},
		{&no, "output_length_exceeded", model.Failed},
		{nil, "agent_installation_failed", model.InfraError},
		{nil, "unknown_agent_error", model.InfraError},
	} {
		if got, _, _ := tbOutcome(c.resolved, c.mode); got != c.want {
			t.Errorf("is_resolved %v, %s: %s, want %s", c.resolved != nil && *c.resolved, c.mode, got, c.want)
		}
	}
}

// copyRun copies a fixture run's files into a fresh directory, results
// cut to its first n records (n < 0: all).
func copyRun(t *testing.T, src string, n int, files ...string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "results.json" && n >= 0 {
			// Cut the array after record n: the records are written one
			// object per "id" at the same indent.
			parts := strings.Split(string(b), "\n        {\n")
			b = []byte(strings.Join(parts[:n+1], "\n        {\n"))
			b = []byte(strings.TrimRight(string(b), ",\n") + "\n    ]\n}\n")
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// A run whose results.json holds fewer records than its metadata
// planned is cut short: refused, or with --allow-partial imported with
// the missing trials said.
func TestTerminalBenchPartialRun(t *testing.T) {
	dir := copyRun(t, "testdata/tb1/2026-11-23__09-00-00", 4, "run_metadata.json", "results.json")
	_, err := TerminalBench([]string{dir}, Options{})
	if err == nil || !strings.Contains(err.Error(), "6 trials planned in run_metadata.json (2 tasks × 3 attempts) but 4 in results.json") || !strings.Contains(err.Error(), "--allow-partial") {
		t.Fatalf("a run cut short: %v", err)
	}
	im, err := TerminalBench([]string{dir}, Options{AllowPartial: true})
	if err != nil || len(im.Trials) != 4 || len(im.Notes) != 1 || !strings.Contains(im.Notes[0], "2 trials that never finished left out") {
		t.Fatalf("--allow-partial: %d trials, notes %q, %v", len(im.Trials), im.Notes, err)
	}
}

// A published run that kept results.json alone is imported, its agent
// said to be unknown.
func TestTerminalBenchWithoutMetadata(t *testing.T) {
	dir := copyRun(t, "testdata/tb1/2026-11-23__09-00-00", -1, "results.json")
	im, err := TerminalBench([]string{dir}, Options{})
	if err != nil || len(im.Trials) != 6 || im.Trials[0].Agent != "unknown" || len(im.Notes) != 1 || !strings.Contains(im.Notes[0], "no run_metadata.json") {
		t.Fatalf("%d trials, agent %q, notes %q, %v", len(im.Trials), im.Trials[0].Agent, im.Notes, err)
	}
	if _, err := TerminalBench([]string{t.TempDir()}, Options{}); err == nil || !strings.Contains(err.Error(), "not a terminal-bench run directory") {
		t.Errorf("an empty directory: %v", err)
	}
}

// Harbor's reward stands beside any exception: an agent timeout with
// reward 1 is a pass after a timeout, a non-zero exit with reward 1 a
// pass with the exit named, a kill (exit 137) with reward 0 a kill; an
// exception that skipped the verifier is a trial Harbor's mean counts
// as 0 (RuntimeError from docker compose: the environment; any other:
// an infra error), a cancelled one is left out of headroom's rates and
// the report says so. Times without a zone (older releases) are read.
func TestHarborRewardStandsBesideException(t *testing.T) {
	im, err := Harbor([]string{"testdata/harbor/older-release"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := byTrial(im)
	for _, c := range []struct {
		trial   string
		outcome model.Outcome
		cause   model.Cause
		reason  string
	}{
		{"fix-git__a1b2c3d", model.Passed, model.CauseNone, ""},
		{"bn-fit-modify__d4e5f6g", model.PassedAfterTimeout, model.CauseAgentTimeout, "AgentTimeoutError"},
		{"sqlite-with-gcov__h7i8j9k", model.Timeout, model.CauseAgentTimeout, "reward 0 < 1"},
		{"build-pmars__l1m2n3o", model.Passed, model.CauseNone, "NonZeroAgentExitCodeError: Command failed (exit 1)"},
		{"compile-compcert__p4q5r6s", model.OOMKilled, model.CauseNone, "exited 137"},
		{"largest-eigenval__t7u8v9w", model.InfraError, model.CauseEnvironment, "Docker compose command failed"},
		{"fix-git__x1y2z3a", model.InfraError, model.CauseNone, "RuntimeError: Command timed out"},
		{"build-pmars__b4c5d6e", model.Cancelled, model.CauseNone, "CancelledError"},
	} {
		r := got[c.trial]
		if r.Outcome != c.outcome || r.Cause != c.cause || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("%s: %s (%s) %q, want %s (%s) with %q", c.trial, r.Outcome, r.Cause, r.Reason, c.outcome, c.cause, c.reason)
		}
	}
	if r := got["fix-git__a1b2c3d"]; !r.Start.Equal(time.Date(2025, 10, 20, 10, 0, 0, 0, time.UTC)) || len(r.Steps) != 4 {
		t.Errorf("zone-less times: start %v, %d steps", r.Start, len(r.Steps))
	}
	own := im.Manifest.Imported[0].Own
	if own == nil || own.Metric != "mean reward" || own.Value != 0.375 || own.Passes != 3 || own.Trials != 8 {
		t.Fatalf("own score %+v, want Harbor's mean 0.375, 3 of 8", own)
	}
	rs := rates(im)
	if rs.Successes != 3 || rs.Counted != 7 || len(own.Differences) != 1 || !strings.Contains(own.Differences[0], "1 trial cancelled") {
		t.Errorf("headroom %d of %d, differences %q: want 3 of 7, the cancelled trial explained", rs.Successes, rs.Counted, own.Differences)
	}
}

// A job's own mean, from its result.json in either release's shape
// (n_completed_trials, or n_trials before), is headroom's pass rate
// when every reward is 0 or 1 and nothing was cancelled.
func TestHarborOwnScoreMatches(t *testing.T) {
	for _, job := range []string{"testdata/harbor/tb2-docker-1x", "testdata/harbor/tb2-gke-3x"} {
		im, err := Harbor([]string{job}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		own, rs := im.Manifest.Imported[0].Own, rates(im)
		if own == nil || own.Passes != rs.Successes || own.Trials != rs.Counted || own.Passes != 12 || own.Trials != 18 || len(own.Differences) != 0 {
			t.Errorf("%s: own %+v, headroom %d of %d", job, own, rs.Successes, rs.Counted)
		}
	}
}

func TestHarborOutcomes(t *testing.T) {
	one, zero := 1.0, 0.0
	for _, c := range []struct {
		exception, message string
		reward             *float64
		want               model.Outcome
	}{
		{"", "", &one, model.Passed},
		{"", "", &zero, model.Failed},
		{"AgentTimeoutError", "Agent execution timed out after 900.0 seconds", &one, model.PassedAfterTimeout},
		{"AgentTimeoutError", "Agent execution timed out after 900.0 seconds", &zero, model.Timeout},
		{"AgentTimeoutError", "Agent execution timed out after 900.0 seconds", nil, model.Timeout},
		{"NonZeroAgentExitCodeError", "Command failed (exit 1): make", &one, model.Passed},
		{"NonZeroAgentExitCodeError", "Command failed (exit 1): make", &zero, model.Failed},
		{"NonZeroAgentExitCodeError", "Command failed (exit 137): pip install pandas", &one, model.PassedAfterOOM},
		{"NonZeroAgentExitCodeError", "Command failed (exit 137): pip install pandas", &zero, model.OOMKilled},
		// The agent's command line and output are the task's words: an
		// instruction about an OOMKilled pod, output saying "exited 137",
		// are no kill of the agent (the twenty-fifth attacker's 1).
		{"NonZeroAgentExitCodeError", "Command failed (exit 1): claude --print -- 'Our worker pod is OOMKilled under load. Fix it.'", &zero, model.Failed},
		{"NonZeroAgentExitCodeError", "Command failed (exit 1): ./run.sh\nstdout: the worker exited 137 (exit code 137)", &zero, model.Failed},
		{"NonZeroAgentExitCodeError", "Agent container OOMKilled", &zero, model.OOMKilled},
		{"ContextWindowExceededError", "context window exceeded", &zero, model.Failed},
		{"ApiRateLimitError", "rate limited", &one, model.Passed},
		{"VerifierTimeoutError", "Verifier execution timed out after 600.0 seconds", nil, model.Timeout},
		{"RewardFileNotFoundError", "No reward file found", nil, model.Failed},
		{"RuntimeError", "Docker compose command failed for environment x. Command: docker compose up -d. Return code: 1.", nil, model.InfraError},
		{"RuntimeError", "Command timed out after 60 seconds", nil, model.InfraError},
		{"CancelledError", "", nil, model.Cancelled},
	} {
		var r harborResult
		if c.exception != "" {
			r.ExceptionInfo = &struct {
				Type    string `json:"exception_type"`
				Message string `json:"exception_message"`
			}{c.exception, c.message}
		}
		if got, _, _ := harborOutcome(r, c.reward, 1, "reward"); got != c.want {
			t.Errorf("%s with reward %v: %s, want %s", c.exception, c.reward != nil && *c.reward == 1, got, c.want)
		}
	}
}

// Why a job's mean is not headroom's pass rate, one cause a line.
func TestHarborDifferences(t *testing.T) {
	half, one := 0.5, 1.0
	trials := []trial{{reward: &one, outcome: model.Passed}, {reward: &half, outcome: model.Failed}, {outcome: model.Cancelled}}
	got := harborDifferences(&store.HarnessScore{Metric: "mean reward", Trials: 4}, trials, 1)
	want := []string{"1 trial cancelled", "rewards other than 0 and 1 (0.5)", "Harbor's result.json counts 4 finished trials, the job directory holds 3 trials"}
	if len(got) != len(want) {
		t.Fatalf("%q, want %d lines", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("line %d %q, want %q", i, got[i], w)
		}
	}
}
