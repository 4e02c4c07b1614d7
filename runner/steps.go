package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload/wire"
)

// tracedName names a step after the command it ran, short: its words
// joined by single spaces, cut at 48 characters. Only the words it keeps
// are read: a command's trace can be megabytes, and a `[[` over a
// 5,000-line value in a loop named a step a line at a time, all of it
// each time (two thirds of headroom's CPU there).
func tracedName(cmd string) string {
	const most = 48
	var b strings.Builder
	runes := 0
	for w := range strings.FieldsSeq(cmd) {
		if runes > 0 {
			b.WriteByte(' ')
			runes++
		}
		w = w[:min(len(w), utf8.UTFMax*(most+1))] // a word of megabytes: its start
		b.WriteString(w)
		if runes += utf8.RuneCountInString(w); runes > most {
			break
		}
	}
	name := b.String()
	if r := []rune(name); len(r) > most {
		name = string(r[:most-1]) + "…"
	}
	if name == "" {
		name = "(empty)"
	}
	return name
}

// openStep is a step being recorded.
type openStep struct {
	sr model.StepResult
	// head is the step's first lines of output, lines its latest.
	head      []string
	cpuBefore model.CPUUse
	cpuOK     bool
	// The container's CPU wait and the host's pressure when it opened;
	// split, the host's and the trial's shares of the wait so far then
	// (waitSplit).
	waitBefore            time.Duration
	waitOK                bool
	split                 bool
	hostBefore, ownBefore time.Duration
	psiBefore             pressure
	lines                 []string
	killsBefore           int
	// settled says a traced command's exit status is known.
	settled bool
	// light says the step is a traced command past the first
	// TracedHeadSteps, measured cheaply (beginLight); announced that its
	// start was said live (announce).
	light, announced bool
	// sent is how the step's output is sent (emitOutput).
	sent outputSent
}

// outputSent is how much of a step's output was sent, and what of it past
// its head is held to be sent as its tail.
type outputSent struct {
	bytes int64 // sent in order
	// held[first:] is what is held: dropped from the front, compacted
	// in place when half the slice is dropped lines (resliced at each
	// drop, every append reallocated).
	held      []heldLine
	first     int
	heldBytes int64
	skipped   int // dropped from held, never sent
	skippedB  int64
	tick      time.Time // when held was last looked at
	sinceTick int       // lines held since
}

type heldLine struct{ stream, text string }

// outputTick is how often a step printing past its head has its held
// output sent (while at most outputTickLines are held) or, printing
// faster, its latest line sent live.
const (
	outputTick      = 100 * time.Millisecond
	outputTickLines = 256
)

// emitOutput sends a line of a step's output: each line of its first
// model.LogStepHeadBytes as it comes; past them, held, and sent every
// outputTick while few are held, else only the latest line, live, for the
// console; what is held (the last model.LogStepTailBytes) is sent when
// the step ends (flushOutput). A line an event each cost ~500 ns through
// the sweep and the store: 50 million lines of `yes` took 73 s, the
// task's timeout (the sixteenth attacker's 1).
func (t *trialRun) emitOutput(o *openStep, stream, text string) {
	s := &o.sent
	n := int64(len(text)) + 1
	if s.bytes < model.LogStepHeadBytes && len(s.held) == s.first {
		s.bytes += n
		t.emit(event.OutputLine{Base: t.base(), Step: o.sr.Name, Stream: stream, Text: text})
		return
	}
	s.held = append(s.held, heldLine{stream, text})
	s.heldBytes += n
	for s.heldBytes > model.LogStepTailBytes || len(s.held)-s.first > model.LogStepTailLines {
		l := s.held[s.first]
		s.heldBytes -= int64(len(l.text)) + 1
		s.skipped++
		s.skippedB += int64(len(l.text)) + 1
		s.held[s.first] = heldLine{}
		s.first++
	}
	if s.first > len(s.held)/2 {
		m := copy(s.held, s.held[s.first:])
		clear(s.held[m:])
		s.held, s.first = s.held[:m], 0
	}
	// The clock is read at every line while few are held (a slow step's
	// lines go out within outputTick), every 64th past that.
	if s.sinceTick++; len(s.held)-s.first > outputTickLines && s.sinceTick%64 != 0 {
		return
	}
	now := time.Now()
	if now.Sub(s.tick) < outputTick {
		return
	}
	s.tick, s.sinceTick = now, 0
	if len(s.held)-s.first <= outputTickLines {
		t.flushOutput(o)
		return
	}
	t.emit(event.OutputLine{Base: event.Base{Trial: t.trial.ID, Time: now}, Step: o.sr.Name, Stream: stream, Text: text, Live: true})
}

// flushOutput sends what a step's output holds (emitOutput), the count
// of what it dropped with the first line.
func (t *trialRun) flushOutput(o *openStep) {
	s := &o.sent
	for i, l := range s.held[s.first:] {
		ev := event.OutputLine{Base: t.base(), Step: o.sr.Name, Stream: l.stream, Text: l.text}
		if i == 0 {
			ev.Skipped, ev.SkippedBytes = s.skipped, s.skippedB
			s.skipped, s.skippedB = 0, 0
		}
		s.bytes += int64(len(l.text)) + 1
		t.emit(ev)
	}
	s.held, s.first, s.heldBytes = nil, 0, 0
}

// A traced script's commands kept as steps are its first TracedHeadSteps
// and its last TracedTailSteps; those between are folded into one step
// that counts them by command name (model.FoldedCommands, at most
// maxFoldedNames, the rest as one), as a trial's activities are bounded
// (MaxActivities): a loop of 40,000 commands makes a record of 200 steps
// and a line. A command past the first TracedHeadSteps is measured
// cheaply: its time, status, output and sampled peak, and no kernel mark,
// CPU counters or pressure of its own (one mark is read for the fold and
// the last commands together), and its start is said live only now and
// then (announce), so a loop costs what it costs.
//
// A trial keeps at most MaxTrialSteps steps of traced commands in all:
// each script's head and tail are cut to what is left of it when the
// script starts (half each), and a script that starts with none left is
// all one fold. Per script alone, a multi-step task of 150 steps of
// 230-command scripts made a 37 MB record, over what a record may be,
// and every later trial of its sweep was cancelled (the thirteenth
// attacker's 3).
const (
	TracedHeadSteps = 100
	TracedTailSteps = 100
	MaxTrialSteps   = 2000
	maxFoldedNames  = 32
)

// tracedRoom is how many of its commands a traced script starting now
// keeps as steps at its head and at its tail (TracedHeadSteps and
// TracedTailSteps, within what is left of MaxTrialSteps).
func (t *trialRun) tracedRoom() (head, tail int) {
	room := max(MaxTrialSteps-len(t.res.Steps), 0)
	head = min(TracedHeadSteps, room/2)
	return head, min(TracedTailSteps, room-head)
}

