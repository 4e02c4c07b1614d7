package runner

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A traced step runs its script under `bash -x` (or `sh -x` where the
// image has no bash) and is recorded as the commands the script ran, each
// a step of its own with its own output and exit status.
//
// Each trace line starts with PS4: a record separator then TraceMarker.
// Bash repeats PS4's first character once per level of command
// substitution, so the number of separators is the line's depth; only
// depth 1 makes steps. The trace line is found wherever it starts in a
// line: a command whose output does not end in a newline leaves the next
// trace line glued to its last line, which is split off again. PS4 holds
// no newline, so bash writes each trace line at once (it flushes its
// line-buffered stderr at a newline), and commands of a pipeline tracing
// at the same moment do not cut into each other's lines.
//
// Bash's PS4 is expanded before each command, so the trace line carries
// the shell's state when the command starts: $? and PIPESTATUS (the exit
// statuses of the pipeline that ran last, which an `if`, `while` or `!`
// leaves untouched), BASHPID (which process traced it: the script's shell
// or a pipeline's or subshell's child), $$ (the script's shell), the
// function depth and $! (the latest background job). From these each
// command's own status is read back (see statusBook). An EXIT trap traces
// one last no-op so the script's last command gets its status the same
// way. `sh -x` has none of this: there, every command but the last is
// recorded with its status unknown.

// TraceMarker starts the trace line of each command a traced script runs,
// after one record separator per level of command substitution; the
// step's nonce and a space follow it.
const TraceMarker = "[hr "

// A traced step's trace lines carry a nonce drawn for that step alone,
// which reaches its wrapper in the environment variable TraceNonceVar
// (the step driver and the engine's exec both pass a step's environment,
// whichever binary runs it). The wrapper takes it out of the
// environment before the script starts, and the traced shell holds it in
// PS4, which it does not export: a command the script runs cannot learn
// it, so a line it prints that looks like a trace line (a log replayed,
// a file cat'd, an agent echoing the marker) is its output, not a step.
// The script itself holds its PS4, and could forge only the commands it
// could have run.
const TraceNonceVar = "HEADROOM_TRACE_NONCE"

// TraceTeeVar, TraceNeedBashVar and TraceLoginVar carry a traced step's
// TeeStdout, NeedBash and LoginShell to its wrapper, which takes them out
// of the environment before the script starts. TraceLogVar carries its
// OutputFile to the step driver (workload.Command.OutputFile), which
// writes it; it never reaches the wrapper.
const (
	TraceTeeVar      = "HEADROOM_TRACE_TEE"
	TraceLogVar      = "HEADROOM_TRACE_LOG"
	TraceNeedBashVar = "HEADROOM_TRACE_NEED_BASH"
	TraceLoginVar    = "HEADROOM_TRACE_LOGIN"
	// TraceOffVar runs a step in the wrapper untraced (model.Step.SelfTraced).
	TraceOffVar = "HEADROOM_TRACE_OFF"
)

// newTraceNonce draws a traced step's nonce: 96 random bits in 16
// characters (base64url, which needs no quoting in a shell word).
func newTraceNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// traceEnd is the no-op the EXIT trap traces when the script ends.
const traceEnd = ": headroom-trace-end"

// traceSetupHead and traceSetupTail are what bash reads from BASH_ENV
// before the script, the nonce between them: PS4 (single-quoted so that
// it expands at each command, not here), the EXIT trap, and BASH_ENV
// given back the step's own (taskBashEnv) or unset, so that nested shells
// run as they would have, the step's own then read untraced. Its own
// commands' trace goes to /dev/null. It ends by giving the script
// /dev/null for its stdin, the step's own (the driver's, an exec's with
// no stdin attached, Harbor's): the setup came on stdin, as a
// here-document, which a bash older than 5.1 writes to a file, and
// BASH_ENV's open of /proc/self/fd/0 read that file from its start
// while the script's stdin stayed there. Its first reader (a `read`,
// `$(cat)`, an agent CLI reading piped input) got the setup, nonce and
// all: a test.sh that counted its stdin failed, and a command that
// printed trace lines with the nonce forged steps that never ran (the
// eighteenth attacker's 4). Every expansion in PS4 must hold under
// `set -u`: FUNCNAME is unset outside functions, $! before a background
// job (an empty function depth reads as 0).
//
// PS4 is expanded and written before every command, so its length and
// its expansions are the trace's cost (#40.14: bash's CPU on an 80,002-
// command loop, docs/PERFORMANCE.md): the marker and nonce are short,
// $$ (the script's shell, the same for every command) is put in once
// here, and the function depth tests FUNCNAME's first element, not the
// whole array.
const (
	traceSetupHead = `{ if [ -n "${` + taskBashEnv + `+x}" ]; then BASH_ENV=$` + taskBashEnv + `; unset ` + taskBashEnv + `; else unset BASH_ENV; fi; PS4=$'\x1e` + TraceMarker + `'`
	traceSetupTail = `' ''$?|${PIPESTATUS[@]}|$BASHPID|'$$'|${FUNCNAME+${#FUNCNAME[@]}}|${!:-0}] '; [ "${BASH_VERSINFO[0]}" -ge 5 ] || ` + traceOldBashJob + `; trap '` + traceEnd + `' EXIT; set +x; BASH_XTRACEFD=` + traceFDs + `; exec </dev/null; } 2>/dev/null; [ -z "${BASH_ENV-}" ] || . "$BASH_ENV"; set -x`
)

// taskBashEnv carries the step's own BASH_ENV (the image's ENV, a
// task's [verifier.env]: how conda and venv images give a non-interactive
// bash their PATH) past the trace wrapper, which takes BASH_ENV for its
// own setup: the setup puts it back, exported for the shells the script
// starts, and sources it as bash would have before the script. Before,
// the setup unset it: a verifier whose image set BASH_ENV to a file that
// put its tools on PATH failed "command not found" where Harbor passes
// (the eleventh attacker's 3).
const taskBashEnv = "HEADROOM_TASK_BASH_ENV"

// traceShInner runs a script under `sh -x` where the image has no bash:
// PS4 read from a here-document on fd 3 (an exported PS4 would hand the
// nonce to every command the script runs), then the script sourced with
// tracing on, as `sh -x script` runs it. Its own `.` is the first trace
// line, which opens no step.
const traceShInner = `IFS= read -r PS4 <&3; exec 3<&-; PS4="$PS4 "; f=$0; case $f in */*) ;; *) f=./$f;; esac; set -x; . "$f"`

// traceFDs is the file descriptor bash writes its trace to
// (BASH_XTRACEFD), opened by the wrapper on the step's output: the
// trace has a channel of its own, not the script's stderr. On stderr, a
// script that captured its own stderr captured the trace too:
// `out=$(check 2>&1)` of a function held "++ echo ok" beside "ok", and
// `exec 2>FILE` wrote the trace into FILE (the twelfth round's first
// row), where Harbor, which traces nothing, has only what the script
// printed. A high number, clear of the 3–9 scripts use by hand, the 10
// and up bash gives `{fd}`, and the 200 of the flock idiom. `sh -x` has
// no such variable: its trace stays on stderr.
const traceFDs = "237"

// TraceFD is traceFDs as a number, for the step driver: a process that
// holds a traced step's output only as its trace holds nothing of the
// harness's (workload.Command.TraceFD).
const TraceFD = 237

// traceOldBashJob sets $! before the script starts, on a bash older than
// 5.0, by a background job that does nothing: such a bash calls $!
// unbound under `set -u` before any background job, even in PS4's
// ${!:-0}, and every command of a script in strict mode on such an image
// (Ubuntu 18.04, RHEL 8, Amazon Linux 2: bash 4.4 or 4.2) died at its
// first command, "$!: unbound variable", where its harness ran it (the
// eighteenth attacker's 1). Its pid, gone before the script's first
// command, is in no command's window; the script's own first background
// job replaces it, as PS4 needs to pair statuses rightly.
const traceOldBashJob = `{ : & }`

// traceWrapper runs a traced step's argv after `bash -x` (or `sh -x`).
// Bash ignores PS4 from the environment when run as root, hence
// BASH_ENV, read from a here-document (the script's stdin is then at its
// end, as it was with a pipe), as /proc/self/fd/0, and the trace is
// turned on by that setup's last command, not by bash's -x: a task that
// removed /dev/stdin (an earlier step's `rm -f /dev/stdin`) left bash no
// setup to read, and -x then traced with bash's own "+ " on the script's
// stderr, which a terminal-bench verifier's parser read as its output
// (the fourteenth attacker's 5). Without its setup the script now runs
// untraced, one step, its output its own. Each branch execs the shell: a wrapper
// left waiting would keep the nonce in its own environment's memory,
// which /proc shows. The script's stderr is joined to its stdout, and
// the trace (traceFDs) written to the same pipe: one pipe keeps each
// command's output after the trace line that starts it, where two would
// let the engine reorder them. traceFDs is opened by a first bash (the
// wrapper may be sh, whose redirections reach fd 9 at most), which then
// execs the traced one; its $0 is the tee's file, "" for none. For a
// step with TraceLoginVar set, that first bash is an interactive login
// one (-lic), which reads the login files before it execs; what it says
// on stderr as it starts (no terminal, no job control) is dropped, its
// stderr given back (fd 3) before the script.
//
// A step with TraceTeeVar set also has the script's stdout written to
// that file, as Harbor's verifier runs `bash test.sh | tee FILE`: the
// first bash runs that pipeline (the trace and the script's stderr do
// not pass through the tee, so the file holds what Harbor's would) and
// ends with the script's status once both have ended. As under Harbor,
// the step lasts until the tee has read to the end of its input: a
// process the script left in the background with its stdout open holds
// it (to the verifier's timeout, if it runs that long), and what it
// writes before it ends is in the file. The tee was a process
// substitution the script's bash did not wait for: such a verifier
// passed at once where Harbor's timed out, and one whose background
// job wrote the reward 3 s later failed where Harbor's passed (the
// twelfth attacker's 1).
//
// A step with TraceNeedBashVar set ends 127 without bash, as Harbor's
// `bash -c` does, instead of falling back to sh.
var traceWrapper = `exec 2>&1
n=$` + TraceNonceVar + `; unset ` + TraceNonceVar + `
t=${` + TraceTeeVar + `-}; b=${` + TraceNeedBashVar + `-}; o=${` + TraceOffVar + `-}; f=-c; [ -z "${` + TraceLoginVar + `-}" ] || f=-lic; unset ` + TraceTeeVar + ` ` + TraceNeedBashVar + ` ` + TraceLoginVar + ` ` + TraceOffVar + `
if command -v bash >/dev/null 2>&1; then
if [ -n "${BASH_ENV+x}" ]; then ` + taskBashEnv + `=$BASH_ENV; export ` + taskBashEnv + `; fi
if [ -n "$o" ]; then
BASH_ENV= exec bash $f '` + traceBashInner + `' "$t" "$@" 3>&2 2>/dev/null <<EOF
` + hereDocText(untracedSetup) + `
EOF
fi
BASH_ENV= exec bash $f '` + traceBashInner + `' "$t" "$@" 3>&2 2>/dev/null <<EOF
` + hereDocText(traceSetupHead) + `$n` + hereDocText(traceSetupTail) + `
EOF
elif [ -n "$b" ]; then
echo "` + traceNoBashLine + `"
exit 127
elif [ -n "$o" ]; then
exec sh "$@"
else
exec sh -c '` + traceShInner + `' "$@" 3<<EOF
$(printf '\036')` + TraceMarker + `$n sh]
EOF
fi`

// untracedSetup is a self-traced step's (TraceOffVar) setup: the step's
// own BASH_ENV given back and sourced, as in traceSetupHead, and no
// trace of headroom's: the script's own `set -x` writes bash's "+ "
// lines to its stderr, where the harness's would be.
const untracedSetup = `{ if [ -n "${` + taskBashEnv + `+x}" ]; then BASH_ENV=$` + taskBashEnv + `; unset ` + taskBashEnv + `; else unset BASH_ENV; fi; exec </dev/null; } 2>/dev/null; [ -z "${BASH_ENV-}" ] || . "$BASH_ENV"`

// traceBashInner is the first bash's script in traceWrapper: it opens
// traceFDs, then execs the traced bash, or runs it into the tee ($0, the
// tee's file) and stays as that pipeline's parent for the whole step, or,
// with TraceHoldVar set, runs it and stays once it has ended (traceHold).
const traceBashInner = `exec 2>&3 3>&- ` + traceFDs + `>&1; h=${` + TraceHoldVar + `-}; unset ` + TraceHoldVar + `; [ -n "$0" ] || [ -n "$h" ] || BASH_ENV=/proc/self/fd/0 exec bash "$@"; ` +
	`[ -z "$h" ] || { BASH_ENV=/proc/self/fd/0 bash "$@"; ` + traceHold + `; }; ` +
	`BASH_ENV=/proc/self/fd/0 bash "$@" | tee -- "$0" ` + traceFDs + `>&-; exit "${PIPESTATUS[0]}"`

// TraceHoldVar, in a traced step's environment under the engine's exec,
// asks the wrapper to stay once the script has ended (traceHold), so
// that the exec lasts while processes the script left hold its output,
// as Harbor's oracle's tee does (runner.HoldOutputVar). The engine closes
// an exec's output two seconds after its process ends, whoever still
// holds it: a job solve.sh left writing to it then died of EPIPE (a
// server logging the verifier's requests), and what it wrote was lost
// (the nineteenth attacker's 2).
const TraceHoldVar = "HEADROOM_TRACE_HOLD"

// traceHold is what the first bash does once the script has ended with
// TraceHoldVar set: it moves the step's output to HoldFD (headroom,
// reading /proc from the host, sees its stdout become /dev/null: the
// script has ended; and reads there which pipe the output is, however
// late it first looked) and waits for SIGUSR1, which headroom sends once
// no other process holds the output, then exits with the script's
// status. It waits in a read of a pipe it holds both ends of (no program
// of the image's: an image without sleep must not make it spin), made by
// a subshell that lets go of HoldFD first. Held past the step's timeout,
// it is never sent: the exec, and the output's reader with it, stays
// until the container goes.
const traceHold = `s=$?; trap "exit $s" USR1; exec ` + holdFD + `>&1 >/dev/null 2>&1 </dev/null ` + traceFDs + `>&-; while :; do read -r _ <> <(exec ` + holdFD + `>&-); done`

// HoldFD is the descriptor on which the waiting wrapper (traceHold) keeps
// the step's output: one no script's own redirections reach for (as
// TraceFD).
const (
	holdFD = "236"
	HoldFD = 236
)

// traceNoBashLine is what a NeedBash step's wrapper says, its only
// output, when the image has no bash.
const traceNoBashLine = "headroom: bash: not found: the image has no bash, and Harbor runs every command in a task's container as bash -c, so this step cannot run there (exit 127)"

// hereDocText makes s appear as itself in a here-document whose
// delimiter is unquoted (where $, ` and \ are the shell's).
func hereDocText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "$", `\$`, "`", "\\`").Replace(s)
}

