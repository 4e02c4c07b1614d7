package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
)

// loadTBAgents loads a task directory from testdata with all its agents
// and builds its image.
func loadTBAgents(t *testing.T, dir string) model.Task {
	t.Helper()
	l, err := taskfile.LoadTaskDir("testdata/tb/" + dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if l.Task.Image, err = EnsureTaskImage(ctx, testCli, l.Task, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	return l.Task
}

func byAgent(results []model.TrialResult) map[string]model.TrialResult {
	m := map[string]model.TrialResult{}
	for _, r := range results {
		m[r.Agent] = r
	}
	return m
}

// An older terminal-bench SWE-bench task: its run-tests.sh exits 0 whatever
// the tests say and prints the grader's verdict between markers. Judged by
// the exit code, the untouched environment would pass; judged as
// terminal-bench judges it, nop fails and the oracle passes.
func TestSWEBenchStyleVerdictNopFailsOraclePasses(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadTBAgents(t, "tb1-swebench")
	if task.Verdict.String() != "parser:swebench" {
		t.Fatalf("verdict rule %s", task.Verdict)
	}
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{Uncapped: true}}, 1, context.Background(), nil)
	r := byAgent(results)
	nop, oracle := r[taskfile.AgentNop], r[taskfile.AgentOracle]
	for _, res := range results {
		for _, s := range res.Steps {
			t.Logf("%s %s: %s exit %s", res.Agent, s.Phase, s.Name, s.ExitText())
		}
	}
	if nop.Outcome != model.Failed || !strings.Contains(nop.Reason, "the SWE-bench grader reported \"FAILED\", not PASSED") {
		t.Errorf("nop: %s (%s), want failed by the grader's FAILED", nop.Outcome, nop.Reason)
	}
	// The nop trial's run-tests.sh exited 0 (its last command, the
	// grader, did; the failing tests' pipeline was `|| true`'d): the exit
	// code would have passed it.
	var last model.StepResult
	for _, s := range nop.Steps {
		if s.Phase == "verifier" {
			last = s
		}
	}
	if last.ExitCode != 0 || last.ExitUnknown != "" {
		t.Errorf("nop verifier's last step %s exited %s: the fixture no longer shows an exit-0 failure", last.Name, last.ExitText())
	}
	if oracle.Outcome != model.Passed || oracle.Tests == nil || oracle.Tests.Passed != 1 {
		t.Errorf("oracle: %s (%s) tests %+v, want passed", oracle.Outcome, oracle.Reason, oracle.Tests)
	}
	for _, res := range results {
		if res.Verdict != "parser:swebench" {
			t.Errorf("%s: verdict recorded %q", res.Agent, res.Verdict)
		}
	}
}

// A deveval-style task names the harness's helper scripts in test_scripts;
// headroom supplies its own, run-tests.sh sources and runs them, and the
// pytest parser judges the output. (apt-get, curl and uv are stand-ins in
// the fixture's image: there is no network here.)
func TestDevEvalStyleSuppliedScripts(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadTBAgents(t, "tb1-deveval")
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{Uncapped: true}}, 1, context.Background(), nil)
	r := byAgent(results)
	nop, oracle := r[taskfile.AgentNop], r[taskfile.AgentOracle]
	var verifier []string
	for _, s := range oracle.Steps {
		if s.Phase == "verifier" {
			verifier = append(verifier, s.Name, s.Output)
		}
		t.Logf("oracle %s: %s exit %d %q", s.Phase, s.Name, s.ExitCode, s.Output)
	}
	// The supplied scripts' own commands ran, in order (as steps of their
	// own, or traced inside the step that sourced them).
	want := []string{"apt-get update", "apt-get install -y curl", "uv init", "uv add pytest", "bash /tests/run-uv-pytest.sh", "PASSED /tests/test_outputs.py::test_greeting_exists"}
	got := strings.Join(verifier, "\n")
	at := 0
	for _, w := range want {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("verifier steps lack %q after position %d:\n%s", w, at, got)
		}
		at += i + len(w)
	}
	if oracle.Outcome != model.Passed || oracle.Tests == nil || oracle.Tests.Passed != 2 {
		t.Errorf("oracle: %s (%s) tests %+v, want passed with 2 tests", oracle.Outcome, oracle.Reason, oracle.Tests)
	}
	if nop.Outcome != model.Failed || !strings.Contains(nop.Reason, "2 of 2 tests failed: test_greeting_exists, test_greeting_says_hello") {
		t.Errorf("nop: %s (%s), want both tests named as failed", nop.Outcome, nop.Reason)
	}
}