// announceEvery bounds the live events of the traced commands past the
// first TracedHeadSteps: a command's start is said (a StepStarted, which
// names it in the console and in log.txt) when it opens or prints, if
// no other was said for this long; none says its end, the record does.
const announceEvery = 250 * time.Millisecond

// announce says a light step's start live, at most once every
// announceEvery (tr.announced is the last).
func (t *trialRun) announce(tr *tracedRun, o *openStep, now time.Time) {
	if !o.light || o.announced || now.Sub(tr.announced) < announceEvery {
		return
	}
	o.announced, tr.announced = true, now
	t.emit(event.StepStarted{Base: t.base(), Index: t.index, Phase: o.sr.Phase, Step: model.Step{Name: o.sr.Name, Show: o.sr.Show}})
	t.index++
}

// beginLight starts recording a traced command past the first
// TracedHeadSteps: its window in the recorder (its sampled peak, which
// step a kill lands in), and nothing the sandbox must be asked for.
func (t *trialRun) beginLight(phase string, st model.Step) *openStep {
	name, show := Clip(st.Name, OutputLineBytes), Clip(st.Show, OutputLineBytes)
	now := time.Now()
	return &openStep{light: true, killsBefore: t.openStep(name, now), sr: model.StepResult{Name: name, Show: show, Phase: phase, Start: now}}
}

// beginStep starts recording a step: its own kernel peak, peak and kills.
func (t *trialRun) beginStep(sb Sandbox, phase string, st model.Step) *openStep {
	sb.TakeKernelPeak() // reset, so the next reading is this step's own
	cpu, cpuOK := sb.CPUUse()
	wait, waitOK := cpuWait(sb)
	psi := t.r.readPressure()
	// A traced command's text is the command line the shell ran: a
	// 50 MB argument is a 50 MB name, in every event and the record.
	st.Name, st.Show = Clip(st.Name, OutputLineBytes), Clip(st.Show, OutputLineBytes)
	now := time.Now()
	killsBefore := t.openStep(st.Name, now)
	o := &openStep{killsBefore: killsBefore, cpuBefore: cpu, cpuOK: cpuOK, waitBefore: wait, waitOK: waitOK, psiBefore: psi, sr: model.StepResult{Name: st.Name, Show: st.Show, Phase: phase, Start: now}}
	t.splitFrom(sb, o)
	t.emit(event.StepStarted{Base: t.base(), Index: t.index, Phase: phase, Step: st})
	t.index++
	return o
}

// The record's bounds on output: a line is cut at OutputLineBytes (the
// rest counted as dropped), a step keeps its first StepHeadLines lines and
// its last OutputTailLines (Config), and a trial's record holds at most
// TrialOutputBytes of its steps' output: a task that prints a gigabyte
// gets a record of the same size as one that prints a page, and says how
// much it left out.
const (
	OutputLineBytes  = 2000
	StepHeadLines    = 50
	TrialOutputBytes = 1 << 20
)

func (o *openStep) add(text string, keep int) {
	if len(o.head) < StepHeadLines {
		o.head = append(o.head, text)
		return
	}
	o.lines = append(o.lines, text)
	if len(o.lines) > 4*keep {
		cut := len(o.lines) - keep
		for _, l := range o.lines[:cut] {
			o.sr.OutputDroppedBytes += int64(len(l)) + 1
		}
		// In place: a new slice at each cut grew again by reallocation,
		// a fifth of headroom's CPU on a step printing 10 million lines.
		n := copy(o.lines, o.lines[cut:])
		clear(o.lines[n:])
		o.lines = o.lines[:n]
		o.sr.OutputDropped += cut
	}
}

// shrink drops what kept could not keep of a closed step's output anyway
// (all but its last keep lines), then its oldest lines past maxBytes,
// counting them: a step held closed keeps its share, not its output.
func (o *openStep) shrink(keep, maxBytes int) {
	drop := func(l string) {
		o.sr.OutputDroppedBytes += int64(len(l)) + 1
		o.sr.OutputDropped++
	}
	if len(o.lines) > keep {
		for _, l := range o.lines[:len(o.lines)-keep] {
			drop(l)
		}
		o.lines = append(o.lines[:0:0], o.lines[len(o.lines)-keep:]...)
	}
	size := 0
	for _, l := range o.head {
		size += len(l) + 1
	}
	for _, l := range o.lines {
		size += len(l) + 1
	}
	for size > maxBytes && len(o.lines) > 0 {
		size -= len(o.lines[0]) + 1
		drop(o.lines[0])
		o.lines = o.lines[1:]
	}
	for size > maxBytes && len(o.head) > 0 {
		last := o.head[len(o.head)-1]
		size -= len(last) + 1
		drop(last)
		o.head = o.head[:len(o.head)-1]
	}
}

// Clip cuts s to at most n bytes, at a rune's start, marking the cut
// (model.Clip).
func Clip(s string, n int) string { return model.Clip(s, n) }

// kept is the step's output as its record keeps it: its head, a line
// saying what was left out, its last keep lines, within budget (what is
// left of the trial's TrialOutputBytes; the oldest lines go first, the
// end being what says how a step failed), which it lowers.
func (o *openStep) kept(keep int, budget *int) string {
	tail := o.lines
	if len(tail) > keep {
		cut := len(tail) - keep
		for _, l := range tail[:cut] {
			o.sr.OutputDroppedBytes += int64(len(l)) + 1
		}
		o.sr.OutputDropped += cut
		tail = tail[cut:]
	}
	kept := append(slices.Clone(o.head), tail...)
	nHead := len(o.head)
	size := 0
	for _, l := range kept {
		size += len(l) + 1
	}
	for len(kept) > 0 && size > *budget {
		size -= len(kept[0]) + 1
		o.sr.OutputDroppedBytes += int64(len(kept[0])) + 1
		o.sr.OutputDropped++
		kept = kept[1:]
		nHead = max(nHead-1, 0)
	}
	*budget = max(*budget-size, 0)
	if o.sr.OutputDropped > 0 || o.sr.OutputDroppedBytes > 0 {
		note := fmt.Sprintf("[headroom: %d line(s) and %s of this step's output not kept in the record (it keeps a step's first %d and last %d lines, each up to %d bytes, and %s a trial); the trial's log.txt keeps more]",
			o.sr.OutputDropped, model.FormatBytes(o.sr.OutputDroppedBytes), StepHeadLines, keep, OutputLineBytes, model.FormatBytes(TrialOutputBytes))
		kept = slices.Insert(kept, nHead, note)
	}
	return strings.Join(kept, "\n")
}