// traceArgv is the command that runs a traced step's argv; its nonce
// goes in the step's environment as TraceNonceVar. A step that needs
// bash (Harbor's and terminal-bench's, which run everything as bash)
// starts its wrapper with bash, never sh: an agent that removed /bin/sh,
// or made it /bin/true, left every later step of headroom's unable to
// start (127, or a verifier that ran nothing), where the harness, which
// calls no sh, ran the verifier (the fourteenth attacker's 1).
func traceArgv(argv []string, bash bool) []string {
	shell := "sh"
	if bash {
		shell = "bash"
	}
	return append([]string{shell, "-c", traceWrapper, "headroom-trace"}, argv...)
}

// traceMark is one command's trace line.
type traceMark struct {
	depth int    // levels of command substitution, 1 at the top
	cmd   string // the command as the shell traced it (expanded)
	// sh says the trace came from `sh -x`, which reports no statuses.
	sh bool
	// last is $?, pipe PIPESTATUS, when the command started.
	last int
	pipe []int
	pid  int // BASHPID: the process that runs the command
	root int // $$: the script's shell
	// funcs is the depth of shell function calls.
	funcs int
	// bg is $!, the latest background job's process (0: none).
	bg int
}

// end says the mark is the EXIT trap's: the script is ending.
func (m traceMark) end() bool { return m.cmd == traceEnd && m.pid == m.root }

