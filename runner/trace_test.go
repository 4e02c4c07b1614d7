package runner

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tracedCommand is one command as the splitter and book record it.
type tracedCommand struct {
	cmd     string
	code    int
	pipe    []int
	unknown string
	output  []string
}

// testNonce is the nonce of the traced steps these tests run.
const testNonce = "0123456789abcdef01234567"

// replay feeds a traced script's output lines through splitTrace and
// the status book, as runStep does, and returns the commands.
func replay(lines []string, exitCode int) []tracedCommand {
	book := newStatusBook()
	var cmds []tracedCommand
	cur := -1
	var pre []string
	out := func(text string) {
		if cur < 0 {
			pre = append(pre, text)
			return
		}
		cmds[cur].output = append(cmds[cur].output, text)
	}
	for _, l := range lines {
		text, m := splitTrace(l, testNonce)
		if text != "" || m == nil {
			out(text)
		}
		switch {
		case m == nil:
		case m.depth > 1:
			out(nestedTrace(*m))
		default:
			n, joined := book.mark(*m)
			if joined {
				cmds[n].cmd = book.show(n)
			} else if n >= 0 {
				cmds = append(cmds, tracedCommand{cmd: m.cmd})
				cur = n
			} else {
				cur = -1
			}
		}
	}
	book.finish(exitCode)
	for _, s := range book.take() {
		cmds[s.step].code, cmds[s.step].pipe, cmds[s.step].unknown = s.code, s.pipe, s.unknown
	}
	if len(pre) > 0 {
		cmds = append([]tracedCommand{{cmd: "(before)", output: pre, unknown: "not a command"}}, cmds...)
	}
	return cmds
}

// runWrapped runs script with the trace wrapper on this machine, with the
// given shell on PATH first (so `command -v bash` can be made to fail).
func runWrapped(t *testing.T, script string, noBash bool) ([]string, int) {
	t.Helper()
	return runWrappedBy(t, script, noBash, false)
}

// runWrappedBy is runWrapped with the wrapper started by bash where
// needBash is set, as a Harbor or terminal-bench step's is (traceArgv).
func runWrappedBy(t *testing.T, script string, noBash, needBash bool) ([]string, int) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "script.sh")
	interp := "#!/bin/bash\n"
	if noBash {
		interp = "#!/bin/sh\n"
	}
	if err := os.WriteFile(path, []byte(interp+script), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := traceArgv([]string{path}, needBash)
	cmd := exec.Command(argv[0], argv[1:]...)
	if noBash {
		// A PATH with sh and the usual tools but no bash.
		bin := filepath.Join(dir, "bin")
		os.Mkdir(bin, 0o755)
		for _, tool := range []string{"sh", "rev", "cut", "printf", "echo", "true", "false", "cat", "tr", "grep"} {
			if p, err := exec.LookPath(tool); err == nil {
				os.Symlink(p, filepath.Join(bin, tool))
			}
		}
		cmd.Env = []string{"PATH=" + bin}
		cmd.Args[0], cmd.Path = "sh", "/bin/sh"
	} else {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, TraceNonceVar+"="+testNonce)
	pr, pw, _ := os.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Skipf("no shell here: %v", err)
	}
	pw.Close()
	var lines []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return lines, code
}

func sortLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

func describe(cmds []tracedCommand) string {
	var b strings.Builder
	for _, c := range cmds {
		code := fmt.Sprint(c.code)
		if c.unknown != "" {
			code = "?"
		}
		if c.pipe != nil {
			code += fmt.Sprint(c.pipe)
		}
		fmt.Fprintf(&b, "%s => %s %q\n", c.cmd, code, c.output)
	}
	return b.String()
}

