package model

import (
	"fmt"
	"strings"
)

// VerdictRule says how a task's verifier is judged, as the task's own harness
// judges it: by its exit code (headroom's TOML tasks; the zero value), by
// the reward file it writes (Harbor: Reward), or by a parser reading its
// output (terminal-bench's task.yaml: Parser, such as "pytest").
type VerdictRule struct {
	Reward *RewardRule `json:"reward,omitempty"`
	Parser string      `json:"parser,omitempty"`
}

// Ways a verifier is judged, as VerdictRule.Kind names them.
const (
	VerdictExitCode = "exit-code"
	VerdictReward   = "reward-file"
	VerdictParser   = "parser"
)

// Kind names the rule: VerdictExitCode, VerdictReward or VerdictParser.
func (v VerdictRule) Kind() string {
	switch {
	case v.Reward != nil:
		return VerdictReward
	case v.Parser != "":
		return VerdictParser
	}
	return VerdictExitCode
}

// String is the rule in a word or two, as records carry it:
// "exit-code", "reward-file", "parser:pytest".
func (v VerdictRule) String() string {
	if v.Kind() == VerdictParser {
		return VerdictParser + ":" + v.Parser
	}
	return v.Kind()
}

// Describe says in a sentence when the verifier passes.
func (v VerdictRule) Describe() string {
	switch v.Kind() {
	case VerdictReward:
		return fmt.Sprintf("passes when it writes a reward >= %g to %s/reward.txt or reward.json (its exit code does not count)", v.Reward.Pass, v.Reward.Dir)
	case VerdictParser:
		return fmt.Sprintf("passes when terminal-bench's %s parser can read its output and finds no failed test there (its exit code does not count)", v.Parser)
	}
	return "passes when it exits 0"
}

func (v VerdictRule) validate() error {
	if v.Reward != nil && v.Parser != "" {
		return fmt.Errorf("a verifier is judged by a reward file or by a parser, not both")
	}
	return nil
}

// TestTally is what a parser-judged verifier's output said of its tests.
type TestTally struct {
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// Failing names the failed tests, in the order the output gave them
	// (at most MaxFailingNames).
	Failing []string `json:"failing,omitempty"`
}

// MaxFailingNames bounds TestTally.Failing: a record names enough failed
// tests to act on, not every one of a suite.
const MaxFailingNames = 20

// Total is how many tests the output named.
func (t TestTally) Total() int { return t.Passed + t.Failed }

// Summary says what failed in a sentence: "3 of 40 tests failed:
// test_x, test_y, test_z".
func (t TestTally) Summary() string {
	if t.Failed == 0 {
		return "all " + Quantity(t.Total(), "test") + " passed"
	}
	names := strings.Join(t.Failing, ", ")
	if more := t.Failed - len(t.Failing); more > 0 {
		names += fmt.Sprintf(", and %d more", more)
	}
	return fmt.Sprintf("%d of %s failed: %s", t.Failed, Quantity(t.Total(), "test"), names)
}