// parseMark reads a trace line that followed depth record separators.
func parseMark(depth int, line, nonce string) (traceMark, bool) {
	rest, ok := strings.CutPrefix(line, TraceMarker+nonce+" ")
	if !ok || nonce == "" {
		return traceMark{}, false
	}
	head, cmd, ok := strings.Cut(rest, "] ")
	if !ok {
		head, ok = strings.CutSuffix(rest, "]")
		if !ok {
			return traceMark{}, false
		}
	}
	m := traceMark{depth: depth, cmd: cmd}
	if head == "sh" {
		m.sh = true
		return m, true
	}
	f := strings.Split(head, "|")
	if len(f) != 6 {
		return traceMark{}, false
	}
	nums := make([]int, 0, 5)
	for i, s := range []string{f[0], f[2], f[3], f[4], f[5]} {
		if s == "" && i == 3 {
			s = "0" // no function running: FUNCNAME unset
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return traceMark{}, false
		}
		nums = append(nums, n)
	}
	for _, s := range strings.Fields(f[1]) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return traceMark{}, false
		}
		m.pipe = append(m.pipe, n)
	}
	m.last, m.pid, m.root, m.funcs, m.bg = nums[0], nums[1], nums[2], nums[3], nums[4]
	return m, true
}

// splitTrace finds a trace line of the step whose nonce is given in a
// line of a traced script's output: it returns the output before it, and
// the mark if there is one. A line that looks like a trace line but
// lacks the nonce is output. Where
// shells traced at the same moment (a pipeline's commands under sh,
// which writes a trace line in pieces) a line can hold a piece of one
// trace line before another: the last is the mark, the pieces are
// dropped.
func splitTrace(line, nonce string) (string, *traceMark) {
	marker := "\x1e" + TraceMarker + nonce + " "
	k := strings.LastIndex(line, marker)
	if k < 0 || nonce == "" {
		return line, nil
	}
	j := k
	for j > 0 && line[j-1] == '\x1e' {
		j--
	}
	m, ok := parseMark(k+1-j, line[k+1:], nonce)
	if !ok {
		return line, nil
	}
	text := line[:j]
	if f := strings.Index(text, marker); f >= 0 {
		text = strings.TrimRight(text[:f], "\x1e")
	}
	return text, &m
}

