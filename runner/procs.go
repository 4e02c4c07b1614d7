package runner

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// Proc is one process of a sandbox at one sample, as the host sees it.
type Proc struct {
	PID, PPID int
	// Started is when the process started (from /proc; zero when the
	// source cannot say); Started and PID identify it.
	Started  time.Time
	Command  string // full command line
	RSSBytes int64
	// Role is what headroom knows the process to be by its pid (RoleDriver,
	// RoleStep; "" for any other), where the sample's Roles is set.
	Role string
	// Forked: its command line and name are its parent's, read between
	// its fork and its exec (or a fork of the same program that never
	// execs): what it runs is not known yet (the backend reads it again).
	Forked bool
	// Session is its session id in the source's pid namespace (0 where
	// the source cannot say).
	Session int
}

// What the backend knows a process to be by its pid (Proc.Role), never by
// the name it gives itself: a task's process renamed `hr-workload drive`
// or `hr-workload run --step install --profile {}` is shown as that.
const (
	RoleDriver = "driver" // headroom's step driver: the container's PID 1
	RoleStep   = "step"   // the process the driver started for the running step
)

// ProcSample is the sandbox's process list at one moment. Truncated
// counts processes beyond the cap that were not read.
type ProcSample struct {
	Time      time.Time
	Procs     []Proc
	Truncated int
	// Roles: the backend named the driver and the running step's process
	// (Proc.Role); without it (steps by the engine's exec, a cluster) a
	// built-in step's process is known by its command line.
	Roles bool
	// InitSession is the session of the container's first process (its
	// entrypoint) where no step can be in it: the engine starts each
	// exec in a session of its own, and a process cannot join another's.
	// A process in it is the entrypoint's or one it started, whenever it
	// started. 0 where that cannot be said (steps through the step
	// driver, PID 1's children; a source without sessions).
	InitSession int
}

// ProcessWatcher is a sandbox that watches its processes from the host.
// ProcessSource says how ("proc": the cgroup's process list and /proc;
// "top": the engine's top, coarser; "" when it cannot).
// PeakModer is a sandbox that says how its samples carry the kernel's
// peak (model.TrialResult.PeakMode).
type PeakModer interface {
	PeakMode() string
}

type ProcessWatcher interface {
	Processes() <-chan ProcSample
	ProcessSource() string
}

// Bounds on what the process watch keeps, so that a fork loop costs
// neither memory nor record size.
const (
	// ActivityThreshold is how long a process must live to be recorded.
	ActivityThreshold = 200 * time.Millisecond
	// MaxActivities per trial; the rest are counted (ActivitiesDropped).
	MaxActivities = 200
	// MaxTreeProcs in a kill's stored process tree (largest RSS first).
	MaxTreeProcs  = 32
	maxCommandLen = 512
)

type procKey struct {
	pid     int
	started int64
}

type trackedProc struct {
	proc      Proc
	firstSeen time.Time
	peak      int64
	activity  int // index in the record's activities; -1 not (yet) one, -2 dropped
	// step is the step running when it was first seen: its activity's,
	// though it is recorded later (a child an agent step left running,
	// first read as that step ended).
	step string
	// script is the runStep it was first seen in (procTracker.script):
	// a process of an earlier one was left running by it.
	script int
	// named is the last name its role gave it (the step's command, a job
	// of it): read later without the role (as its step ends and the
	// driver's pid for it is reset), the same process keeps that name
	// rather than show headroom's own command line.
	named string
	// env: started before any step, by the container's entrypoint (the
	// image's ENTRYPOINT/CMD, the idle command) or its children: the
	// task's environment, no step's doing (beforeSteps).
	env bool
}

// noActivity marks a tracked process never recorded as an activity: one
// of the container's own first processes.
const noActivity = -3

