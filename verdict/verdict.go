// Package verdict judges a verifier by its output, as terminal-bench's
// harness does with the parser a task.yaml names. Pure: text in, verdict out.
package verdict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// Parser names of terminal-bench's task.yaml (parser_name).
const (
	Pytest   = "pytest"
	SWEBench = "swebench"
	MLEBench = "mlebench"
)

// DefaultParser is what a task.yaml without parser_name gets.
const DefaultParser = Pytest

// parsers are the ones headroom implements, each from the behaviour of
// terminal-bench's own (terminal_bench/parsers/).
var parsers = map[string]func(string) ([]result, error){
	Pytest:   parsePytest,
	SWEBench: parseSWEBench,
	MLEBench: parseMLEBench,
}

// unimplemented are parsers terminal-bench has that headroom does not.
var unimplemented = map[string]bool{"swelancer": true, "sweperf": true}

// Known says whether headroom implements the named parser; if not, the
// error says so in a way a task loader can report.
func Known(name string) error {
	if _, ok := parsers[name]; ok {
		return nil
	}
	if unimplemented[name] {
		return fmt.Errorf("parser_name %q: terminal-bench has this parser but headroom does not implement it yet (it has %s)", name, names())
	}
	return fmt.Errorf("parser_name %q: not a terminal-bench parser headroom knows (it has %s)", name, names())
}

func names() string {
	out := make([]string, 0, len(parsers))
	for n := range parsers {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// result is one test's status as a parser read it.
type result struct {
	name   string
	passed bool
	// why, for a parser whose one result is the whole suite's word,
	// says what that word was when it is not a pass.
	why string
}

// Judgement is a parser's verdict on one verifier output.
type Judgement struct {
	Passed bool
	// Tests is what the output said of its tests; nil when the parser
	// found no results at all (terminal-bench's parse error).
	Tests *model.TestTally
	// Reason says why it failed, in a sentence ("" when it passed).
	Reason string
}

// Judge reads a verifier's output with the named parser and decides as
// terminal-bench's harness does: the task is resolved when the parser
// finds results and every one passed; a parser that finds none is a parse
// error, unresolved. (As in the harness, results that list no test at all
// resolve: every one of none passed.)
func Judge(parser, output string) (Judgement, error) {
	parse, ok := parsers[parser]
	if !ok {
		return Judgement{}, Known(parser)
	}
	results, err := parse(output)
	if err != nil {
		return Judgement{Reason: err.Error()}, nil
	}
	t := &model.TestTally{}
	for _, r := range results {
		if r.passed {
			t.Passed++
			continue
		}
		t.Failed++
		if len(t.Failing) < model.MaxFailingNames {
			t.Failing = append(t.Failing, r.name)
		}
	}
	j := Judgement{Passed: t.Failed == 0, Tests: t}
	if !j.Passed {
		j.Reason = t.Summary()
		if len(results) == 1 && results[0].why != "" {
			j.Reason = results[0].why
		}
	}
	return j, nil
}

// ordered keeps a parser's results by test name in first-seen order, a
// later line for the same name replacing the status (a Python dict's
// behaviour, which terminal-bench's parsers return).
type ordered struct {
	index map[string]int
	list  []result
}

func (o *ordered) set(name string, passed bool) {
	if o.index == nil {
		o.index = map[string]int{}
	}
	if i, ok := o.index[name]; ok {
		o.list[i].passed = passed
		return
	}
	o.index[name] = len(o.list)
	o.list = append(o.list, result{name: name, passed: passed})
}
