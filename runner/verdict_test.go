package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// A parser-judged verifier (terminal-bench's task.yaml) is decided by what
// its output says, not by its exit code; the record says why it failed.
func TestParserDecidesTheVerifier(t *testing.T) {
	sweOut := func(word string) []string {
		return []string{"PASSED t.py::test_a", "SWEBench results starts here", word, "SWEBench results ends here"}
	}
	cases := []struct {
		name    string
		parser  string
		lines   []string
		exit    int
		outcome model.Outcome
		reason  string
		tally   string
	}{
		{"swebench FAILED, exit 0", "swebench", sweOut("FAILED"), 0, model.Failed, "the SWE-bench grader reported \"FAILED\", not PASSED", "0/1"},
		{"swebench PASSED, exit 1", "swebench", sweOut("PASSED"), 1, model.Passed, "", "1/0"},
		{"swebench no markers", "swebench", []string{"uv: command not found"}, 0, model.Failed, "no SWEBench results", ""},
		{"pytest failures, exit 0", "pytest", []string{"=== short test summary info ===", "PASSED t.py::test_a", "FAILED t.py::test_b - boom", "ERROR t.py::test_c"}, 0,
			model.Failed, "2 of 3 tests failed: test_b, test_c", "1/2"},
		{"pytest without summary", "pytest", []string{"6 passed in 0.1s"}, 0, model.Failed, "short test summary info", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := fake.Task("tb1/p", 64<<20, "solve")
			task.Verdict.Parser = c.parser
			b := &fake.Backend{Script: script(map[string]fake.StepPlan{"tb1/p/verify": {Lines: c.lines, ExitCode: c.exit}})}
			r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["tb1/p@1x"]
			if r.Outcome != c.outcome || !strings.Contains(r.Reason, c.reason) {
				t.Fatalf("outcome %s (%s), want %s (%q)", r.Outcome, r.Reason, c.outcome, c.reason)
			}
			if r.Verdict != "parser:"+c.parser {
				t.Errorf("verdict recorded as %q", r.Verdict)
			}
			tally := ""
			if r.Tests != nil {
				tally = fmt.Sprintf("%d/%d", r.Tests.Passed, r.Tests.Failed)
			}
			if tally != c.tally {
				t.Errorf("tests %q, want %q", tally, c.tally)
			}
		})
	}
}

// The parser reads the verifier's whole output, across the commands of a
// traced script and past the tail a step record keeps.
func TestParserReadsTheWholeTracedOutput(t *testing.T) {
	task := fake.Task("tb1/long", 64<<20, "solve")
	task.Verdict.Parser = "pytest"
	task.Verifier = model.Step{Name: "verify", Argv: []string{"/tests/run-tests.sh"}, Trace: true}
	// Past the head a step's record keeps (StepHeadLines), before its tail.
	lines := []string{"!" + traceLine(1, "pytest -rA")}
	for i := 0; i < runner.StepHeadLines; i++ {
		lines = append(lines, "collecting ...")
	}
	lines = append(lines, "=== short test summary info ===", "FAILED t.py::test_first - no")
	for i := 0; i < 500; i++ {
		lines = append(lines, fmt.Sprintf("PASSED t.py::test_%d", i))
	}
	lines = append(lines, "!"+traceLine(1, "echo done"), "done")
	b := &fake.Backend{Script: stripBang(script(map[string]fake.StepPlan{"tb1/long//tests/run-tests.sh": {Lines: lines}}))}
	cfg := config(t, []model.Task{task})
	cfg.OutputTailLines = 50
	r := runSweep(t, b, cfg, context.Background(), nil).results["tb1/long@1x"]
	if r.Outcome != model.Failed || !strings.Contains(r.Reason, "1 of 501 tests failed: test_first") {
		t.Fatalf("outcome %s (%s), want failed naming test_first", r.Outcome, r.Reason)
	}
	for _, s := range r.Steps {
		if strings.Contains(s.Output, "test_first") {
			t.Errorf("step %s kept the failing line in its tail: the test does not show the parser read past it", s.Name)
		}
	}
}