// endStep finishes a step's record and reports it.
func (t *trialRun) endStep(sb Sandbox, o *openStep) model.StepResult {
	t.flushOutput(o)
	out := o.kept(t.r.cfg.OutputTailLines, &t.outputBudget)
	sr := o.sr
	sr.End = time.Now()
	sr.Output = out
	t.res.OutputDroppedBytes += sr.OutputDroppedBytes
	kp, ok := sb.TakeKernelPeak()
	sr.CPU, sr.CPUWait = t.spanNoise(sb, o, sr.Start, sr.End)
	if sr.CPU != nil {
		total := *sr.CPU
		if t.res.CPU != nil {
			total = t.res.CPU.Add(*sr.CPU)
		}
		t.res.CPU = &total
	}
	if !ok {
		kp = 0
	}
	t.takeLeftovers(&sr)
	t.recorder.closeStep(&sr, kp, o.killsBefore)
	t.emit(event.StepEnded{Base: t.base(), Result: sr})
	return sr
}

// spanNoise adds a span of the trial's steps (from start, when o's
// readings were taken, to end) to its step noise: its wall time, the
// host's CPU pressure over it, and the CPU its threads waited for, the
// host's part and its own (model.SplitCPUWait: a thread its own CPU
// limit holds back waits too, and so does one behind its own siblings
// beyond its cores). It returns the CPU the span used and the host's
// part of its wait, where read.
func (t *trialRun) spanNoise(sb Sandbox, o *openStep, start, end time.Time) (*model.CPUUse, model.Duration) {
	if p := t.r.readPressure(); p.ok && o.psiBefore.ok {
		t.steps.cpuSome += p.cpuSome - o.psiBefore.cpuSome
		t.steps.psiWall += p.at.Sub(o.psiBefore.at)
	}
	t.steps.wall += end.Sub(start)
	var used *model.CPUUse
	if cpu, cpuOK := sb.CPUUse(); cpuOK && o.cpuOK {
		use := cpu.Sub(o.cpuBefore)
		used = &use
	}
	var hostWait model.Duration
	if w, ok := cpuWait(sb); ok && o.waitOK {
		var u model.CPUUse
		if used != nil {
			u = *used
		}
		host, own := model.SplitCPUWait(w-o.waitBefore, end.Sub(start), u, t.trial.Policy.LimitCPUs, t.r.cfg.HostCPUs)
		if cpu, cpuOK := sb.CPUUse(); o.split && cpuOK {
			// Interval by interval since the step opened.
			h, ow := t.recorder.waits.add(int64(w), cpu.UsageNanos, time.Now())
			host, own = h-o.hostBefore, ow-o.ownBefore
		}
		hostWait = model.Duration(host)
		t.steps.wait += host
		t.steps.ownWait += own
		t.steps.waitOK = true
	}
	return used, hostWait
}

// noiseFrom is a span's readings taken now, for spanNoise: where a
// traced script's commands past its head are measured cheaply, one span
// stands for all of them.
func (t *trialRun) noiseFrom(sb Sandbox) *openStep {
	cpu, cpuOK := sb.CPUUse()
	wait, waitOK := cpuWait(sb)
	o := &openStep{cpuBefore: cpu, cpuOK: cpuOK, waitBefore: wait, waitOK: waitOK, psiBefore: t.r.readPressure(), sr: model.StepResult{Start: time.Now()}}
	t.splitFrom(sb, o)
	return o
}

// splitFrom gives the wait's split a reading of sb as o opens, and o the
// host's and the trial's shares so far; a step in another container than
// the one the split follows (a separate verifier's) is split over its
// whole span instead.
func (t *trialRun) splitFrom(sb Sandbox, o *openStep) {
	if o.waitOK && o.cpuOK && o.cpuBefore.UsageNanos > 0 && t.recorder.waits.follows(sb) {
		o.hostBefore, o.ownBefore = t.recorder.waits.add(int64(o.waitBefore), o.cpuBefore.UsageNanos, time.Now())
		o.split = true
	}
}