// procTracker turns process samples into activities; guarded by the
// trial's mutex.
type procTracker struct {
	started    bool
	init       map[procKey]bool // the container's own first processes
	seen       map[procKey]*trackedProc
	last, prev []Proc
	// unnamed are kills whose process the kernel did not name: the next
	// sample names the largest process that vanished.
	unnamed []int
	// The resident memory of processes earlier steps left running, in
	// step leftStep: its most at one sample, and the largest's name.
	// script counts the runSteps (the scripts) started, the last at
	// scriptStart.
	script      int
	scriptStart time.Time
	// firstScript is when the first step's script started: a process
	// born before it is the environment's (beforeSteps).
	firstScript time.Time
	leftStep    string
	leftRSS     int64
	leftFrom    string
}

// renameStep names the running step anew, as another command of its
// pipeline joined it: its kills so far (from killsBefore) and the
// processes first seen in it take the new name. A kill read before the
// pipeline's last trace line was named after whichever of its commands
// bash traced first: a new user's `head -c 80M /dev/zero | tail -n 1 |
// wc -c` was killed "in step head …" 13 times of 20, "tail -n 1" 4 and
// "wc -c" 3, once "left running by step wc -c" in its own pipeline.
func (t *trialRun) renameStep(name string, killsBefore int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.step
	if old == name {
		return
	}
	t.step = name
	for i := max(killsBefore, 0); i < len(t.out.OOMs); i++ {
		o := &t.out.OOMs[i]
		if o.Step == old {
			o.Step = name
		}
		if o.StartedInStep == old {
			o.StartedInStep = ""
		}
	}
	for _, tp := range t.procs.seen {
		if tp.step == old && tp.script == t.procs.script {
			tp.step = name
		}
	}
}

func keyOf(p Proc) procKey { return procKey{p.PID, p.Started.UnixNano()} }

// watchProcs follows the sandbox's process samples until they end.
func (t *trialRun) watchProcs(pw ProcessWatcher, done chan<- struct{}) {
	defer close(done)
	for s := range pw.Processes() {
		t.procSample(s)
	}
	t.endActivities(time.Now())
}