// statusBook works out each traced command's own exit status from the
// marks that follow it. Steps are numbered in the order they opened; the
// book says, as statuses become known, which step exited how. A pipeline
// is one step: its commands run at once, in processes of their own, and
// their output cannot be told apart.
//
//   - A command run by a shell is followed by that shell's next command,
//     whose PIPESTATUS is the command's own status (an `if`, `while` or `!`
//     does not change it, where $? would).
//   - A command followed by a deeper function depth called a function: its
//     status is PIPESTATUS when the shell is back at its depth.
//   - The script's shell runs a pipeline's commands and subshells in child
//     processes, forked together from one state of the shell (a window):
//     the first child's mark carries that state, whose PIPESTATUS is the
//     status of the shell's previous command; the shell's next mark (or
//     the first child of the next window) holds one status per child,
//     which go, in the order the children were forked (process ids), to
//     each child's last command. Where children and statuses do not pair
//     up (a nested pipeline, a process substitution) the statuses are
//     unknown, and a background job's are never reported.
//   - The script's last command is followed by the EXIT trap's mark, whose
//     $? is the script's exit status (so an `exit N` gets N). Without that
//     mark (the script set its own EXIT trap, or exec'd) the script's exit
//     status goes to its last command.
type statusBook struct {
	next  int // number of the next step
	procs map[int]*traceProc
	// window is the children forked since the script's shell last traced.
	window   *traceWindow
	rootSeen bool
	root     int
	// rootBg is $! at the script's shell's latest mark: a child whose
	// pid it is forked before that mark.
	rootBg int
	// bgJobs are the pids any mark gave as $!: the script's background
	// jobs, whose status no mark reports (settleWindow drops them).
	bgJobs map[int]bool
	sh     bool
	sawEnd bool
	// joined is the step the last mark joined, and grew whether that
	// mark added a command to it (past MaxTracedPipeline it does not).
	joined *pendingStep
	grew   bool

	resolved []stepStatus
}