// Exit-code and reward verdicts are recorded by name too.
func TestVerdictRecorded(t *testing.T) {
	plain := fake.Task("own/exit", 64<<20, "solve")
	reward := fake.Task("tb2/reward", 64<<20, "solve")
	reward.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	b := &fake.Backend{Script: script(nil)}
	res := runSweep(t, b, config(t, []model.Task{plain, reward}), context.Background(), nil).results
	if v := res["own/exit@1x"].Verdict; v != "exit-code" {
		t.Errorf("exit-code task recorded %q", v)
	}
	if v := res["tb2/reward@1x"].Verdict; v != "reward-file" {
		t.Errorf("reward task recorded %q", v)
	}
}

// Trace lines of nested scripts never reach the parser: between the
// SWE-bench markers they would turn PASSED into something else.
func TestNestedTraceLinesAreNotParsed(t *testing.T) {
	task := fake.Task("tb1/nested", 64<<20, "solve")
	task.Verdict.Parser = "swebench"
	task.Verifier = model.Step{Name: "verify", Argv: []string{"/tests/run-tests.sh"}, Trace: true}
	lines := []string{"!" + traceLine(1, "source /tests/grade.sh"), "!" + traceLine(2, "echo 'SWEBench results starts here'"),
		"SWEBench results starts here", "!" + traceLine(2, "echo PASSED"), "PASSED", "!" + traceLine(3, "true"),
		"!" + traceLine(2, "echo 'SWEBench results ends here'"), "SWEBench results ends here"}
	b := &fake.Backend{Script: stripBang(script(map[string]fake.StepPlan{"tb1/nested//tests/run-tests.sh": {Lines: lines}}))}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["tb1/nested@1x"]
	if r.Outcome != model.Passed {
		t.Fatalf("outcome %s (%s), want passed", r.Outcome, r.Reason)
	}
}

// traceLine is a trace line as bash writes it for a command of the
// script's own shell at depth levels of nesting (source, eval, $(...)).
func traceLine(depth int, cmd string) string {
	return fake.TraceLine(depth, "0|0|1|1|0|0", cmd)
}

// When an agent's own step fails (the oracle's solve.sh), the trial's
// reason is the verifier's verdict first, as the task's harness reports
// it, and names the step after it.
func TestFailedReasonIsTheVerdictFirst(t *testing.T) {
	task := fake.Task("tb1/step-fails", 64<<20, "solve")
	task.Verdict.Parser = "swebench"
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{
		"tb1/step-fails/solve":  {ExitCode: 2},
		"tb1/step-fails/verify": {Lines: []string{"SWEBench results starts here", "FAILED", "SWEBench results ends here"}},
	})}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["tb1/step-fails@1x"]
	want := "the SWE-bench grader reported \"FAILED\", not PASSED; the agent's step solve exited 2"
	if r.Outcome != model.Failed || r.Reason != want {
		t.Errorf("outcome %s (%q), want failed (%q)", r.Outcome, r.Reason, want)
	}
}

// A failing test's name is masked as the pane draws it: a secret split
// by an escape sequence the pane draws away came back whole in
// `tests.failing` (the thirty-fifth attacker's 1); the reason was masked.
func TestFailingTestNamesAreMaskedAsDrawn(t *testing.T) {
	const secret = "sk-ant-Zq9Wv3Lp7TyX"
	task := fake.Task("tb1/split", 64<<20, "solve")
	task.Verdict.Parser = "pytest"
	task.Verifier = model.Step{Name: "verify", Argv: []string{"/tests/run-tests.sh"}, PassEnv: []string{"HRSECRET"}}
	lines := []string{"=== short test summary info ===", "FAILED tests/test_x.py::test_" + secret[:4] + "\x1b[0m" + secret[4:] + " - boom"}
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{"tb1/split//tests/run-tests.sh": {Lines: lines}})}
	cfg := config(t, []model.Task{task})
	cfg.Secrets = map[string]string{"HRSECRET": secret}
	r := runSweep(t, b, cfg, context.Background(), nil).results["tb1/split@1x"]
	if r.Tests == nil || len(r.Tests.Failing) != 1 || r.Tests.Failing[0] != "test_[redacted HRSECRET]" || strings.Contains(r.Reason, secret) {
		t.Errorf("tests %+v, reason %q: want the name masked", r.Tests, r.Reason)
	}
}