// The statuses each command's own shell reported, for scripts of the
// shapes real solve.sh and test.sh files have; run by this machine's bash.
func TestTracedStatusesWithBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cases := []struct {
		name, script string
		want         string
		anyOrder     bool // commands in different processes trace in either order
	}{
		{"sequence", "false\nnosuchcmd 2>/dev/null\necho ok\n",
			"false => 1 []\nnosuchcmd => 127 []\necho ok => 0 [\"ok\"]\n", false},
		{"unterminated output", "X=abc\nprintf %s \"$X\" | rev\necho xyz | cut -c1\n",
			"X=abc => 0 []\nprintf %s abc | rev => 0 [\"cba\"]\necho xyz | cut -c1 => 0 [\"x\"]\n", false},
		{"if and while keep the condition's status", "if grep -q zz /dev/null; then echo no; fi\nwhile false; do :; done\n! true\n",
			"grep -q zz /dev/null => 1 []\nfalse => 1 []\ntrue => 0 []\n", false},
		{"lists", "false || echo fallback\ntrue && false\necho end\n",
			"false => 1 []\necho fallback => 0 [\"fallback\"]\ntrue => 0 []\nfalse => 1 []\necho end => 0 [\"end\"]\n", false},
		{"pipeline statuses go to their commands", "false | true\n( exit 4 )\necho end\n",
			"false | true => 0[1 0] []\nexit 4 => 4 []\necho end => 0 [\"end\"]\n", false},
		{"function call gets its return status", "f() { false; return 3; }\nf\necho end\n",
			"f => 3 []\nfalse => 1 []\nreturn 3 => 3 []\necho end => 0 [\"end\"]\n", false},
		// g's status is its own, not the command substitution's after it;
		// the pipeline g ended with reported its statuses to no one.
		{"function call before a command substitution", "g() { false | true; }\ng\nx=$(false)\necho $x.\n",
			"g => 0 []\nfalse | true => ? [\"++ false\"]\nx= => 1 []\necho . => 0 [\".\"]\n", false},
		{"set -e ends the script", "set -e\necho start\nnosuchcmd 2>/dev/null\necho never\n",
			"set -e => 0 []\necho start => 0 [\"start\"]\nnosuchcmd => 127 []\n", false},
		{"exit N", "false\nexit 3\n",
			"false => 1 []\nexit 3 => 3 []\n", false},
		{"last command a pipeline", "echo hi\nfalse | cat\n",
			"echo hi => 0 [\"hi\"]\nfalse | cat => 0[1 0] []\n", false},
		{"command substitution is output", "x=$(echo a; false)\necho $x\n",
			"(before) => ? [\"++ echo a\" \"++ false\"]\nx=a => 1 []\necho a => 0 [\"a\"]\n", false},
		{"background job", "sleep 0.2 &\nwait\necho end\n",
			"sleep 0.2 => ? []\nwait => 0 []\necho end => 0 [\"end\"]\n", true},
		{"subshell sequence", "( false; echo in )\necho out\n",
			"false => 1 []\necho in => 0 [\"in\"]\necho out => 0 [\"out\"]\n", false},
		{"set -euo pipefail", "set -euo pipefail\necho a\nfalse | true || echo pf\nf() { echo in; }\nf\necho b\n",
			"set -euo pipefail => 0 []\necho a => 0 [\"a\"]\nfalse | true => 1[1 0] []\necho pf => 0 [\"pf\"]\nf => 0 []\necho in => 0 [\"in\"]\necho b => 0 [\"b\"]\n", false},
		{"own EXIT trap", "trap 'echo bye' EXIT\nfalse\n",
			"trap 'echo bye' EXIT => 0 []\nfalse => 1 []\necho bye => 1 [\"bye\"]\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines, code := runWrapped(t, c.script, false)
			got := describe(replay(lines, code))
			if c.anyOrder {
				got, c.want = sortLines(got), sortLines(c.want)
			}
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s\nraw %q", got, c.want, lines)
			}
		})
	}
}