// traceProc is one shell process's commands whose status is not known.
type traceProc struct {
	last   *pendingStep   // its latest command
	frames []*pendingStep // function calls still running, innermost last
}

// pendingStep is a step whose status is not known yet.
type pendingStep struct {
	step  int
	funcs int
	cmd   string
	// pids and cmds are a pipeline step's processes and their commands;
	// cmdBytes counts the commands' bytes (those past OutputLineBytes
	// are kept empty).
	pids     []int
	cmds     []string
	cmdBytes int
}

// traceWindow is the children the script's shell forked from one state.
type traceWindow struct {
	state traceMark // the first child's mark: the inherited state
	pids  []int     // in the order they first traced
	// open is the step the window's first mark opened, which the
	// pipeline's other commands join while it is the newest step.
	open *pendingStep
}

// stepStatus is one step's exit status, or why it is unknown; pipe is a
// pipeline's statuses, one per command, when they differ.
type stepStatus struct {
	step    int
	code    int
	pipe    []int
	unknown string
}

func newStatusBook() *statusBook { return &statusBook{procs: map[int]*traceProc{}} }

// What the book keeps of a script's trace is bounded: the processes it
// follows (MaxTracedShells), the commands of one pipeline
// (MaxTracedPipeline) and the background jobs it knows (MaxBackgroundJobs).
// Past them a command's status is unknown. A script can write trace marks
// of its own (its PS4 holds the mark's prefix: bash expands it from a
// variable the script can read), and 600,000 marks of distinct pids
// joined to one pipeline took headroom 280 s of CPU, each mark's work
// growing with those before it, until the agent's time limit ended the
// trial, recorded as the agent's timeout; 12M marks of distinct $! held
// 697 MB (the thirty-third attacker's 1 and 2).
const (
	MaxTracedShells   = 4096
	MaxTracedPipeline = 256
	MaxBackgroundJobs = 4096
)