func (t *trialRun) procSample(s ProcSample) {
	var events []event.Event
	t.mu.Lock()
	pt := &t.procs
	roles := map[int]string{}
	for _, p := range s.Procs {
		if p.Role != "" {
			roles[p.PID] = p.Role
		}
	}
	// resolved: the process was named by its role (the step's command, a
	// job of it, the driver), not by its command line.
	resolved := make([]bool, len(s.Procs))
	for i := range s.Procs {
		p := s.Procs[i]
		role := func(r string) bool { return !s.Roles || p.Role == r }
		parent := func(r string) bool { return !s.Roles || roles[p.PPID] == r }
		raw := untrace(p.Command)
		shown := t.shown(raw, role, parent, p.Forked)
		resolved[i] = shown != raw
		s.Procs[i].Command = clipCommand(t.r.redact(shown)) // masked whole, then cut
	}
	if !pt.started {
		pt.started, pt.init, pt.seen = true, map[procKey]bool{}, map[procKey]*trackedProc{}
		for _, p := range s.Procs {
			pt.init[keyOf(p)] = true
		}
	}
	present := make(map[procKey]bool, len(s.Procs))
	for i, p := range s.Procs {
		k := keyOf(p)
		present[k] = true
		tp := pt.seen[k]
		if tp == nil {
			tp = &trackedProc{proc: p, firstSeen: s.Time, activity: -1, step: t.step, script: pt.script}
			if pt.init[k] {
				// The container's own first processes: tracked for what
				// they hold and whose they are, never an activity.
				tp.activity = noActivity
			}
			if pt.beforeSteps(p, t.step, s.InitSession) && p.Role != RoleDriver && !isEngineShim(p.Command) && !keepAlive(t.task.IdleCommand, p.Command) {
				// Started before any step (the entrypoint's, or a child
				// of it first read only while a step ran): the
				// environment's, charged to no step.
				tp.env, tp.step, tp.script = true, "", 0
			} else if pt.init[k] {
				// headroom's driver, the engine's shim, or a first sample
				// read after a step began of processes with no start
				// time: no step's, and no leftover.
				tp.step = ""
			} else if born := p.Started; !born.IsZero() && born.Before(pt.scriptStart.Add(-bornSlack)) {
				// First read in this script, born before it (an agent's
				// nohup'd child read only once its step had ended): the
				// step it was born in left it running.
				tp.script = pt.script - 1
				for _, st := range t.res.Steps {
					if !st.Start.After(born) {
						tp.step = st.Name
					}
				}
			}
			pt.seen[k] = tp
		}
		if resolved[i] {
			tp.named = p.Command
		} else if tp.named != "" && isWorkloadCommand(p.Command) {
			p.Command = tp.named // the same process, its argv unchanged: its role was lost, not its name
		}
		tp.proc.RSSBytes = p.RSSBytes
		tp.peak = max(tp.peak, p.RSSBytes)
		if tp.activity >= 0 {
			a := &t.res.Activities[tp.activity]
			a.PeakRSSBytes = tp.peak
			if a.Command != p.Command {
				// Seen between its fork and its exec: now it is what it ran.
				a.Command = p.Command
				events = append(events, event.ActivityStarted{Base: event.Base{Trial: t.trial.ID, Time: s.Time}, Activity: *a})
			}
			continue
		}
		born := p.Started
		if born.IsZero() {
			born = tp.firstSeen
		}
		tp.proc.Command = p.Command // an exec changes it
		if tp.activity == -1 && s.Time.Sub(born) >= ActivityThreshold && !isEngineShim(p.Command) && p.Command != "" {
			if len(t.res.Activities) >= MaxActivities {
				tp.activity = -2
				t.res.ActivitiesDropped++
				continue
			}
			step := cmp.Or(tp.step, t.step)
			if tp.env {
				step = "" // no step's: the environment's
			}
			a := model.Activity{Step: step, PID: p.PID, PPID: p.PPID, Command: p.Command, Start: born, PeakRSSBytes: tp.peak}
			tp.activity = len(t.res.Activities)
			t.res.Activities = append(t.res.Activities, a)
			events = append(events, event.ActivityStarted{Base: event.Base{Trial: t.trial.ID, Time: s.Time}, Activity: a})
		}
	}
	t.leftovers(present)
	t.res.ProcessesUnread = max(t.res.ProcessesUnread, s.Truncated)
	var vanished []*trackedProc
	for k, tp := range pt.seen {
		if present[k] {
			continue
		}
		delete(pt.seen, k)
		vanished = append(vanished, tp)
		if tp.activity >= 0 {
			a := &t.res.Activities[tp.activity]
			a.End = s.Time
			events = append(events, event.ActivityEnded{Base: event.Base{Trial: t.trial.ID, Time: s.Time}, Activity: *a})
		}
	}
	// A kill the kernel did not name: the largest process gone since.
	if len(pt.unnamed) > 0 && len(vanished) > 0 {
		big := slices.MaxFunc(vanished, func(a, b *trackedProc) int { return cmp.Compare(a.proc.RSSBytes, b.proc.RSSBytes) })
		for _, i := range pt.unnamed {
			if oe := &t.res.OOMs[i]; oe.Command == "" {
				oe.Command = big.proc.Command
				if big.activity >= 0 {
					t.res.Activities[big.activity].OOMKilled = true
				}
				big.blame(oe, pt.script)
				events = append(events, event.OOMKill{Base: event.Base{Trial: t.trial.ID, Time: s.Time}, OOM: *oe, LimitBytes: t.trial.Policy.HardLimitBytes, Detail: true})
			}
		}
		pt.unnamed = nil
	}
	pt.prev, pt.last = pt.last, s.Procs
	t.mu.Unlock()
	for _, e := range events {
		t.emit(e)
	}
}