// runStep runs one step and records it; a traced step is recorded as the
// commands its script ran, each with its own exit status. The result
// carries the step's (the whole script's) exit code and whether it timed
// out. The error is the engine's, not the step's: the step's own failure
// is its exit code.
func (t *trialRun) runStep(ctx context.Context, sb Sandbox, phase string, st model.Step, env []string) (model.StepResult, error) {
	if len(st.Files) > 0 {
		if sr, done, err := t.copyFiles(ctx, sb, phase, st); done {
			return sr, err
		}
	}
	defer TimePhase(t.trial.ID, phase+" step")()
	t.newScript()
	env = append(append([]string(nil), env...), st.Env...)
	for _, entry := range append(append([]string(nil), t.task.PassEnv...), st.PassEnv...) {
		env = append(env, passEnvValue(entry, t.r.cfg.Secrets))
	}
	argv := st.Argv
	if st.Trace {
		argv = traceArgv(st.Argv, st.NeedBash || st.LoginShell)
	}
	env, execNote, err := fitExec(argv, env)
	if err != nil {
		return model.StepResult{Name: st.Name}, err
	}
	var cur *openStep
	var tr *tracedRun
	var outFile *stepOutputFile // written here after the step (no driver)
	saidNoSpace := false
	first := len(t.res.Steps)
	if st.Trace {
		tr = &tracedRun{book: newStatusBook(), closed: map[int]int{}, light: map[int]*openStep{}, cur: -1, nonce: newTraceNonce()}
		tr.head, tr.tailMax = t.tracedRoom()
		env = append(env, TraceNonceVar+"="+tr.nonce)
		if st.TeeStdout != "" {
			env = append(env, TraceTeeVar+"="+st.TeeStdout)
		}
		if st.OutputFile != "" {
			env = append(env, HoldOutputVar+"=1")
			if ow, ok := sb.(OutputFileWriter); ok && ow.WritesOutputFiles() {
				// The driver writes it from the step's own pipe.
				env = append(env, TraceLogVar+"="+st.OutputFile)
			} else {
				outFile = &stepOutputFile{}
			}
		}
		if st.NeedBash {
			env = append(env, TraceNeedBashVar+"=1")
		}
		if st.LoginShell {
			env = append(env, TraceLoginVar+"=1")
		}
		if st.SelfTraced || t.r.cfg.Untraced {
			env = append(env, TraceOffVar+"=1")
		}
		if st.Terminal {
			env = append(env, TerminalVar+"=1")
		}
		if t.r.cfg.Untraced && !st.SelfTraced {
			// No trace line will open a command's step: the step is the
			// whole script from its start. Opened at its first output or
			// its end, a silent script's step was the last microseconds,
			// its peak and CPU none of its work (a new user's: a 4 s
			// solve recorded as 5 µs at 5.6 MiB beside an 88 MiB trial).
			cur = t.beginStep(sb, phase, st)
		} else {
			// Until the script's first command the step is the whole
			// script; it is opened only if something happens before
			// that command.
			t.running(st.Name)
		}
	} else {
		cur = t.beginStep(sb, phase, st)
	}
	output := func(stream, text string) {
		// A piece of a line past 1 MiB ends in a newline (LineWriter):
		// the record's line is its text.
		text = strings.TrimSuffix(text, "\n")
		full := len(text)
		text = Clip(text, OutputLineBytes)
		if cur == nil {
			cur = t.beginStep(sb, phase, st)
		}
		if cur.light {
			t.announce(tr, cur, time.Now())
		}
		if full > OutputLineBytes {
			cur.sr.OutputDroppedBytes += int64(full - OutputLineBytes)
		}
		if model.NoSpaceInOutput(text) {
			cur.sr.NoSpace, saidNoSpace = true, true
			if t.noSpaceLine == "" {
				t.noSpaceLine = text
				t.lookAtDisks(sb) // while the write that failed may still fill it
			}
		}
		if m, ok := model.ParseMeasure(text); ok {
			// A knob's effect as the task measured it inside the container
			// (in a plain column too: its baseline).
			m.Step = cur.sr.Name
			t.mu.Lock()
			if t.res.Knobs == nil {
				t.res.Knobs = &model.KnobRecord{}
			}
			t.res.Knobs.AddTaskMeasure(m)
			t.mu.Unlock()
		}
		cur.add(text, t.r.cfg.OutputTailLines)
		t.emitOutput(cur, stream, text)
	}
	if execNote != "" {
		output("stderr", execNote) // in the step's lines and the log
	}
	// partial is output whose line a trace line ended: for the parser it
	// continues on the next line of output, as without the trace. A
	// builder: `for i in $(seq 600000); do printf .; done` ends a line
	// at every command, and a string copied whole at each grew the
	// step's cost with the square of its output (400,000 dots took 31 s
	// and 24 s of headroom's CPU, 2 s under docker run: the task's
	// timeout was headroom's, the fifteenth attacker's 1).
	var partial strings.Builder
	// cutHeld is the end of a line of output a trace line cut, held to be
	// masked with the line's rest: output that reaches headroom through a
	// tee (Harbor's verifier), which the trace bypasses, can
	// have the next command's trace line inside a long line, and a secret
	// across that cut was stored as two pieces no mask matched.
	var cutHeld string
	sawNoBash := false // the wrapper found no bash (NeedBash)
	masking := &pieceMask{redact: t.r.redact, span: t.r.redactSpan}
	res, err := sb.Exec(ctx, argv, env, t.stepUser(phase, st), func(stream, text string) {
		text = masking.mask(stream, text)
		if tr == nil {
			t.transcript.Add(text) // whole, before output shortens it
			output(stream, text)
			return
		}
		if st.NeedBash && tr.book.next == 0 && (text == traceNoBashLine || strings.Contains(text, `"bash": executable file not found`)) {
			// The wrapper's own word, or the engine's or the driver's
			// when the wrapper itself is bash (traceArgv) and there is none.
			sawNoBash = true
		}
		// A piece of a line past 1 MiB ends in a newline (LineWriter):
		// what follows is the same line.
		piece := strings.HasSuffix(text, "\n")
		before, m := splitTrace(text, tr.nonce)
		if tr.contPiece || tr.contRaw || tr.cont.Open() {
			if m == nil && (tr.contPiece || tr.contRaw || tr.contLines < wire.TraceContinuedLines) {
				// The rest of a command's trace line: the next piece of
				// a trace line past 1 MiB, its next line inside a quote
				// (a `python3 -c '` step was named by its first line), or
				// any line up to the next trace line after a `[[`, whose
				// operands bash writes as they are and which prints
				// nothing itself (wire.TracesRaw). Its command, not its
				// output or the parser's, nor the output file's, nor the
				// tests pane's (the fifteenth attacker's 5, 6; the
				// seventeenth's 1: a captured report's lines were read
				// as the verifier's).
				rest := strings.TrimSuffix(text, "\n")
				if !tr.contPiece {
					rest = "\n" + rest
					tr.contLines++
				}
				if !tr.contRaw {
					tr.cont.FeedString(rest) // a `[[` trace ends at the next trace line, whatever its quotes
				}
				tr.contPiece = piece
				switch {
				case !tr.contTop:
					output(stream, strings.TrimPrefix(rest, "\n")) // a substitution's trace, as bash -x shows it
				case cur != nil && len(cur.sr.Show) <= OutputLineBytes-utf8.UTFMax:
					// Shown up to its bound, then left: a `[[` over a
					// 5,000-line value in a loop is millions of these.
					cur.sr.Show = Clip(cur.sr.Show+rest, OutputLineBytes)
					cur.sr.Name = tracedName(cur.sr.Show)
				}
				return
			}
			if tr.contRaw {
				before = "" // what a `[[` trace left before the next trace line
			}
			tr.cont, tr.contPiece, tr.contRaw = wire.Quote{}, false, false
		}
		text = before
		switch span := t.r.redactSpan; {
		case span <= 1:
		case m != nil && text != "":
			cutHeld += text
			k := max(0, len(cutHeld)-(span-1))
			text, cutHeld = cutHeld[:k], cutHeld[k:]
		case m == nil && cutHeld != "":
			text, cutHeld = t.r.redact(cutHeld+text), ""
		}
		if m != nil {
			tr.cont, tr.contLines, tr.contPiece, tr.contTop = wire.Quote{}, 0, piece, m.depth <= 1
			tr.contRaw = wire.RawCommand(m.cmd)
			tr.cont.FeedString(strings.TrimSuffix(m.cmd, "\n"))
		}
		if m == nil {
			line := text
			if partial.Len() > 0 {
				partial.WriteString(text)
				line = partial.String()
				partial.Reset()
			}
			t.transcript.Add(line)
			outFile.add(line)
		} else {
			partial.WriteString(text) // the trace never reaches the parser
		}
		if text != "" || m == nil {
			output(stream, text) // a command's last line, unterminated
		}
		switch {
		case m == nil:
		case m.depth > 1:
			if m.pid == m.root && m.pid != 0 {
				// The script's own shell at a deeper level: a sourced
				// file's or an eval's commands, while the step that
				// sourced it still runs (not a substitution: bash runs
				// that in a subshell of its own).
				tr.inSourced = true
			}
			if !tr.expanding && !tr.inSourced && m.depth == 2 && m.pid != m.root && (cur == nil || tr.byRoot) {
				// A command substitution of the script's next command,
				// which its shell expands before tracing the command
				// (`want=$(sort -u big | wc -l)` traces `++ sort …`,
				// then `+ want=…`). The command before it was the
				// shell's own, in the foreground: it has ended. What the
				// substitution runs is the next command's work, in the
				// next command's step: the kernel's kill of sort was
				// charged to the mkdir before it (a new user's).
				t.settle(tr, cur)
				if cur != nil {
					tr.close(t, sb, cur)
				}
				sub := "$(" + m.cmd + ")"
				cmd := model.Step{Name: tracedName(sub), Show: sub}
				if tr.book.next < tr.head {
					cur = t.beginStep(sb, phase, cmd)
				} else {
					tr.lightNoise(t, sb)
					cur = t.beginLight(phase, cmd)
					t.announce(tr, cur, cur.sr.Start)
				}
				tr.expanding = true
			}
			output(stream, nestedTrace(*m))
		default:
			tr.inSourced = false
			n, joined := tr.book.mark(*m)
			if tr.expanding && cur != nil && n >= 0 && !joined {
				// The command the substitution was for: its step is the
				// one open, named as the kill said it, shown whole.
				tr.expanding, tr.cur, tr.byRoot = false, n, m.pid == m.root
				// Cut as every shown command is (the command a
				// substitution was for can be megabytes: `echo "$(…)"`).
				cur.sr.Show = Clip(Clip(m.cmd, OutputLineBytes/2)+" ← "+cur.sr.Show, OutputLineBytes)
				return
			}
			tr.expanding = false
			if joined && cur != nil {
				// Another command of the running pipeline (or one past
				// what the book keeps of it: nothing changed).
				if !tr.book.grew {
					return
				}
				cur.sr.Show = tr.book.show(n)
				cur.sr.Name = tracedName(cur.sr.Show)
				t.renameStep(cur.sr.Name, cur.killsBefore)
				return
			}
			t.settle(tr, cur)
			if m.end() {
				tr.endStatus, tr.ended = m.last, true
			}
			if cur != nil && m.end() && st.TeeStdout != "" {
				// The script has ended, and its last output may still
				// come through the tee (Harbor's verifier): its last
				// command's step takes it, closed once the step ends,
				// not a step of the script's name after it.
				return
			}
			if cur != nil {
				tr.close(t, sb, cur)
			}
			cur = nil
			if n >= 0 {
				cmd := model.Step{Name: tracedName(m.cmd), Show: m.cmd}
				if n < tr.head {
					cur = t.beginStep(sb, phase, cmd)
				} else {
					tr.lightNoise(t, sb)
					cur = t.beginLight(phase, cmd)
					t.announce(tr, cur, cur.sr.Start)
				}
				tr.cur, tr.byRoot = n, m.pid == m.root
			}
		}
	})
	code := res.ExitCode
	var engineErr error
	if err != nil && !errorsIsCtx(err) && !errors.Is(err, ErrTaskInterfered) {
		engineErr = err // a reply the task garbled is the step's failure
	}
	if saidNoSpace && t.diskFull == "" {
		t.lookAtDisks(sb) // and when the step ended
	}
	timedOut := false
	switch {
	case err != nil && res.Released:
		// The script had ended; what it left holding its output (Harbor's
		// oracle's tee waits for it) held the step to its timeout, and
		// runs on, as under Harbor, which cancels only its exec.
		timedOut = true
		if tr != nil && tr.ended {
			code = tr.endStatus
		}
		t.notes = append(t.notes, fmt.Sprintf("step %s: its script had ended, and processes it left in the background held its output to its timeout (as Harbor's oracle's tee waits for them); they were left running, as Harbor leaves them", st.Name))
	case err != nil:
		timedOut = ctx.Err() == context.DeadlineExceeded
		t.stopStep(sb, timedOut)
		if code == 0 {
			code = -1
		}
	}
	if cutHeld != "" {
		// The cut line's end, its rest never come.
		rest := t.r.redact(cutHeld)
		partial.WriteString(rest)
		output("stdout", rest)
	}
	if partial.Len() > 0 {
		t.transcript.Add(partial.String())
		outFile.add(partial.String())
	}
	if outFile != nil {
		t.writeOutputFile(sb, st, outFile)
	}
	if tr != nil && tr.noise != nil {
		// The commands past the script's head, as one span: their time
		// and their CPU wait count in the trial's noise as the head's do.
		// Without it a loop's 30,000 commands were 0.1 s of "step time",
		// and a wait of 0.05 s in it was the host's contention (the
		// fourteenth attacker's 2).
		t.spanNoise(sb, tr.noise, tr.noise.sr.Start, time.Now())
		tr.noise = nil
	}
	if sawNoBash && (code == 127 || code == 126) && tr.book.next == 0 && t.noBash == "" {
		t.noBash = st.Name
	}
	if tr != nil {
		tr.book.finish(code)
		t.settle(tr, cur)
	}
	if cur == nil && (tr == nil || tr.book.next == 0 || res.Released) {
		// The script ran no command, or it had ended and its time ran
		// out on what it left holding its output: the step is the script.
		cur = t.beginStep(sb, phase, st)
	}
	if cur != nil && (tr == nil || tr.cur < 0 || res.Released) {
		// Not traced, or no command of the script, or the script's hold
		// after its end: the step is the script.
		cur.sr.ExitCode, cur.sr.ExitUnknown, cur.settled = code, "", true
	}
	var errLine string
	if err != nil && !errorsIsCtx(err) {
		errLine = "headroom: " + t.r.redact(err.Error())
	}
	if cur != nil {
		cur.sr.TimedOut = timedOut
		if errLine != "" {
			cur.lines = append(cur.lines, errLine)
		}
		killsBefore := cur.killsBefore
		switch {
		case code == 137:
			t.recorder.awaitOOM(killsBefore, t.r.cfg.OOMSettle)
		case code != 0 && !timedOut:
			// A step that fails because a child was killed exits at once;
			// give the kernel's notice a moment to catch up.
			t.recorder.awaitOOM(killsBefore, t.r.cfg.OOMSettle/4)
		}
		if tr != nil {
			tr.close(t, sb, cur)
		} else {
			t.endStep(sb, cur)
		}
	}
	if tr != nil {
		tr.keep(t, sb)
	}
	if cur == nil && (timedOut || errLine != "") {
		last := &t.res.Steps[len(t.res.Steps)-1]
		// The script had ended (its EXIT trap ran) when the step was
		// stopped: the stop belongs to its last command.
		last.TimedOut = last.TimedOut || timedOut
		if errLine != "" {
			last.Output = strings.TrimPrefix(last.Output+"\n"+errLine, "\n")
		}
	}
	t.stepEnds = append(t.stepEnds, stepEnd{step: t.endingStep(first, code), code: code})
	return model.StepResult{Name: st.Name, Show: st.Show, Phase: phase, ExitCode: code, TimedOut: timedOut}, engineErr
}