// Why a status is unknown, as the record says it.
const (
	unknownSh         = "not reported: the image has no bash, and sh -x does not report each command's status"
	unknownPipeline   = "not reported: a command of a pipeline or subshell whose statuses could not be paired with its commands"
	unknownBackground = "not reported: it ran in the background"
	unknownEnded      = "not reported: the script ended while it ran"
)

func (b *statusBook) set(step, code int) {
	b.resolved = append(b.resolved, stepStatus{step: step, code: code})
}

func (b *statusBook) unknown(step int, why string) {
	b.resolved = append(b.resolved, stepStatus{step: step, code: -1, unknown: why})
}

// setPipe gives a step the status a PIPESTATUS says, if it says one.
func (b *statusBook) setPipe(step int, pipe []int) {
	if len(pipe) > 0 && slices.Min(pipe) == slices.Max(pipe) {
		b.set(step, pipe[0])
		return
	}
	b.unknown(step, unknownPipeline)
}

// setPipeline gives a pipeline step its commands' statuses; its own is
// the last command's, or, under pipefail, $? (last) when that is the
// last failing command's.
func (b *statusBook) setPipeline(step int, pipe []int, last int) {
	code := pipe[len(pipe)-1]
	for i := len(pipe) - 1; i >= 0; i-- {
		if pipe[i] != 0 {
			if last == pipe[i] {
				code = last
			}
			break
		}
	}
	st := stepStatus{step: step, code: code}
	if slices.Min(pipe) != slices.Max(pipe) {
		st.pipe = pipe
	}
	b.resolved = append(b.resolved, st)
}

// take returns the statuses learnt since it was last called.
func (b *statusBook) take() []stepStatus {
	r := b.resolved
	b.resolved = nil
	return r
}