// EntrypointStarted is what the record says of a process the container's
// entrypoint started (before any step, or since, in its session): the
// task's environment's, not the step's it ran beside.
const EntrypointStarted = "started by the container's entrypoint"

// beforeSteps says whether a process is the environment's, started by
// the container's entrypoint, not by a step: first read before any
// step's script began (no step running), born before it (a child of the
// entrypoint first read only while a step ran; the kernel's start time,
// so not for a source without one), or in the entrypoint's session
// (initSession, where the backend can say it) whenever it was born. By
// start time alone, a hog the image's entrypoint forked once the agent's
// first step had begun (a loaded host) was charged to that step (the CI
// rehearsal of 2026-12-07, make hostile's entrypoint row).
func (pt *procTracker) beforeSteps(p Proc, step string, initSession int) bool {
	if pt.script == 0 {
		return step == ""
	}
	if initSession != 0 && p.Session == initSession {
		return true
	}
	return !p.Started.IsZero() && p.Started.Before(pt.firstScript.Add(-entrypointSlack))
}

// keepAlive says whether a process is the idle command headroom gave the
// container to keep it up between steps (the image's entrypoint execs
// it: PID 1's `sleep infinity`): headroom's, not the environment's, so
// no step's memory not its own counts it. A `sh -c X` idle command is
// also X, which the shell may exec.
func keepAlive(idle []string, command string) bool {
	if len(idle) == 0 {
		return false
	}
	if command == strings.Join(idle, " ") {
		return true
	}
	return len(idle) == 3 && idle[0] == "sh" && idle[1] == "-c" && command == idle[2]
}

// blame says in a kill's record whose the killed process was when it was
// not the running step's own: the environment's (started before any
// step), or an earlier step's that left it running.
func (tp *trackedProc) blame(oe *model.OOMEvent, script int) {
	switch {
	case tp.env:
		oe.Entrypoint = true
	case tp.step != "" && tp.script != script:
		oe.StartedInStep = tp.step
	}
}

// leftovers sums the resident memory, at this sample, of the processes
// not the running step's own: those an earlier step left running (first
// seen in a step not the one that runs now, its command not the running
// step's) and the environment's, started before any step by the
// container's entrypoint; called with t.mu held.
func (t *trialRun) leftovers(present map[procKey]bool) {
	pt := &t.procs
	if pt.leftStep != t.step {
		pt.leftStep, pt.leftRSS, pt.leftFrom = t.step, 0, ""
	}
	var sum, big int64
	from := ""
	for k, tp := range pt.seen {
		if !present[k] || (!tp.env && (tp.step == "" || tp.script == pt.script)) {
			continue
		}
		if tp.env && keepAlive(t.task.IdleCommand, tp.proc.Command) {
			continue // the entrypoint, since read, exec'd the keep-alive
		}
		sum += tp.proc.RSSBytes
		if tp.proc.RSSBytes > big {
			big, from = tp.proc.RSSBytes, tp.leftoverFrom()
		}
	}
	if sum > pt.leftRSS {
		pt.leftRSS, pt.leftFrom = sum, from
	}
}

// leftoverFrom is how a step's memory not its own names this process:
// the environment's, or the step's that left it running.
func (tp *trackedProc) leftoverFrom() string {
	if tp.env {
		return fmt.Sprintf("%s (%s)", tp.proc.Command, EntrypointStarted)
	}
	return fmt.Sprintf("%s (left running by step %s)", tp.proc.Command, tp.step)
}

// bornSlack is how much earlier than a script's start a process's start
// time must be to be another script's: the kernel's start time is in
// clock ticks from boot, not the wall clock the script's start is read
// from.
const bornSlack = 100 * time.Millisecond

// entrypointSlack is how much earlier than the first step's script a
// process's start time must be to be the environment's: two clock ticks
// (a start time is read in ticks of 10 ms; the script's start is taken
// before its command is sent, so no process of it starts earlier). The
// leftover rule's bornSlack (100 ms) was too wide for it: a container
// whose first step began 60 ms after its entrypoint started a process
// (the engine's start is that quick) charged that process to the step.
const entrypointSlack = 20 * time.Millisecond