// stopStep stops what is still running of a step that timed out or was
// cancelled, its kernel peak read first (a stop can take the cgroup with
// it). A timed-out step's processes alone are stopped where the sandbox
// can (StepStopper), and the container kept for what the harness runs
// after a timeout (the collect hooks, the verifier); otherwise, or on
// cancellation, the container is killed, and t.gone says why nothing more
// can run in it.
func (t *trialRun) stopStep(sb Sandbox, timedOut bool) {
	if kp, ok := sb.TakeKernelPeak(); ok {
		t.stopping(kp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ss, ok := sb.(StepStopper); ok && timedOut {
		err := ss.StopSteps(ctx)
		if err == nil {
			return
		}
		t.gone = "its timed-out step could not be stopped alone (" + err.Error() + "), so its container was stopped with it"
	} else if timedOut {
		t.gone = "this backend cannot stop a timed-out step alone, so its container was stopped with it"
	}
	_ = sb.Kill(ctx)
}

// lookAtDisks reads the room of the sandbox's filesystems, where the
// platform can: a step's ENOSPC is a full disk only if one of them had
// none (model.FSRoom.Full).
func (t *trialRun) lookAtDisks(sb Sandbox) {
	w, ok := sb.(DiskWitness)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rooms, err := w.DiskRoom(ctx)
	if err != nil {
		if !errors.Is(err, ErrNoDiskView) && t.diskUnread == "" {
			t.diskUnread = t.r.redact(err.Error())
		}
		return
	}
	t.diskLooked = true
	if full := model.FullDisk(rooms); full != "" {
		t.diskFull = full
		return
	}
	if own := model.FullOwnTmpfs(rooms); own != "" && t.diskOwn == "" {
		t.diskOwn = own // the task's own tmpfs; a disk of the machine's may still fill
	}
	var parts []string
	for i, r := range rooms {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more with room", len(rooms)-i))
			break
		}
		parts = append(parts, r.String())
	}
	t.diskRoom = strings.Join(parts, ", ")
}

// tracedRun is a traced step's state: the trace split from the output,
// the statuses worked out, and where each command's step is.
type tracedRun struct {
	book *statusBook
	// endStatus is the script's status as its end's trace line said it
	// (ended: that line came): a step released past its end
	// (ExecResult.Released) has no exit of its own under the engine's
	// exec, whose wrapper is left waiting.
	endStatus int
	ended     bool
	// closed maps a command's number to its step's index in the result.
	closed map[int]int
	cur    int // the open step's command number, -1 for none
	// byRoot: the open step's command was traced by the script's own
	// shell (not a pipeline's or subshell's child), so it ran in the
	// foreground and has ended once that shell traces again.
	byRoot bool
	// expanding: the open step began at a command substitution of a
	// command not traced yet (its number comes with its trace line).
	expanding bool
	// inSourced: since the last top-level trace line, the script's own
	// shell traced deeper (a sourced file, an eval): the open step runs.
	inSourced bool
	// nonce is in this step's trace lines only (see TraceNonceVar).
	nonce string
	// head and tailMax are how many of the script's first and last
	// commands are kept as steps (tracedRoom).
	head, tailMax int
	// noise holds the readings taken when the first command past the
	// head began (lightNoise).
	noise *openStep
	// light maps the number of a command past the first head to its
	// step while it may be kept (one of the last tailMax: tail, oldest
	// first); fold counts those before.
	light map[int]*openStep
	tail  []int
	fold  traceFold
	// announced is when a light step's start was last said live.
	announced time.Time
	// cont is the quote the last trace line left open: the lines that
	// follow are that command's, shown with it (contTop: a top-level
	// command's), until it closes; contLines counts them. contPiece: the
	// last trace line, or its last line, was a piece of a line past
	// 1 MiB, which the next piece continues.
	cont      wire.Quote
	contLines int
	contPiece bool
	contTop   bool
	// contRaw: the last trace line was a `[[` command's, whose trace goes
	// on to the next trace line (wire.TracesRaw).
	contRaw bool
}

// notYet is a closed step's status while its shell has not reported it.
const notYet = "not reported yet: its shell reports it when its next command starts"

// close records the open step, with its status or notYet.
func (tr *tracedRun) close(t *trialRun, sb Sandbox, o *openStep) {
	t.flushOutput(o)
	if tr.cur >= 0 && !o.settled {
		o.sr.ExitCode, o.sr.ExitUnknown = -1, notYet
	}
	if o.light {
		o.sr.End = time.Now()
		t.closeLight(&o.sr, o.killsBefore)
		// Held until the script ends, maybe a hundred of them: no more of
		// its output than its share of what the record can keep.
		o.shrink(t.r.cfg.OutputTailLines, TrialOutputBytes/TracedTailSteps)
		if len(tr.tail) == tr.tailMax {
			if tr.tailMax == 0 {
				tr.fold.add(o)
				tr.cur = -1
				return
			}
			oldest := tr.tail[0]
			tr.fold.add(tr.light[oldest])
			delete(tr.light, oldest)
			tr.tail = append(tr.tail[:0], tr.tail[1:]...)
		}
		tr.light[tr.cur], tr.tail = o, append(tr.tail, tr.cur)
		tr.cur = -1
		return
	}
	if tr.cur < 0 && !o.settled {
		// Output before the script's first command: not a command.
		o.sr.ExitCode, o.sr.ExitUnknown = -1, "not a command: what the script printed before its first command"
	}
	t.endStep(sb, o)
	if tr.cur >= 0 {
		tr.closed[tr.cur] = len(t.res.Steps) - 1
	}
	tr.cur = -1
}

// settle applies the statuses the book has learnt: to the open step, or
// to a recorded one (whose live event said notYet).
func (t *trialRun) settle(tr *tracedRun, cur *openStep) {
	for _, s := range tr.book.take() {
		if s.step == tr.cur && cur != nil {
			cur.sr.ExitCode, cur.sr.PipeStatus, cur.sr.ExitUnknown, cur.settled = s.code, s.pipe, s.unknown, true
			continue
		}
		if o, ok := tr.light[s.step]; ok {
			o.sr.ExitCode, o.sr.PipeStatus, o.sr.ExitUnknown = s.code, s.pipe, s.unknown
			continue
		}
		if i, ok := tr.closed[s.step]; ok {
			r := &t.res.Steps[i]
			r.ExitCode, r.PipeStatus, r.ExitUnknown = s.code, s.pipe, s.unknown
		}
	}
}

// stepEnd is a step's end as the trial's reason names it: the step that
// ended the script, and the script's exit code.
type stepEnd struct {
	step int // index in the result's steps
	code int
}

// endingStep is the step, of those recorded from first on, that ended a
// script with code: the last whose own status is code, else the last.
func (t *trialRun) endingStep(first, code int) int {
	last := len(t.res.Steps) - 1
	for i := last; i >= first; i-- {
		if s := t.res.Steps[i]; s.ExitUnknown == "" && s.ExitCode == code {
			return i
		}
	}
	return last
}

// keep records, once the script has ended, the fold of the commands not
// kept (a step of its own, holding the kernel's mark over them and the
// last commands) and the last TracedTailSteps commands.
func (tr *tracedRun) keep(t *trialRun, sb Sandbox) {
	var kept []model.StepResult
	if tr.fold.count > 0 {
		f := tr.fold.step(tr.head, tr.tailMax)
		if kp, ok := sb.TakeKernelPeak(); ok {
			f.KernelPeakBytes = kp
		}
		// The folded commands' output is output the record did not keep.
		t.res.OutputDroppedBytes += f.OutputDroppedBytes
		kept = append(kept, f)
	}
	for _, n := range tr.tail {
		o := tr.light[n]
		o.sr.Output = o.kept(t.r.cfg.OutputTailLines, &t.outputBudget)
		t.res.OutputDroppedBytes += o.sr.OutputDroppedBytes
		tr.closed[n] = len(t.res.Steps) + len(kept)
		kept = append(kept, o.sr)
	}
	t.keepSteps(kept...)
	tr.tail, tr.light = nil, map[int]*openStep{}
}

// traceFold counts a traced script's commands not kept as steps.
type traceFold struct {
	sr     model.StepResult // their span, peak, kills and output not kept
	count  int
	byName map[string]int // index in sr.Folded
}

// add counts one command's step into the fold.
func (f *traceFold) add(o *openStep) {
	if f.count == 0 {
		f.sr.Start, f.sr.Phase, f.byName = o.sr.Start, o.sr.Phase, map[string]int{}
	}
	f.count++
	f.sr.End = o.sr.End
	name := commandName(o.sr.Show)
	i, ok := f.byName[name]
	if !ok && len(f.sr.Folded) >= maxFoldedNames-1 {
		name = "(other commands)"
		i, ok = f.byName[name]
	}
	if !ok {
		i = len(f.sr.Folded)
		f.byName[name] = i
		f.sr.Folded = append(f.sr.Folded, model.FoldedCommands{Command: name})
	}
	c := &f.sr.Folded[i]
	c.Count++
	c.Time += model.Duration(o.sr.End.Sub(o.sr.Start))
	if o.sr.Failed() {
		c.Failures++
	}
	c.PeakWorkingSetBytes = max(c.PeakWorkingSetBytes, o.sr.PeakWorkingSetBytes)
	f.sr.PeakWorkingSetBytes = max(f.sr.PeakWorkingSetBytes, o.sr.PeakWorkingSetBytes)
	f.sr.KernelPeakNoCacheBytes = max(f.sr.KernelPeakNoCacheBytes, o.sr.KernelPeakNoCacheBytes)
	f.sr.OOMKills += o.sr.OOMKills
	f.sr.AtLimit += o.sr.AtLimit
	f.sr.MajorFaults += o.sr.MajorFaults
	f.sr.NoSpace = f.sr.NoSpace || o.sr.NoSpace
	lines := len(o.head) + len(o.lines)
	for _, l := range append(o.head, o.lines...) {
		f.sr.OutputDroppedBytes += int64(len(l)) + 1
	}
	f.sr.OutputDropped += lines + o.sr.OutputDropped
	f.sr.OutputDroppedBytes += o.sr.OutputDroppedBytes
}

// step is the fold as the record keeps it: a step that is not a command,
// named for what it stands for, its output a line per command name.
func (f *traceFold) step(head, tail int) model.StepResult {
	sr := f.sr
	sr.Name = fmt.Sprintf("(%d commands folded)", f.count)
	sr.Show = fmt.Sprintf("%d commands of the script, between its first %d and its last %d, not kept as steps", f.count, head, tail)
	if head < TracedHeadSteps || tail < TracedTailSteps {
		sr.Show += fmt.Sprintf(" (the trial keeps at most %d traced commands as steps)", MaxTrialSteps)
	}
	sr.ExitCode, sr.ExitUnknown = -1, "not a command: the folded commands' failures are counted by command"
	lines := []string{"headroom: " + sr.Show + " (the trial's log.txt has their output); by command:"}
	for _, c := range sr.Folded {
		lines = append(lines, fmt.Sprintf("  %s: %d run(s), %s, %d failed, peak %s", c.Command, c.Count,
			time.Duration(c.Time).Round(time.Millisecond), c.Failures, model.FormatBytes(c.PeakWorkingSetBytes)))
	}
	sr.Output = strings.Join(lines, "\n")
	return sr
}

// commandName is a traced command's first word, what a fold counts it by.
func commandName(show string) string {
	show = strings.TrimLeft(show, " \t")
	if i := strings.IndexAny(show, " \t\n"); i >= 0 {
		show = show[:i]
	}
	if show == "" {
		return "(empty)"
	}
	return Clip(show, 64)
}

// copyFiles copies a step's files into the sandbox under ctx; done says
// the step cannot run (its result and the engine's error, if any, are
// returned). A task that left something where the files go fails the
// step; ctx's deadline during the copy is the step's time run out (the
// copy counts in it, as Harbor's uploads count in its agent's and its
// verifier's time): never the engine gone.
func (t *trialRun) copyFiles(ctx context.Context, sb Sandbox, phase string, st model.Step) (model.StepResult, bool, error) {
	if check := t.r.cfg.Unchanged; check != nil {
		// Read now, at the copy: a test edited after the trial started
		// would grade it (the thirtieth attacker's 3). Not graded, and
		// the sweep stops.
		if err := check(t.task); err != nil {
			t.r.stopSweep(err)
			return model.StepResult{}, true, fmt.Errorf("step %s's files: %w: %w", st.Name, err, ErrTaskFilesChanged)
		}
	}
	copied := TimePhase(t.trial.ID, "copy in")
	start := time.Now()
	err := sb.CopyIn(ctx, st.Files)
	copied()
	if err == nil {
		return model.StepResult{}, false, nil
	}
	t.emit(event.OutputLine{Base: t.base(), Step: st.Name, Stream: "stderr", Text: "headroom: " + t.r.redact(err.Error())})
	sr := model.StepResult{Name: st.Name, Show: st.Show, Phase: phase, ExitCode: -1}
	switch {
	case errors.Is(err, ErrTaskInterfered):
		// The task left something where the step's files go (a file in
		// place of /tests): the step's own failure.
		sr.ExitCode = 1
		t.verdictNote = "the step's files could not be put in place: " + t.r.redact(err.Error())
		t.filesBlocked = true
		return sr, true, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// Recorded, the step that ran out of time being this one.
		sr.TimedOut, sr.Start, sr.End = true, start, time.Now()
		sr.Output = fmt.Sprintf("headroom: its time ran out while its files (%s) were being copied into the container; its command did not run", describeFiles(st.Files))
		t.keepSteps(sr)
		t.notes = append(t.notes, fmt.Sprintf("step %s's time ran out while its files (%s) were being copied into the container", st.Name, describeFiles(st.Files)))
		return sr, true, nil
	}
	return sr, true, err
}

// describeFiles names a step's uploads, short.
func describeFiles(files []model.Upload) string {
	var parts []string
	for i, u := range files {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(files)-i))
			break
		}
		parts = append(parts, u.To)
	}
	return strings.Join(parts, ", ")
}

