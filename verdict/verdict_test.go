package verdict

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Real verifier outputs, judged as terminal-bench's harness judges them.
func TestJudgeRealOutputs(t *testing.T) {
	cases := []struct {
		file, parser   string
		passed         bool
		passes, fails  int
		failing        []string
		noResults      bool   // the parser found none: terminal-bench's parse error
		reasonContains string // for a failure
	}{
		{file: "pytest-uv-passed.txt", parser: Pytest, passed: true, passes: 1},
		{file: "pytest-one-failed.txt", parser: Pytest, fails: 1, failing: []string{"test_tasks_cancel_above_max_concurrent"},
			reasonContains: "1 of 1 test failed: test_tasks_cancel_above_max_concurrent"},
		{file: "pytest-mixed.txt", parser: Pytest, passes: 1, fails: 5, failing: []string{"test_output_files_exist", "test_generate_and_schema",
			"test_solution_shape_feasibility_and_batch_consistency", "test_solution_coverage_no_duplicates", "test_performance_thresholds"},
			reasonContains: "5 of 6 tests failed: test_output_files_exist, test_generate_and_schema"},
		{file: "pytest-parametrized.txt", parser: Pytest, passes: 21, fails: 6, failing: []string{"test_speedup[2]", "test_speedup[3]",
			"test_speedup[6]", "test_speedup[7]", "test_speedup[8]", "test_speedup[9]"}, reasonContains: "6 of 27 tests failed"},
		{file: "pytest-curl-noise.txt", parser: Pytest, fails: 2, failing: []string{"test_summary_file_exists", "test_summary_structure_and_counts"}},
		{file: "pytest-verbose-default-summary.txt", parser: Pytest, fails: 1, failing: []string{"test_parallel_pbkdf2_correct_and_faster"}},
		// Without -rA a passing pytest prints no summary section: the
		// harness's parser finds nothing and the task is unresolved.
		{file: "pytest-passed-without-rA.txt", parser: Pytest, noResults: true, reasonContains: "short test summary info"},
		{file: "pytest-uv-download-failed.txt", parser: Pytest, noResults: true, reasonContains: "short test summary info"},
		// The grader's word counts, not pytest's lines before it.
		{file: "swebench-resolved.txt", parser: SWEBench, passed: true, passes: 1},
		{file: "swebench-unresolved.txt", parser: SWEBench, fails: 1, failing: []string{"tests"}, reasonContains: "the SWE-bench grader reported \"FAILED\", not PASSED"},
		{file: "swebench-grader-never-ran.txt", parser: SWEBench, noResults: true, reasonContains: "SWEBench results"},
		// A pytest-judged task whose output is SWE-bench's still reads the
		// pytest lines before the markers.
		{file: "swebench-resolved.txt", parser: Pytest, passed: true, passes: 1},
	}
	for _, c := range cases {
		t.Run(c.parser+"/"+c.file, func(t *testing.T) {
			j, err := Judge(c.parser, fixture(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if j.Passed != c.passed {
				t.Errorf("passed = %v, want %v (reason %q)", j.Passed, c.passed, j.Reason)
			}
			if c.noResults {
				if j.Tests != nil {
					t.Errorf("tests = %+v, want none found", j.Tests)
				}
			} else {
				if j.Tests == nil {
					t.Fatalf("no tests found; reason %q", j.Reason)
				}
				if j.Tests.Passed != c.passes || j.Tests.Failed != c.fails {
					t.Errorf("tally %d passed %d failed, want %d and %d", j.Tests.Passed, j.Tests.Failed, c.passes, c.fails)
				}
				if c.failing != nil && !reflect.DeepEqual(j.Tests.Failing, c.failing) {
					t.Errorf("failing = %q, want %q", j.Tests.Failing, c.failing)
				}
			}
			if c.passed != (j.Reason == "") {
				t.Errorf("reason %q for passed=%v", j.Reason, j.Passed)
			}
			if !strings.Contains(j.Reason, c.reasonContains) {
				t.Errorf("reason %q does not say %q", j.Reason, c.reasonContains)
			}
		})
	}
}

// Lines of the short summary, one at a time, as the harness reads them.
func TestPytestLine(t *testing.T) {
	cases := []struct {
		line   string
		name   string
		passed bool
		ok     bool
	}{
		{"PASSED ../tests/test_outputs.py::test_x", "test_x", true, true},
		{"FAILED tests/t.py::test_y - AssertionError: a - b", "test_y - AssertionError: a", false, true}, // only the last " - " part goes
		{"FAILED tests/t.py::TestC::test_z", "TestC::test_z", false, true},                               // the name is what follows the first ::
		{"ERROR tests/t.py::test_e - fixture 'db' not found", "test_e - fixture 'db' not found", false, true},
		{"SKIPPED [1] tests/t.py:12: needs a GPU", "[1] tests/t.py:12: needs a GPU", true, true},
		{"XFAIL tests/t.py::test_known - bug 12", "test_known - bug 12", true, true},
		{"XPASS tests/t.py::test_lucky", "test_lucky", false, true},
		{"PASSED: tests/t.py::test_colon", "test_colon", true, true},
		{"  PASSED   tests/t.py::test_indented  ", "test_indented", true, true},
		{"passed tests/t.py::test_lower", "", false, false},
		{"UNKNOWN tests/t.py::test_u", "", false, false},
		{"PASSED", "", false, false},
		{"PASSED tests/t.py::", "", false, false},
		{"========================= 1 failed, 5 passed in 12.76s =========================", "", false, false},
		{"", "", false, false},
	}
	for _, c := range cases {
		name, passed, ok := pytestLine(c.line)
		if name != c.name || passed != c.passed || ok != c.ok {
			t.Errorf("pytestLine(%q) = %q, %v, %v; want %q, %v, %v", c.line, name, passed, ok, c.name, c.passed, c.ok)
		}
	}
}

func TestJudgeEdges(t *testing.T) {
	cases := []struct {
		name, parser, output string
		passed               bool
		found                bool
	}{
		// The header with no test under it: every one of none passed, so
		// terminal-bench resolves it; headroom does the same.
		{"pytest empty summary", Pytest, "===== short test summary info =====\n===== no tests ran =====\n", true, true},
		{"pytest header any case", Pytest, "== SHORT Test Summary INFO ==\nPASSED t.py::a\n", true, true},
		{"pytest later line wins", Pytest, "== short test summary info ==\nFAILED t.py::a\nPASSED t.py::a\n", true, true},
		{"pytest carriage returns split lines", Pytest, "== short test summary info ==\rFAILED t.py::a\r\n", false, true},
		{"pytest only the first header starts", Pytest, "== short test summary info ==\nPASSED t.py::a\n== short test summary info ==\nFAILED t.py::b\n", false, true},
		{"pytest empty output", Pytest, "", false, false},
		{"swebench word must be exact", SWEBench, "SWEBench results starts here\nPASSED, mostly\nSWEBench results ends here", false, true},
		{"swebench end before start", SWEBench, "SWEBench results ends here\nSWEBench results starts here\nPASSED\n", true, true},
		// The text runs to the last end marker, so a repeated marker is in it.
		{"swebench last end marker", SWEBench, "SWEBench results starts here\nPASSED\nSWEBench results ends here\nSWEBench results ends here", false, true},
		{"swebench start only", SWEBench, "SWEBench results starts here\nPASSED\n", false, false},
		{"mlebench passes", MLEBench, "x\nMLEBench results starts here\nALL TESTS PASSED\nMLEBench results ends here\n", true, true},
		{"mlebench no markers is a failure, not an error", MLEBench, "ALL TESTS PASSED\nand more", false, true},
		{"mlebench no markers whole output", MLEBench, "  ALL TESTS PASSED\n", true, true},
	}
	for _, c := range cases {
		j, err := Judge(c.parser, c.output)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if j.Passed != c.passed || (j.Tests != nil) != c.found {
			t.Errorf("%s: passed %v found %v (%q), want %v %v", c.name, j.Passed, j.Tests != nil, j.Reason, c.passed, c.found)
		}
	}
}

func TestKnown(t *testing.T) {
	for _, n := range []string{Pytest, SWEBench, MLEBench} {
		if err := Known(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if err := Known("swelancer"); err == nil || !strings.Contains(err.Error(), "does not implement") {
		t.Errorf("swelancer: %v", err)
	}
	if err := Known("junit"); err == nil || !strings.Contains(err.Error(), "mlebench, pytest, swebench") {
		t.Errorf("junit: %v", err)
	}
	if _, err := Judge("junit", ""); err == nil {
		t.Error("Judge accepted an unknown parser")
	}
}

func TestFailingNamesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("=== short test summary info ===\n")
	for i := 0; i < 45; i++ {
		b.WriteString("FAILED t.py::test_" + strings.Repeat("x", i+1) + " - no\n")
	}
	j, _ := Judge(Pytest, b.String())
	if j.Tests.Failed != 45 || len(j.Tests.Failing) != 20 || !strings.HasSuffix(j.Reason, "and 25 more") {
		t.Errorf("tally %+v reason %q", j.Tests, j.Reason)
	}
}

// judgePane judges lines of output as terminal-bench's pytest parser
// reads them off its tests pane.
func judgePane(lines ...string) (Judgement, *Transcript) {
	tr := &Transcript{}
	for _, l := range lines {
		tr.Add(l)
	}
	j, _ := Judge(Pytest, tr.String())
	return j, tr
}

// The verifier's output is judged as terminal-bench judges it: off its
// tests pane, drawn at 160x40 with tmux's 2,000 rows of history (the
// thirteenth attacker's 2: each case was checked against a real tmux made
// as terminal-bench makes it and terminal-bench's own parser).
func TestTranscriptIsTheTestsPane(t *testing.T) {
	const head = "=========================== short test summary info ============================"
	// Colour: the pane shows the words, not the escape sequences.
	j, _ := judgePane(head, "\x1b[32mPASSED\x1b[0m tests/test_outputs.py::test_a", "\x1b[31mFAILED\x1b[0m tests/test_outputs.py::test_b - assert 0")
	if j.Passed || j.Tests == nil || j.Tests.Passed != 1 || j.Tests.Failed != 1 {
		t.Errorf("coloured summary: %+v %+v; want test_b failed", j, j.Tests)
	}
	// A carriage return: later text overwrites the line's start.
	j, _ = judgePane(head, "PASSED tests/test_outputs.py::test_a\rFAILED")
	if j.Passed || j.Tests == nil || j.Tests.Failed != 1 {
		t.Errorf("PASSED …\\rFAILED: %+v; want the FAILED the pane shows", j)
	}
	// 2,100 result lines: the pane's history lost the header, a parse
	// error in terminal-bench (unresolved).
	lines := []string{head}
	for i := 0; i < 2100; i++ {
		lines = append(lines, "PASSED tests/test_outputs.py::test_case_"+strconv.Itoa(i))
	}
	j, tr := judgePane(lines...)
	if j.Passed || j.Tests != nil || tr.Dropped == 0 {
		t.Errorf("2,100 lines after the header: %+v, %d rows dropped; want the header lost (parse error)", j, tr.Dropped)
	}
	// tmux frees a tenth of its history at once when it is full: after
	// 2,100 lines the capture keeps 1,800 + 40 + the rows since.
	if n := strings.Count(tr.String(), "\n") + 1; n < 1800+PaneRows || n > PaneHistory+PaneRows {
		t.Errorf("the capture holds %d rows, want between %d and %d", n, 1800+PaneRows, PaneHistory+PaneRows)
	}
	// Two ids alike in their first 160 columns: wrapped at 160, the
	// parser reads the first rows alike, and the PASSED one wins (a
	// Python dict keyed by the name), so terminal-bench resolves it.
	long := strings.Repeat("p", 150)
	j, _ = judgePane(head, "FAILED tests/test_outputs.py::test_x["+long+"-one] - no", "PASSED tests/test_outputs.py::test_x["+long+"-two]")
	if !j.Passed {
		t.Errorf("two ids wrapped alike at 160 columns: %+v; want resolved, as terminal-bench reads them", j)
	}
	// Wide characters take two columns; tabs go to the next stop.
	tr = &Transcript{}
	tr.Add(strings.Repeat("界", 81))
	tr.Add("a\tb")
	if rows := strings.Split(tr.String(), "\n"); rows[1] != strings.Repeat("界", 80) || rows[2] != "界" || rows[3] != "a       b" {
		t.Errorf("wide and tab rows: %q", rows[1:4])
	}
	var nilT *Transcript
	if nilT.String() != "" {
		t.Error("nil transcript not empty")
	}
}

func FuzzTranscript(f *testing.F) {
	f.Add("\x1b[31mFAILED\x1b[0m x\rPASSED\b\tz界\x1b]0;t\x07\x1b[2K")
	f.Add("a\x1b[2J\x1b[?1049hb\x1b[5M\x1b[3L\x1b[1J\x1b[0J\x1b[4P\x1b[2@\x1b[9X\x1b[2S\x1b[3T\x1bM\x1bD\x1bE\x1b[?1049l\x1b[?47h\u0301\x1b[?47l")
	f.Add("\x1b[3;8r\x1b[10;1H\x1b[2L\x1b[5;1H\x1b[3M\x1bM\x1b[4S\x1b[2T\x1b[20B\x1b[20A\x1b[3;0r\n\n\x1b[r")
	f.Add("ab\x1b7\x1b[5;5Hc\x1b8\x1b[s\x1b[u\x1b[3d\x1b[9`\x1b[2E\x1b[F\x1b[3Z\x1b[2147483647bq\x1b#8\x1bc")
	f.Fuzz(func(t *testing.T, s string) {
		var tr Transcript
		for _, l := range strings.Split(s, "\n") {
			tr.Add(l)
		}
		out := tr.String()
		if n := strings.Count(out, "\n") + 1; n > PaneHistory+PaneRows {
			t.Fatalf("%d rows", n)
		}
		for _, row := range strings.Split(out, "\n") {
			if runewidth.StringWidth(row) > PaneColumns || strings.ContainsRune(row, 0x1b) {
				t.Fatalf("row %q: wider than the pane, or an escape left", row)
			}
		}
	})
}

func TestPySplitLines(t *testing.T) {
	got := pySplitLines("a\nb\r\nc\rd\ve\x1cf\u2028g\n")
	want := []string{"a", "b", "c", "d", "e", "f", "g"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if got := pySplitLines("a\n\nb"); !reflect.DeepEqual(got, []string{"a", "", "b"}) {
		t.Errorf("got %q", got)
	}
}

// FuzzJudge: any output, any parser, never a panic; a pass always has
// results, and a failure always says why.
func FuzzJudge(f *testing.F) {
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") {
			data, _ := os.ReadFile(filepath.Join("testdata", e.Name()))
			f.Add(string(data))
		}
	}
	f.Add("== short test summary info ==\nFAILED a::b - c - d\n")
	f.Fuzz(func(t *testing.T, out string) {
		for _, p := range []string{Pytest, SWEBench, MLEBench} {
			j, err := Judge(p, out)
			if err != nil {
				t.Fatal(err)
			}
			if j.Passed && (j.Tests == nil || j.Tests.Failed != 0 || j.Reason != "") {
				t.Fatalf("%s: pass with %+v %q", p, j.Tests, j.Reason)
			}
			if !j.Passed && j.Reason == "" {
				t.Fatalf("%s: failure without a reason", p)
			}
			if j.Tests != nil && len(j.Tests.Failing) > j.Tests.Failed {
				t.Fatalf("%s: more names than failures", p)
			}
		}
	})
}

// The pane gives an East Asian "ambiguous" character one column, as
// tmux's wcwidth does, whatever the host's locale: with the locale's
// East Asian widths on, 80 rules then "FAILED …" wrapped the FAILED onto
// a row of its own, a failure terminal-bench's parser does not see (the
// thirty-fifth attacker's 3).
func TestPaneWidthsAreNotTheHostsLocale(t *testing.T) {
	saved := runewidth.DefaultCondition.EastAsianWidth
	runewidth.DefaultCondition.EastAsianWidth = true
	defer func() { runewidth.DefaultCondition.EastAsianWidth = saved }()
	var tr Transcript
	tr.Add(strings.Repeat("\u2500", 80) + "FAILED tests/test_outputs.py::test_hidden - boom")
	for _, row := range strings.Split(tr.String(), "\n") {
		if strings.HasPrefix(row, "FAILED") {
			t.Errorf("a row starts with FAILED: the rules were drawn two columns each\n%s", tr.String())
		}
	}
}