// Without bash, sh -x reports no status but the script's: every command
// but the last is recorded as unknown, never as 0.
func TestTracedStatusesWithShOnly(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	lines, code := runWrapped(t, "false\nprintf %s x | rev\necho y | cut -c1\nexit 3\n", true)
	cmds := replay(lines, code)
	got := describe(cmds)
	// sh writes a trace line in pieces: a pipeline's two commands tracing
	// at once may lose one's line, never a status's honesty.
	if code != 3 || len(cmds) < 4 || !strings.HasSuffix(got, "exit 3 => 3 []\n") || strings.Contains(got, "=> 0") || strings.Contains(got, "headroom-trace") || strings.Contains(got, TraceMarker) {
		t.Fatalf("exit %d, got\n%s\nwant every status unknown but the last\nraw %q", code, got, lines)
	}
	for _, c := range cmds[:len(cmds)-1] {
		if c.unknown == "" {
			t.Errorf("%s: status %d, want unknown", c.cmd, c.code)
		}
	}
}

func TestSplitTrace(t *testing.T) {
	cases := []struct {
		line, text string
		mark       *traceMark
	}{
		{"plain output", "plain output", nil},
		{"\x1e[hr 1|1 0|7|5|2|0] grep -q x f", "", &traceMark{depth: 1, cmd: "grep -q x f", last: 1, pipe: []int{1, 0}, pid: 7, root: 5, funcs: 2}},
		{"cba\x1e[hr 0|0|7|7|0|9] echo xyz", "cba", &traceMark{depth: 1, cmd: "echo xyz", pipe: []int{0}, pid: 7, root: 7, bg: 9}},
		{"\x1e\x1e[hr 0|0|7|7|0|0] false", "", &traceMark{depth: 2, cmd: "false", pipe: []int{0}, pid: 7, root: 7}},
		{"\x1e[hr sh] ls -l", "", &traceMark{depth: 1, cmd: "ls -l", sh: true}},
		{"\x1e[hr 0|0|7|7|0|0]", "", &traceMark{depth: 1, pipe: []int{0}, pid: 7, root: 7}},
		{"\x1e[hr 0|0|7|7||0] x", "", &traceMark{depth: 1, cmd: "x", pipe: []int{0}, pid: 7, root: 7}},
		// The marker's text without the separator is output, as is a
		// mangled trace line.
		{"echo [hr 0|0|1|1|0|0] x", "echo [hr 0|0|1|1|0|0] x", nil},
		{"\x1e[hr 0|zero|7|7|0|0] x", "\x1e[hr 0|zero|7|7|0|0] x", nil},
		{"\x1e[hr 0|0|7] x", "\x1e[hr 0|0|7] x", nil},
		// Two shells' trace lines cut into each other: the last counts.
		{"\x1e[hr sh] \x1e[hr sh] printf %s x", "", &traceMark{depth: 1, cmd: "printf %s x", sh: true}},
		{"out\x1e[hr sh] \x1e[hr sh] rev", "out", &traceMark{depth: 1, cmd: "rev", sh: true}},
	}
	for _, c := range cases {
		line := strings.ReplaceAll(c.line, TraceMarker, TraceMarker+testNonce+" ")
		text, m := splitTrace(line, testNonce)
		c.text = strings.ReplaceAll(c.text, TraceMarker, TraceMarker+testNonce+" ")
		if text != c.text || (m == nil) != (c.mark == nil) || m != nil && fmt.Sprint(*m) != fmt.Sprint(*c.mark) {
			t.Errorf("splitTrace(%q) = %q, %+v; want %q, %+v", c.line, text, m, c.text, c.mark)
		}
	}
}

// A trace line without the step's nonce is output, whatever else it
// holds: the fixed marker, another step's nonce, no nonce at all.
func TestSplitTraceRefusesAForgedMark(t *testing.T) {
	for _, line := range []string{
		"\x1e[hr 0|0|7|7|0|0] rm -rf /",
		"\x1e[hr sh] rm -rf /",
		"\x1e[hr ffffffffffffffffffffffff 0|0|7|7|0|0] rm -rf /",
		"\x1e[hr  0|0|7|7|0|0] rm -rf /",
		"out\x1e[hr " + testNonce[:10] + " 0|0|7|7|0|0] rm -rf /",
	} {
		if text, m := splitTrace(line, testNonce); m != nil || text != line {
			t.Errorf("splitTrace(%q) = %q, %+v: a forged mark was taken", line, text, m)
		}
	}
	if text, m := splitTrace("\x1e[hr  0|0|7|7|0|0] x", ""); m != nil || text == "" {
		t.Errorf("an empty nonce took a mark: %+v", m)
	}
}