// ErrOwnBound is an operation of headroom's own that ran past the bound
// headroom puts on it (a copy, a healthcheck's wait) while the engine
// did not fail: an infrastructure error named for the operation, never
// "the engine went away".
var ErrOwnBound = errors.New("the bound headroom puts on it ran out (not the engine failing)")

// ErrCannotStart is a step headroom could not start (its command line or
// environment past the kernel's bound on one exec string): headroom's
// failure, never the task's, and not the engine failing either.
var ErrCannotStart = errors.New("headroom's failure, not the task's or the engine's")

// ErrTaskFilesChanged is a task's file that is no longer what headroom
// checked when it loaded the task (a link put in its place mid-sweep):
// refused, not graded; never the engine gone (the thirtieth attacker's 3).
var ErrTaskFilesChanged = errors.New("the task's files changed since it was loaded")

// headroomsOwn says the engine's error under a trial is one of headroom's
// own (ErrOwnBound, ErrCannotStart) or a container the engine refused to
// start while it answered (ErrStartRefused), not the engine gone.
func headroomsOwn(err error) bool {
	return errors.Is(err, ErrOwnBound) || errors.Is(err, ErrCannotStart) || errors.Is(err, ErrStartRefused) || errors.Is(err, ErrTaskFilesChanged)
}