// newScript says a step's script starts: a process seen before it and
// still running was left running by an earlier one.
func (t *trialRun) newScript() {
	t.mu.Lock()
	t.procs.script++
	t.procs.scriptStart = time.Now()
	if t.procs.script == 1 {
		t.procs.firstScript = t.procs.scriptStart
	}
	t.mu.Unlock()
}

// takeLeftovers puts into a closing step's record what processes earlier
// steps left running held while it ran.
func (t *trialRun) takeLeftovers(sr *model.StepResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if pt := &t.procs; pt.leftStep == sr.Name && pt.leftRSS > 0 {
		sr.LeftoverRSSBytes, sr.LeftoverFrom = pt.leftRSS, pt.leftFrom
		pt.leftRSS, pt.leftFrom = 0, ""
	}
}

// nameKill fills a kill's command line and the process tree at the last
// sample that still had the killed process; with no pid from the kernel,
// the next sample names it. Called with t.mu held.
func (t *trialRun) nameKill(i int) {
	pt := &t.procs
	oe := &t.res.OOMs[i]
	tree := pt.last
	if oe.PID != 0 {
		for _, snap := range [][]Proc{pt.last, pt.prev} {
			if j := slices.IndexFunc(snap, func(p Proc) bool { return p.PID == oe.PID }); j >= 0 {
				oe.Command, tree = snap[j].Command, snap
				oe.Driver = oe.Driver || snap[j].Role == RoleDriver
				if forkedAsParent(snap, snap[j]) && oe.Process != "" {
					// Last read between its fork and its exec, and
					// killed before it was read again (a `dd` that asks
					// 300M at once): the line is its parent's, the
					// kernel's name is its own.
					oe.Command = oe.Process
				}
				break
			}
		}
		for j := len(t.res.Activities) - 1; j >= 0; j-- {
			if a := &t.res.Activities[j]; a.PID == oe.PID {
				a.OOMKilled = true
				break
			}
		}
		for _, tp := range pt.seen {
			if tp.proc.PID == oe.PID {
				tp.blame(oe, pt.script)
				if (oe.Entrypoint || oe.StartedInStep != "") && oe.Step == pt.leftStep && oe.RSSBytes > pt.leftRSS {
					// Not the running step's own: the kernel's figure at
					// the kill is its memory, which the samples may have
					// read far smaller (it grew to the limit between two).
					pt.leftRSS, pt.leftFrom = oe.RSSBytes, tp.leftoverFrom()
				}
			}
		}
	} else if !slices.Contains(pt.unnamed, i) {
		pt.unnamed = append(pt.unnamed, i)
	}
	if oe.Command == "" && oe.Process == WorkloadProgram {
		// The kernel named headroom's in-container program and the
		// process watch did not see it: it is the step's process (or one
		// of its jobs), shown as the step's command.
		if show := t.stepShow(oe.Step); show != "" {
			oe.Command = show
		}
	}
	if oe.Command == "" && oe.PID != 0 && oe.Process != "" {
		// Killed before the process watch first read it (a `dd` that
		// asks 300M at once): the kernel's name for it, not nothing.
		oe.Command = oe.Process
	}
	if len(oe.Tree) == 0 || oe.PID != 0 {
		oe.Tree = processTree(tree, oe.PID, oe.RSSBytes)
	}
}

// forkedAsParent says whether p was read between its fork and its exec
// and shown by its parent's command line (in the same sample).
func forkedAsParent(snap []Proc, p Proc) bool {
	if !p.Forked {
		return false
	}
	k := slices.IndexFunc(snap, func(q Proc) bool { return q.PID == p.PPID })
	return k >= 0 && snap[k].Command == p.Command
}