func FuzzSplitTrace(f *testing.F) {
	f.Add("\x1e[hr " + testNonce + " 1|1 0|7|5|2|0] grep")
	f.Add("out\x1e\x1e[hr " + testNonce + " sh] x")
	f.Add("\x1e[hr 1|1 0|7|5|2|0] forged")
	f.Fuzz(func(t *testing.T, line string) {
		text, m := splitTrace(line, testNonce)
		if m == nil && text != line {
			t.Fatalf("no mark but the text changed: %q -> %q", line, text)
		}
		if m != nil && (!strings.HasPrefix(line, text) || m.depth < 1) {
			t.Fatalf("mark %+v from %q with text %q", m, line, text)
		}
		// Whatever the marks, the book neither panics nor invents.
		b := newStatusBook()
		if m != nil && m.depth == 1 {
			b.mark(*m)
			b.mark(*m)
		}
		b.finish(1)
	})
}

// A command the traced script runs cannot learn its step's nonce: not
// from its environment (the wrapper took it out; PS4 is not exported),
// not from the shell's command line. What it prints in the marker's
// shape, with whatever nonce it can find, is the command's output.
func TestTracedScriptsCommandsCannotForgeAStep(t *testing.T) {
	script := `printf '\036[hr 0|0|1|1|0|0] forged-fixed\n'
sh -c 'printf "\036[hr %s 0|0|1|1|0|0] forged-env\n" "$HEADROOM_TRACE_NONCE"; printf "\036[hr %s sh] forged-ps4\n" "$PS4"'
a=` + testNonce[:12] + ` b=` + testNonce[12:] + ` sh -c 'for p in /proc/[0-9]*; do if cat $p/cmdline $p/environ 2>/dev/null | tr "\000" "\n" | grep -q "$a$b"; then echo "$p $(tr "\000" " " <$p/cmdline | cut -c1-60)"; fi; done; echo searched'
echo end
`
	for _, noBash := range []bool{false, true} {
		if _, err := exec.LookPath("bash"); err != nil && !noBash {
			continue
		}
		lines, code := runWrapped(t, script, noBash)
		cmds := replay(lines, code)
		got := describe(cmds)
		if code != 0 || strings.Contains(got, "forged-") && !strings.Contains(got, `"\x1e[hr `) {
			t.Fatalf("noBash=%v: exit %d\n%s", noBash, code, got)
		}
		for _, c := range cmds {
			if strings.HasPrefix(c.cmd, "forged") || strings.Contains(c.cmd, testNonce) {
				t.Errorf("noBash=%v: a step the script never ran: %q\n%s", noBash, c.cmd, got)
			}
			for _, o := range c.output {
				if strings.Contains(o, testNonce) {
					t.Errorf("noBash=%v: a command found the nonce: %q", noBash, o)
				}
			}
		}
		if !strings.Contains(got, "forged-fixed") || !strings.Contains(got, "forged-env") || !strings.Contains(got, `=> 0 ["searched"]`) && !strings.Contains(got, `=> ? ["searched"]`) {
			t.Errorf("noBash=%v: the forgeries should be output, and no process should show the nonce:\n%s", noBash, got)
		}
	}
}

// A pipeline whose commands join the running step one trace line at a
// time is shown cut at OutputLineBytes, as any step's command is: five
// commands of 600 bytes made a 3 KB show (3.27 MB seen in one).
func TestJoinedPipelineShowIsCut(t *testing.T) {
	lines, code := runWrapped(t, "A=$(printf 'x%.0s' $(seq 1 600))\ntrue $A | true $A | true $A | true $A | true $A\n", false)
	cmds := replay(lines, code)
	longest := 0
	for _, c := range cmds {
		longest = max(longest, len(c.cmd))
	}
	if longest <= 1200 || longest > OutputLineBytes+len("…") {
		t.Errorf("longest shown command %d bytes, want more than two commands' and at most %d", longest, OutputLineBytes+len("…"))
	}
}