// A traced step's OutputFile (Harbor's oracle runs `set -o pipefail;
// bash solve.sh 2>&1 | tee /logs/agent/oracle.txt`) is written by the
// step driver from the step's own pipe. Where steps take the engine's exec, headroom writes it
// once the step has ended, from the output it read in order: a tee in
// the container let each command's output reach headroom after the next
// command's trace line (and the script's last output after its end). It
// holds at most maxStepOutputFile, and not what a job the script left
// running writes after it ended.
const maxStepOutputFile = 16 << 20

// TerminalVar, in a traced step's environment, asks for its output on a
// pseudo-terminal (model.Step.Terminal). Every sandbox's Exec takes it
// out (SplitTerminal): the step driver and the in-pod probe give the
// step its terminal, the engine's exec runs it with pipes.
const TerminalVar = "HEADROOM_TERMINAL"

// SplitTerminal takes TerminalVar out of a step's environment and says
// whether it was there.
func SplitTerminal(env []string) (rest []string, terminal bool) {
	return splitFlag(env, TerminalVar)
}

// HoldOutputVar, in a traced step's environment, asks that the step last
// past its script's end while another process holds its output, as a
// tee's input is held (model.Step.OutputFile: Harbor's oracle). Every
// sandbox's Exec takes it out (SplitHold): the step driver holds the
// step itself (workload's outputHold), the engine's exec holds it from
// the host, the cluster's probe does not.
const HoldOutputVar = "HEADROOM_HOLD_OUTPUT"