// processTree is a sample as a record: largest RSS first, capped. The
// killed process (pid killed, 0 for none) shows at least the resident set
// the kernel's report gave it at the kill (killedRSS): the sample that
// still had it may have read it as the kernel reaped it (0 B for a python3
// the kernel said held 381 MiB, on a loaded host).
func processTree(procs []Proc, killed int, killedRSS int64) []model.ProcessInfo {
	out := make([]model.ProcessInfo, 0, min(len(procs), MaxTreeProcs))
	for _, p := range procs {
		rss := p.RSSBytes
		if killed != 0 && p.PID == killed {
			rss = max(rss, killedRSS)
		}
		out = append(out, model.ProcessInfo{PID: p.PID, PPID: p.PPID, Command: p.Command, RSSBytes: rss})
	}
	slices.SortStableFunc(out, func(a, b model.ProcessInfo) int { return cmp.Compare(b.RSSBytes, a.RSSBytes) })
	if len(out) > MaxTreeProcs {
		out = out[:MaxTreeProcs]
	}
	return out
}

// endActivities closes the activities still open when the watch ends.
func (t *trialRun) endActivities(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.res.Activities {
		if t.res.Activities[i].End.IsZero() {
			t.res.Activities[i].End = at
		}
	}
	t.procs.seen = nil
}

// clipCommand makes a command line one bounded line: its arguments'
// newlines and tabs (a `python3 -c` script) become spaces.
func clipCommand(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxCommandLen {
		return s[:maxCommandLen] + "…"
	}
	return s
}

// isEngineShim is the engine's own process that becomes an exec'd step
// (runc's init, before its exec), or the step driver's, forked and not yet
// the step: not something the agent started. (A process with no command
// line, between its fork and its exec or a zombie, is not one either.)
//
// headroom's terminal (hr-workload term serve, and the term keys that
// type each replayed action into it) is machinery too: a replay listed
// `/.headroom-replay/hr-workload term keys --dir … -- ls /root` as a
// process its step started, where the docs promise a task's processes,
// never headroom's in-container argv (a fourth new user's). The shell it
// serves, and what the shell runs, are the task's.
func isEngineShim(cmd string) bool {
	return cmd == "runc init" || strings.HasPrefix(cmd, "runc init ") || strings.HasPrefix(cmd, tracedPrefix) || cmd == stepDriverShown || isTerminal(cmd)
}

// isTerminal says whether cmd is headroom's in-container terminal
// (hr-workload term …) or how it is shown.
func isTerminal(cmd string) bool {
	if cmd == terminalShown {
		return true
	}
	f := strings.Fields(cmd)
	return isWorkloadCommand(cmd) && len(f) >= 2 && f[1] == "term"
}

// terminalShown is how headroom's in-container terminal is named in a
// process list (a kill of it, say).
const terminalShown = "(headroom terminal)"

// stepDriverShown is how headroom's step driver in a built-in container
// (hr-workload drive, probe or idle) is named in a process list.
const stepDriverShown = "(headroom step driver)"