// mark takes a depth-1 mark. It returns the number of the step the mark
// opens, or -1 for one that opens none (the script's end, or under sh the
// wrapper's own first command), and whether the
// mark instead joined the newest step as another command of its pipeline
// (whose command line is then show(step)).
func (b *statusBook) mark(m traceMark) (step int, joined bool) {
	if m.sh {
		if !b.sh {
			b.sh = true
			return -1, false // the wrapper's own `.` of the script
		}
		if b.next > 0 {
			b.unknown(b.next-1, unknownSh)
		}
		b.next++
		return b.next - 1, false
	}
	if !b.rootSeen {
		b.rootSeen, b.root = true, m.root
	}
	if m.bg != 0 && len(b.bgJobs) < MaxBackgroundJobs {
		if b.bgJobs == nil {
			b.bgJobs = map[int]bool{}
		}
		b.bgJobs[m.bg] = true
	}
	b.joined, b.grew = nil, false
	w := b.window
	switch p := b.procs[m.pid]; {
	case m.pid == b.root:
		if w != nil {
			b.settleWindow(m)
		}
		b.advance(b.proc(b.root), m)
		b.rootBg = m.bg
	case p != nil:
		b.advance(p, m)
	case w != nil && m.pid == w.state.bg:
		// A background job started before the window's children, its
		// first mark come after theirs (its $! is older): a command of
		// its own, which leaves the window as it is (`sleep 1 &` then
		// `false | true`: the pipeline's commands, traced either side of
		// the job's, are still one pipeline).
	case w != nil && sameState(w.state, m):
		if len(w.pids) < MaxTracedPipeline {
			w.pids = append(w.pids, m.pid)
		}
		if o := w.open; o != nil && o.step == b.next-1 {
			b.joined = o
			if len(o.pids) >= MaxTracedPipeline {
				return o.step, true // kept no more: its statuses unknown
			}
			// A command past what show keeps is not kept (its pid is,
			// for the statuses): a pipeline of thousands stays bounded.
			cmd := m.cmd
			if o.cmdBytes += len(cmd); o.cmdBytes > OutputLineBytes {
				cmd = ""
			}
			o.pids, o.cmds = append(o.pids, m.pid), append(o.cmds, cmd)
			b.proc(m.pid).last = o
			b.grew = true
			return o.step, true
		}
	default:
		if w != nil {
			// The shell's state changed since the window forked: its
			// children have all ended, and this one inherited their
			// statuses.
			b.settleWindow(m)
		}
		if b.rootBg == 0 || m.pid != b.rootBg {
			b.forked(m)
		}
		b.window = &traceWindow{state: m, pids: []int{m.pid}}
	}
	if m.end() {
		b.sawEnd = true
		return -1, false
	}
	step = b.next
	b.next++
	ps := &pendingStep{step: step, funcs: m.funcs, cmd: m.cmd, pids: []int{m.pid}, cmds: []string{m.cmd}, cmdBytes: len(m.cmd)}
	b.proc(m.pid).last = ps
	if w := b.window; m.pid != b.root && w != nil && w.open == nil && w.pids[0] == m.pid {
		w.open = ps
	}
	return step, false
}

// show is a step's command line: a pipeline's commands in fork order.
func (b *statusBook) show(step int) string {
	if l := b.joined; l != nil && l.step == step {
		return l.show()
	}
	for _, p := range b.procs {
		if l := p.last; l != nil && l.step == step {
			return l.show()
		}
	}
	return ""
}

// show is the step's command line: a pipeline's commands in fork order.
func (l *pendingStep) show() string {
	idx := make([]int, len(l.pids))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, c int) int { return l.pids[a] - l.pids[c] })
	var parts []string
	for _, k := range idx {
		if l.cmds[k] != "" {
			parts = append(parts, l.cmds[k])
		}
	}
	// Cut as every shown command is (runStep's clip), also when commands
	// join a running pipeline.
	return Clip(strings.Join(parts, " | "), OutputLineBytes)
}

// sameState says whether two children's marks show the same inherited
// state of the script's shell (they may have forked together).
// sameState says whether two children's first marks carry the shell's
// state at one fork: the commands of one pipeline. $! tells background
// jobs started one after another apart (each later job's is the one
// before it), which $? and PIPESTATUS do not: `for i in 1 2 3; do sleep
// 1.$i & done` was recorded as the pipeline "sleep 1.1 | sleep 1.3", a
// status given to a job, and a storm of jobs' kills named after such
// pipelines (43 of 100, the twenty-fourth attacker's 2).
func sameState(a, b traceMark) bool {
	return a.last == b.last && a.bg == b.bg && slices.Equal(a.pipe, b.pipe)
}

func (b *statusBook) proc(pid int) *traceProc {
	p := b.procs[pid]
	if p == nil {
		p = &traceProc{}
		if len(b.procs) < MaxTracedShells {
			b.procs[pid] = p
		} // else followed no further: its commands' statuses unknown
	}
	return p
}

// advance settles what a process's next mark m says of its own earlier
// commands.
func (b *statusBook) advance(p *traceProc, m traceMark) {
	if l := p.last; l != nil {
		p.last = nil
		switch {
		case m.funcs > l.funcs:
			p.frames = append(p.frames, l) // a function call, still running
		case m.end() && isExit(l.cmd):
			b.set(l.step, m.last)
		default:
			b.setPipe(l.step, m.pipe)
		}
	}
	for n := len(p.frames); n > 0 && p.frames[n-1].funcs >= m.funcs; n = len(p.frames) {
		// The call's status is PIPESTATUS, like any command's: $? may
		// already be a command substitution's of the next command.
		b.setPipe(p.frames[n-1].step, m.pipe)
		p.frames = p.frames[:n-1]
	}
}