// SplitHold takes HoldOutputVar out of a step's environment and says
// whether it was there.
func SplitHold(env []string) (rest []string, hold bool) {
	return splitFlag(env, HoldOutputVar)
}

// splitFlag takes name=1 out of env and says whether it was there.
func splitFlag(env []string, name string) ([]string, bool) {
	i := slices.Index(env, name+"=1")
	if i < 0 {
		return env, false
	}
	return slices.Delete(slices.Clone(env), i, i+1), true
}

// OutputFileWriter is a sandbox that writes a traced step's OutputFile
// itself, when WritesOutputFiles says so, where its step's environment
// names it (TraceLogVar, which SplitOutputFile takes out).
type OutputFileWriter interface {
	WritesOutputFiles() bool
}

// SplitOutputFile takes a traced step's OutputFile (TraceLogVar) out of
// its environment, with the mark that starts its trace lines (which the
// file leaves out).
func SplitOutputFile(env []string) (rest []string, file, mark string) {
	var nonce string
	for _, e := range env {
		switch k, v, _ := strings.Cut(e, "="); k {
		case TraceLogVar:
			file = v
			continue
		case TraceNonceVar:
			nonce = v
		}
		rest = append(rest, e)
	}
	if file == "" {
		return env, "", ""
	}
	return rest, file, TraceMarker + nonce + " "
}

// stepOutputFile gathers a step's output for its OutputFile.
type stepOutputFile struct {
	b       strings.Builder
	dropped int64
}

// add takes one line of the step's output (nil: none gathered); a piece
// of a longer line, ending in a newline (LineWriter), is written without
// it, the next piece continuing its line.
func (f *stepOutputFile) add(line string) {
	if f == nil {
		return
	}
	end := "\n"
	if strings.HasSuffix(line, "\n") {
		line, end = line[:len(line)-1], ""
	}
	if f.b.Len()+len(line)+len(end) > maxStepOutputFile {
		f.dropped += int64(len(line) + len(end))
		return
	}
	f.b.WriteString(line)
	f.b.WriteString(end)
}

// writeOutputFile puts the gathered output at the step's OutputFile.
func (t *trialRun) writeOutputFile(sb Sandbox, st model.Step, f *stepOutputFile) {
	content := f.b.String()
	if f.dropped > 0 {
		content += fmt.Sprintf("headroom: %s more of this step's output not written here (at most %s)\n", model.FormatBytes(f.dropped), model.FormatBytes(maxStepOutputFile))
	}
	ctx, cancel := context.WithTimeout(context.Background(), SandboxOpTimeout)
	defer cancel()
	up := model.Upload{To: path.Dir(st.OutputFile), Name: path.Base(st.OutputFile), Content: content}
	if err := sb.CopyIn(ctx, []model.Upload{up}); err != nil {
		t.notes = append(t.notes, fmt.Sprintf("%s's output could not be written to %s: %v", st.Name, st.OutputFile, err))
	}
}

// lightNoise takes the readings the commands past the script's head are
// measured from, as one span, when the first of them begins.
func (tr *tracedRun) lightNoise(t *trialRun, sb Sandbox) {
	if tr.noise == nil {
		tr.noise = t.noiseFrom(sb)
	}
}