// shown is a process's command line as a person reads it. A built-in
// step runs headroom's in-container program (hr-workload run --step NAME
// --profile {JSON}): that process is shown as the step's own command (pip
// install pandas networkx scikit-learn), the jobs it starts (hr-workload
// child) as the running step's command's jobs, and the step driver by
// what it is. Any other command line is shown as it is. Called with t.mu
// held.
//
// is says whether the process is what its pid makes it (RoleDriver,
// RoleStep), parent whether its parent is: where the backend knows them,
// a command line alone names nothing. forked: the backend read it between
// its fork and its exec (Proc.Forked), so its command line is its
// parent's: a fork of the driver is the step's process about to exec the
// step's command (read so under load, the kill of the step was named
// `/hr-workload drive`), a fork of the step's process one of its jobs.
func (t *trialRun) shown(cmd string, is, parent func(role string) bool, forked bool) string {
	if cmd == "["+WorkloadProgram+"]" {
		// No command line, read mid-exec: what its pid, or its
		// parent's, makes it (where the backend knows them).
		switch {
		case is(RoleDriver) && is(RoleStep):
			return cmd // no roles: nothing to tell it by
		case is(RoleDriver):
			return stepDriverShown
		case is(RoleStep) || parent(RoleDriver):
			cmd, forked = WorkloadProgram+" drive", true
		case parent(RoleStep):
			cmd, forked = WorkloadProgram+" run", true
		}
	}
	fields := strings.SplitN(cmd, " ", 5)
	if len(fields) < 2 || path.Base(fields[0]) != WorkloadProgram {
		return cmd
	}
	job := func() string {
		if show := t.stepShow(t.step); show != "" {
			return show + " (a job it started)"
		}
		return cmd
	}
	switch fields[1] {
	case "term":
		return terminalShown
	case "step": // workload.StepMode
		// hr-workload step ADJ PATH ARGV...: the driver's first program
		// of a step, which execs ARGV once it has set the step's OOM
		// score; read before that exec, it is what it will run.
		if len(fields) == 5 {
			return t.shown(fields[4], is, parent, forked)
		}
	case "run":
		if forked && parent(RoleStep) {
			return job()
		}
		if !is(RoleStep) {
			return cmd
		}
		if len(fields) >= 4 && fields[2] == "--step" {
			if show := t.stepShow(fields[3]); show != "" {
				return show
			}
		}
	case "child":
		if parent(RoleStep) {
			return job()
		}
	case "drive", "probe", "idle":
		if forked && (is(RoleStep) || parent(RoleDriver)) {
			if show := t.stepShow(t.step); show != "" {
				return show
			}
		}
		if is(RoleDriver) {
			return stepDriverShown
		}
	}
	return cmd
}

// isWorkloadCommand says whether cmd is headroom's in-container program's
// own command line (hr-workload run --step NAME --profile {…}).
func isWorkloadCommand(cmd string) bool {
	first, _, _ := strings.Cut(cmd, " ")
	return path.Base(first) == WorkloadProgram
}

// stepShow is the command a step of this trial shows, by the step's name
// ("" for none): the agent's install and steps, the phases' setup and
// verifiers, the verifier.
func (t *trialRun) stepShow(name string) string {
	if t.commandsByStep == nil {
		agent, _ := t.task.Agent(t.trial.Agent)
		t.commandsByStep = map[string]string{}
		for _, s := range t.task.StepsOf(agent) {
			if _, ok := t.commandsByStep[s.Name]; !ok && s.Show != "" {
				t.commandsByStep[s.Name] = s.Show
			}
		}
	}
	return t.commandsByStep[name]
}

// tracedPrefix marks headroom's own trace wrapper in a process list.
const tracedPrefix = "(headroom trace) "

// untrace shows headroom's trace wrapper (sh or bash -c '<wrapper>'
// headroom-trace ARGS), and the first bash it execs (bash -c or -lic
// '<traceBashInner>' TEE ARGS, which stays for the step where the
// step's stdout is teed), as the script they run, and where there is no
// bash the shell that sources the script as the `sh -x` it stands for.
// A command line read from /proc is its arguments joined by spaces, an
// empty TEE an empty word between two.
func untrace(cmd string) string {
	for _, shell := range []string{"sh", "bash"} {
		if rest, ok := strings.CutPrefix(cmd, shell+" -c "+traceWrapper+" headroom-trace "); ok {
			return tracedPrefix + rest
		}
	}
	for _, flag := range []string{"-c", "-lic"} {
		if rest, ok := strings.CutPrefix(cmd, "bash "+flag+" "+traceBashInner+" "); ok {
			_, args, _ := strings.Cut(rest, " ") // the tee's file: headroom's, not the step's
			return tracedPrefix + args
		}
	}
	if rest, ok := strings.CutPrefix(cmd, "sh -c "+traceShInner+" "); ok {
		return "sh -x " + rest // the traced script's own shell, as it was shown before sh sourced it
	}
	return cmd
}