// isExit says whether a traced command is the exit builtin.
func isExit(cmd string) bool { return cmd == "exit" || strings.HasPrefix(cmd, "exit ") }

// forked settles the shell's command before a child forked: the child's
// first mark carries the shell's state at the fork. Not for a background
// job whose first mark comes after the shell's next (which holds its pid
// in $!: rootBg): the shell's command then is a later one, and the job's
// state, older, was read as its status (`nosuchcmd`, `sleep 2 &`, `echo
// hello`: echo's 127, the eighteenth attacker's 6).
func (b *statusBook) forked(child traceMark) {
	b.advance(b.proc(b.root), traceMark{funcs: child.funcs, last: child.last, pipe: child.pipe, pid: b.root, root: b.root})
}

// settleWindow gives the window's children's last commands the statuses
// of PIPESTATUS as the script's shell had it after them (in m), one per
// child process in fork order; m's $! is the latest background job,
// whose status no mark reports.
func (b *statusBook) settleWindow(m traceMark) {
	w := b.window
	b.window = nil
	pids := slices.Clone(w.pids)
	slices.Sort(pids)
	if i := slices.Index(pids, m.bg); i >= 0 && m.bg != 0 {
		pids = slices.Delete(pids, i, i+1)
		b.drop(m.bg, unknownBackground)
	}
	// Any other background job (an earlier $!, later jobs having moved
	// it on) is no pipeline's either.
	pids = slices.DeleteFunc(pids, func(pid int) bool {
		if b.bgJobs[pid] {
			b.drop(pid, unknownBackground)
			return true
		}
		return false
	})
	paired := len(pids) == len(m.pipe)
	var order []*pendingStep
	statuses := map[*pendingStep][]int{}
	for i, pid := range pids {
		p := b.procs[pid]
		if p == nil || p.last == nil || !paired {
			continue
		}
		if _, ok := statuses[p.last]; !ok {
			order = append(order, p.last)
		}
		statuses[p.last] = append(statuses[p.last], m.pipe[i])
	}
	for _, ps := range order {
		if st := statuses[ps]; len(st) == len(ps.pids) || len(ps.pids) == 1 {
			b.setPipeline(ps.step, st, m.last)
		} else {
			b.unknown(ps.step, unknownPipeline)
		}
		for _, pid := range ps.pids {
			if p := b.procs[pid]; p != nil && p.last == ps {
				p.last = nil
			}
		}
	}
	for _, pid := range pids {
		b.drop(pid, unknownPipeline)
	}
}

// drop forgets a process, its unsettled commands unknown for why.
func (b *statusBook) drop(pid int, why string) {
	p := b.procs[pid]
	delete(b.procs, pid)
	if p == nil {
		return
	}
	if p.last != nil {
		b.unknown(p.last.step, why)
		for _, q := range b.procs {
			if q.last == p.last {
				q.last = nil // one record per step
			}
		}
	}
	for _, f := range p.frames {
		b.unknown(f.step, why)
	}
}

// finish settles what is left when the script has exited with code.
func (b *statusBook) finish(code int) {
	switch {
	case b.sh:
		if b.next > 0 {
			b.set(b.next-1, code)
		}
	case b.rootSeen && !b.sawEnd:
		// No EXIT trap mark: the script replaced the trap, or exec'd, or
		// was killed. Its exit status is its last command's.
		if w := b.window; w != nil {
			end := traceMark{last: code}
			if len(w.pids) == 1 {
				end.pipe = []int{code}
			}
			b.settleWindow(end)
		}
		p := b.proc(b.root)
		if p.last != nil {
			b.set(p.last.step, code)
			p.last = nil
		}
		for _, f := range p.frames {
			b.set(f.step, code)
		}
		p.frames = nil
	}
	for pid := range b.procs {
		b.drop(pid, unknownEnded)
	}
}

// nestedTrace shows a trace line of a command substitution (depth > 1) as
// the output line bash -x would have printed.
func nestedTrace(m traceMark) string {
	return fmt.Sprintf("%s %s", strings.Repeat("+", m.depth), m.cmd)
}