// A step's own BASH_ENV (an image's ENV, a task's [verifier.env]) is
// read before its script as bash reads it, untraced, and kept for the
// shells it starts: the wrapper takes BASH_ENV for its setup, and before
// it unset the step's (a verifier whose image put its tools on PATH that
// way failed "command not found", where Harbor passes).
func TestTraceKeepsTheStepsBashEnv(t *testing.T) {
	env := filepath.Join(t.TempDir(), "activate.sh")
	if err := os.WriteFile(env, []byte("FROM_ENV=activated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BASH_ENV", env)
	lines, code := runWrapped(t, "echo \"$FROM_ENV\"\nbash -c 'echo \"nested $FROM_ENV\"'\n", false)
	var out []string
	for _, l := range lines {
		if !strings.Contains(l, "\x1e") {
			out = append(out, l)
		}
		if strings.Contains(l, "activate.sh") || strings.Contains(l, "FROM_ENV=") {
			t.Errorf("the step's BASH_ENV was traced as its own command: %q", l)
		}
	}
	if code != 0 || strings.Join(out, "|") != "activated|nested activated" {
		t.Errorf("exit %d, output %q; want the script and its nested bash to have read the step's BASH_ENV", code, out)
	}
}

// The eighteenth attacker's 6: a background job's first mark can come
// after the script's shell has traced its next command; the job's
// inherited state (127, the command before the fork) is not that
// command's status. The lines are in the order they raced to.
func TestBackgroundJobsLateMarkSettlesNothing(t *testing.T) {
	n := "\x1e" + TraceMarker + testNonce + " "
	lines := []string{
		n + "0|0|100|100||0] nosuchcmd",
		n + "0|127|100|100||101] echo hello",
		n + "127|127|101|100||0] sleep 2",
		n + "0|0|100|100||101] echo done",
		"done",
		n + "0|0|100|100||101] : headroom-trace-end",
	}
	got := describe(replay(lines, 0))
	want := "nosuchcmd => 127 []\necho hello => 0 []\nsleep 2 => ? []\necho done => 0 [\"done\"]\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Background jobs started one after another are commands of their own,
// never one pipeline: each later job's $! is the one before it (the
// twenty-fourth attacker's 2: `for i in 1 2 3; do sleep 1.$i & done`
// recorded "sleep 1.2 | sleep 1.3", a job given a status, and a storm of
// jobs' kills named after such pipelines, 43 of 100). Their marks come in
// any order among the shell's own; each order below is one seen or
// possible.
func TestBackgroundJobsAreNoPipeline(t *testing.T) {
	n := "\x1e" + TraceMarker + testNonce + " "
	root := func(bg, cmd string) string { return n + "0|0|100|100||" + bg + "] " + cmd }
	job := func(pid, bg, cmd string) string { return n + "0|0|" + pid + "|100||" + bg + "] " + cmd }
	end := root("103", ": headroom-trace-end")
	want := "for i in 1 2 3 => 0 []\nfor i in 1 2 3 => 0 []\nfor i in 1 2 3 => 0 []\nsleep 1.1 => ? []\nsleep 1.2 => ? []\nsleep 1.3 => ? []\nwait => 0 []\n"
	for name, lines := range map[string][]string{
		"each job before the shell's next": {root("0", "for i in 1 2 3"), job("101", "0", "sleep 1.1"), root("101", "for i in 1 2 3"), job("102", "101", "sleep 1.2"),
			root("102", "for i in 1 2 3"), job("103", "102", "sleep 1.3"), root("103", "wait"), end},
		"the shell ahead of its jobs": {root("0", "for i in 1 2 3"), root("101", "for i in 1 2 3"), root("102", "for i in 1 2 3"), root("103", "wait"),
			job("101", "0", "sleep 1.1"), job("102", "101", "sleep 1.2"), job("103", "102", "sleep 1.3"), end},
		"the jobs together": {root("0", "for i in 1 2 3"), root("101", "for i in 1 2 3"), job("101", "0", "sleep 1.1"), job("102", "101", "sleep 1.2"),
			root("102", "for i in 1 2 3"), job("103", "102", "sleep 1.3"), root("103", "wait"), end},
	} {
		got := sortLines(describe(replay(lines, 0)))
		if got != sortLines(want) {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
		}
	}
	// A job started before a pipeline, its mark come between the
	// pipeline's: each command keeps its own status, the job none.
	lines := []string{job("201", "200", "false"), job("200", "0", "sleep 1"), job("202", "200", "true"),
		n + "0|1 0|100|100||200] wait", n + "0|0|100|100||200] : headroom-trace-end"}
	got := describe(replay(lines, 0))
	for _, w := range []string{"false => 1 []", "sleep 1 => ? []", "true => 0 []"} {
		if !strings.Contains(got, w) {
			t.Errorf("a job's mark inside a pipeline's: got\n%s\nwant a line %q", got, w)
		}
	}
	// With real bash, however its lines interleave: three commands, no
	// pipeline.
	if _, err := exec.LookPath("bash"); err != nil {
		return
	}
	raw, code := runWrapped(t, "for i in 1 2 3; do sleep 0.$i & done\nwait\n", false)
	cmds := replay(raw, code)
	sleeps := 0
	for _, c := range cmds {
		if strings.Contains(c.cmd, "|") {
			t.Errorf("a pipeline that is not in the script: %q\nraw %q", c.cmd, raw)
		}
		if strings.HasPrefix(c.cmd, "sleep ") {
			sleeps++
		}
	}
	if sleeps != 3 {
		t.Errorf("%d sleep commands, want 3:\n%s", sleeps, describe(cmds))
	}
}

// A script that writes marks of its own (its PS4 holds their prefix)
// cannot make the book grow, or a mark's work grow with those before it:
// 600,000 marks of distinct pids joined to one pipeline took 280 s of
// headroom's CPU, and 12M marks of distinct $! held 697 MB (the
// thirty-third attacker's 1 and 2).
func TestForgedMarksKeepTheBookBounded(t *testing.T) {
	book := newStatusBook()
	const root = 77
	mark := func(pid, bg int) {
		m, ok := parseMark(1, fmt.Sprintf("%s%s 0|0|%d|%d||%d] :", TraceMarker, testNonce, pid, root, bg), testNonce)
		if !ok {
			t.Fatal("mark not parsed")
		}
		book.mark(m)
	}
	mark(root, 0)
	for i := 1; i <= 50_000; i++ {
		mark(100_000+i, 0) // joined to one pipeline, each a new pid
	}
	for i := 1; i <= 50_000; i++ {
		mark(root, 200_000+i) // each a new $!
	}
	if len(book.procs) > MaxTracedShells || len(book.bgJobs) > MaxBackgroundJobs {
		t.Errorf("the book follows %d shells and %d jobs, past its bounds %d and %d", len(book.procs), len(book.bgJobs), MaxTracedShells, MaxBackgroundJobs)
	}
	for _, p := range book.procs {
		if p.last != nil && len(p.last.pids) > MaxTracedPipeline {
			t.Errorf("a pipeline of %d commands kept, past %d", len(p.last.pids), MaxTracedPipeline)
		}
	}
	book.finish(0)
}

func BenchmarkForgedPipelineMarks(b *testing.B) {
	for b.Loop() {
		book := newStatusBook()
		m, _ := parseMark(1, TraceMarker+testNonce+" 0|0|77|77||0] :", testNonce)
		book.mark(m)
		for i := 1; i <= 20_000; i++ {
			m, _ := parseMark(1, fmt.Sprintf("%s%s 0|0|%d|77||0] :", TraceMarker, testNonce, 100_000+i), testNonce)
			if n, joined := book.mark(m); joined && book.grew {
				_ = book.show(n)
			}
		}
	}
}
