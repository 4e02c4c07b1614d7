package workload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/headroom-eval/headroom/model"
)

// The step driver: the built-in image's PID 1 when headroom runs a trial's
// steps without the engine's exec (which costs the engine tens of ms per
// step). headroom writes one Command per line on the driver's stdin (the
// container's attached stdin); the driver runs it as its child with the
// container's stdout and stderr, then writes the command's End marker and
// exit code on both streams, so headroom knows each stream is complete
// (the engine copies the two streams separately and may reorder them).
// The driver runs one command at a time and only when told: headroom
// resets the kernel's peak before each, exactly as before an exec. End of
// stdin (headroom gone) ends the driver, and with it the container.
//
// The channel is the driver's alone. It makes itself non-dumpable at
// start, so no other process of the container can open /proc/1/fd/* (its
// stdin, where each command's end marker and environment arrive, or its
// stdout and stderr) nor ptrace it, without CAP_SYS_PTRACE, which Docker
// does not grant by default: a task process waiting in a read on
// /proc/1/fd/0 took the next command, its nonce with it, and forged its
// end ("exit 0", a reward of 1) or hung headroom. Its steps do not
// inherit its streams either: each gets a pipe of its own that the driver
// copies from (a step could open its own /proc/self/fd/1 for reading and
// take the driver's output), and /dev/null as stdin.

// DriveMode is the argument that makes the binary the step driver.
const DriveMode = "drive"

// Command is one step for the driver.
type Command struct {
	Argv []string `json:"argv"`
	// Env is added to the container's environment.
	Env []string `json:"env,omitempty"`
	// End is the marker the driver writes after the command, followed by
	// a space and the exit code. headroom makes a fresh one per command,
	// so no output of a step can end another by accident.
	End string `json:"end"`
	// Op, for the probe, asks something other than running Argv
	// (OpPeak, OpFinal); End then names the answer.
	Op string `json:"op,omitempty"`
	// User runs the command as this user ("uid[:gid]" or a name in the
	// image's /etc/passwd) instead of the container's, as the engine's
	// exec --user does (the step driver and the probe alike).
	User string `json:"user,omitempty"`
	// KeepHome: the container's own environment (its image's, its
	// task's) sets HOME, which a step run as User keeps, as runc sets
	// HOME only where the environment has none.
	KeepHome bool `json:"keep_home,omitempty"`
	// Stdin is OpUntar's tar stream.
	Stdin []byte `json:"stdin,omitempty"`
	// Started, for the step driver, is a marker it writes on stderr once
	// the command's process has started, followed by a space and that
	// process's pid (in the container): headroom knows the step's process
	// by its pid, not by the name a process gives itself.
	Started string `json:"started,omitempty"`
	// OutputFile, for the step driver, is a file the step's stdout (the
	// pipe its stderr and trace are joined to) is also written to, the
	// lines that start with TraceMark taken out (traceFilter).
	//
	// It is a tee's file, and the step lasts as the tee does: past its
	// process's end while another process holds its output (outputHold).
	OutputFile string `json:"output_file,omitempty"`
	TraceMark  string `json:"trace_mark,omitempty"`
	// TraceFD is the descriptor a traced step's trace is written on,
	// which every process the script starts holds: holding it is not
	// holding the step's output (outputHold).
	TraceFD int `json:"trace_fd,omitempty"`
	// Held, for a step with an OutputFile, is a marker the driver writes
	// on stderr when the step's process has ended and others still hold
	// its output: headroom may then end the hold at the step's timeout
	// (OpRelease) instead of stopping them.
	Held string `json:"held,omitempty"`
	// Terminal, for the step driver, gives the step a pseudo-terminal for
	// its stdout and stderr (drainTerminal) instead of two pipes, as
	// terminal-bench's tmux pane is its commands' terminal.
	Terminal bool `json:"terminal,omitempty"`
}

// The driver's file operations: what the engine's copy API does (a copy
// costs the engine a few hundred ms on this kind of host, against a few
// for a line to the driver), done by the driver itself as root. A driver
// that is not root refuses both (DriverNotRoot), and headroom uses the
// engine's copy, which writes as root, so files land as they would.
const (
	// OpUntar unpacks Stdin (a tar stream) under Argv[0].
	OpUntar = "untar"
	// OpRead writes the file Argv[0] on stdout as one line of base64;
	// exit DriverNoFile when it does not exist.
	OpRead = "read"
	// OpRemove removes each path of Argv and what is under it, as
	// `rm -rf --` does; a missing path is no error.
	OpRemove = "remove"
	// OpUser checks that Argv[0] is a user a step can run as: the
	// container's user, which the driver runs each step as when it runs
	// as root itself, checked at the start as the engine checks it.
	OpUser = "user"
)

// Exit codes of the driver's file operations.
const (
	DriverNoFile  = 44 // OpRead: no such file
	DriverNotRoot = 45 // the driver does not run as root: use the engine's copy
	// DriverNotRegular: OpRead of what is not a regular file (a
	// directory, a FIFO, a device).
	DriverNotRegular = 46
	// DriverLink: OpRead of a path that is, or passes through, a
	// symbolic link it does not follow (ErrLink, OpenInDir).
	DriverLink = 47
	// DriverTooLarge: OpRead of a file of more than
	// model.MaxRewardFileBytes.
	DriverTooLarge = 48
)

// ReadLineBytes is the longest line of OpRead's answer: the file in
// base64, 48 KiB of it a line, written as it is read, so the driver (in
// the task's memory limit) never holds more than a line of it.
const ReadLineBytes = 64 << 10

// initSignals are the signals that end a Go program by default. As the
// container's PID 1 the driver holds them, as an init process without a
// handler does (the kernel does not deliver those to it): a step's `kill
// -TERM 1` killed the driver, and with it the container, which headroom
// then took for the engine lost — the task's own act excused as infra.
// Held by a handler, not ignored, so the steps it starts get the
// defaults. headroom itself stops a container with SIGKILL. The fatal
// ones too (SEGV, BUS, FPE, ILL, TRAP, SYS, ABRT...): sent by kill they
// are not faults, and the Go runtime, which handles them, crashed on a
// step's `kill -SEGV 1`; a real fault of the driver still crashes it
// (Notify takes only the signals sent to it).
var initSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM,
	syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGABRT, syscall.SIGSTKFLT,
	syscall.SIGVTALRM, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGPWR, syscall.SIGIO}

// holdInitSignals holds initSignals as an init process does, saying
// each one that came on stderr.
func holdInitSignals(stderr io.Writer, mode, what string) {
	held := make(chan os.Signal, 4)
	signal.Notify(held, initSignals...)
	go func() {
		for sig := range held {
			fmt.Fprintf(stderr, "hr-workload %s: %v sent to the container's PID 1 (%s) was ignored, as an init process ignores it\n", mode, sig, what)
		}
	}()
}

// drive reads commands from in until it ends.
func drive(in io.Reader, stdout, stderr io.Writer) int {
	workDir, _ = os.Getwd()
	if os.Getpid() == 1 {
		holdInitSignals(stderr, "drive", "headroom's step driver")
	}
	// Before guardChannel: a non-dumpable process's /proc files are
	// root's, and the driver may run as the task's user.
	spare := spareFromOOM(stderr)
	if err := guardChannel(); err != nil {
		fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
	}
	ib := newInbox(in)
	for {
		line, ok := ib.next()
		if !ok {
			return 0
		}
		var c Command
		if err := json.Unmarshal(line, &c); err != nil || c.End == "" {
			fmt.Fprintf(stderr, "hr-workload drive: bad command %q: %v\n", line, err)
			return 2
		}
		var code int
		switch c.Op {
		case OpRelease:
			continue // its step's hold has ended already
		case OpUntar, OpRead, OpRemove:
			code = fileOp(c, stdout, stderr)
		case OpUser:
			code = userOp(c, stderr)
		default:
			code = runCommand(c, spare, ib, stdout, stderr)
		}
		// A last line the command left open ends with the marker;
		// headroom splits it off.
		end := fmt.Sprintf("%s %d\n", c.End, code)
		io.WriteString(stdout, end)
		io.WriteString(stderr, end)
	}
}

// userOp answers OpUser: 0 when Argv[0] is a user a step can run as,
// else 126 and the engine's words for a container whose user is unknown.
func userOp(c Command, stderr io.Writer) int {
	if len(c.Argv) != 1 {
		fmt.Fprintf(stderr, "hr-workload drive: %s takes one user\n", c.Op)
		return 2
	}
	if _, _, err := lookupUser(c.Argv[0]); err != nil {
		fmt.Fprintf(stderr, "unable to find user %s: %v\n", c.Argv[0], err)
		return 126
	}
	return 0
}

// runCommand runs c and returns its exit code as the engine's exec would
// report it: 128+signal for a killed process, 126/127 when it cannot start.
// A step with an OutputFile is held past its end while processes it left
// hold its output (outputHold), released early by an OpRelease from in.
func runCommand(c Command, spare *oomSpare, in *inbox, stdout, stderr io.Writer) int {
	if spare == nil {
		spare = &oomSpare{}
	}
	if len(c.Argv) == 0 {
		fmt.Fprintln(stderr, "hr-workload drive: empty command")
		return 127
	}
	// Not the driver's own files: the step writes into pipes of its own,
	// which the driver drains (the driver's streams are its channel).
	cmd, err := stepCommand(c, spare.raise.adj(), onlyWriter{stdout}, onlyWriter{stderr})
	switch {
	case errors.Is(err, errNoWorkDir):
		fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
		return 126
	case err != nil:
		// The engine's exec refuses an unknown user the same way.
		fmt.Fprintf(stderr, "hr-workload drive: unable to find user %s: %v\n", c.User, err)
		return 126
	}
	var file io.WriteCloser
	if c.OutputFile != "" {
		uid, gid := -1, -1
		if cr := cmd.SysProcAttr.Credential; cr != nil {
			uid, gid = int(cr.Uid), int(cr.Gid)
		}
		f, err := openOutputFile(c.OutputFile, uid, gid)
		if err != nil {
			// As a shell's redirect that cannot open its file: the
			// command does not run.
			fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
			return 1
		}
		file = &traceFilter{w: f, mark: []byte(c.TraceMark)}
	}
	hold := newOutputHold(c, in, func() {
		if c.Held != "" {
			fmt.Fprintf(stderr, "%s\n", c.Held)
		}
	})
	err = runDrainedTo(cmd, stdout, stderr, file, hold, c.Terminal, func() error { return spare.forStep(cmd.Start) }, func() {
		if c.Started != "" {
			fmt.Fprintf(stderr, "%s %d\n", c.Started, cmd.Process.Pid)
		}
	})
	return exitCode(cmd, err, stderr)
}

// runDrained runs a step (cmd, started by start, then started called)
// with its output drained to stdout and stderr (drainStep), and returns
// once it has ended and its pipes have gone quiet: the driver's and the
// probe's.
func runDrained(cmd *exec.Cmd, stdout, stderr io.Writer, start func() error, started func()) error {
	return runDrainedTo(cmd, stdout, stderr, nil, nil, false, start, started)
}

// runDrainedTo is runDrained with the step's stdout also written to
// file (nil: none) to the pipe's end, which closes it, the step held
// past its end while processes it left hold its output (hold, nil:
// not), and its output on a pseudo-terminal where terminal is set
// (drainTerminal).
func runDrainedTo(cmd *exec.Cmd, stdout, stderr io.Writer, file io.WriteCloser, hold *outputHold, terminal bool, start func() error, started func()) error {
	var out, errs *drain
	var err error
	if terminal {
		out, errs, err = drainTerminal(cmd, stdout, stderr)
	} else {
		out, errs, err = drainStep(cmd, stdout, stderr)
	}
	if err != nil {
		if file != nil {
			file.Close()
		}
		return err
	}
	out.file = file
	hold.attach(out.pw)
	err = start()
	out.started(err == nil)
	errs.started(err == nil)
	if err != nil {
		return err
	}
	started()
	err = cmd.Wait()
	hold.wait()
	endStep(out, errs)
	return err
}

// A step's output reaches the driver through pipes it drains to their
// end, past the step's own end: a process the step left in the
// background (a server, a `( sleep 3; … ) &` job) can hold them, and
// writes to them later (its trace lines, under a traced step). exec's
// own copying closed them a second after the step ended (WaitDelay),
// and such a job's next write was its SIGPIPE: a background job that
// wrote a file 3 s on died at its next traced command, where under
// Harbor it wrote it (the twelfth attacker's 2). The step ends when its
// process has and its pipes are quiet (drained to their end, or waiting
// for data DrainQuiet), at most DrainWait after; what comes later is
// read and dropped, never forwarded after the step's end.
//
// DrainQuiet is longer than the runner's slack for a process's birth
// (runner's bornSlack, 100 ms): a process a step leaves behind holding
// its pipes (`nohup python3 … &`), first read by the process watch only
// once the next step has begun, is that step's by its birth only if it
// was born that much before the next step's start. At 50 ms, the CI
// rehearsal's TestHostileR3LeftoverKilledInTheVerifier charged such a
// process's kill to the verifier's step.
const (
	DrainQuiet = 300 * time.Millisecond
	DrainWait  = time.Second
)

// drain copies one of a step's pipes to w while the step runs.
type drain struct {
	mu sync.Mutex
	w  io.Writer // nil once the step has ended: read and dropped
	// file, when set, gets what is read to the pipe's end, past the
	// step's (Command.OutputFile), and is closed there.
	file    io.WriteCloser
	r, pw   *os.File
	reading time.Time // when the read under way began (zero while writing)
	eof     bool
}

// drainStep gives cmd a pipe for its stdout and one for its stderr, each
// drained to w once the step has started (drain.started).
func drainStep(cmd *exec.Cmd, stdout, stderr io.Writer) (*drain, *drain, error) {
	var ds [2]*drain
	for i, w := range []io.Writer{stdout, stderr} {
		r, pw, err := os.Pipe()
		if err != nil {
			if i == 1 {
				ds[0].started(false)
			}
			return nil, nil, err
		}
		ds[i] = &drain{w: w, r: r, pw: pw}
	}
	cmd.Stdout, cmd.Stderr = ds[0].pw, ds[1].pw
	return ds[0], ds[1], nil
}

// drainTerminal gives cmd a pseudo-terminal for both its stdout and its
// stderr, drained to stdout as one stream; stderr's drain is an idle one.
//
// terminal-bench 1 types each command into a tmux pane, so its programs
// write to a terminal: Python's print and C's stdio flush at each line,
// and stdout and stderr reach the pane in the order they were written.
// Into a pipe they buffer in blocks: a test report printed before an
// os._exit was lost, and a FAILED line with it, so a wrong answer whose
// PASSED lines had been flushed passed where terminal-bench failed it
// (the seventeenth attacker's 5). The terminal is the pane's size, and
// its output is not post-processed (no OPOST: a newline stays one byte,
// as the pane's capture reads it); the tests' transcript draws the rest.
//
// It is not the step's controlling terminal and not its stdin (which
// stays /dev/null: nothing types into it). As a controlling terminal, its
// hangup when the step's shell ended would send SIGHUP to what the step
// left running in the background (a server the tests then talk to),
// which in the pane lives on. The driver reads it to its end, past the
// step's, as it reads a pipe: a background job's later writes never
// block or fail. Where /dev/ptmx cannot be opened, the step gets pipes
// and a line on stderr says so.
func drainTerminal(cmd *exec.Cmd, stdout, stderr io.Writer) (*drain, *drain, error) {
	master, slave, err := openPTY()
	if err == nil {
		err = rawOutput(slave)
		if err != nil {
			master.Close()
			slave.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload drive: no pseudo-terminal for the step (%v): its output is a pipe\n", err)
		return drainStep(cmd, stdout, stderr)
	}
	cmd.Stdout, cmd.Stderr = slave, slave
	return &drain{w: stdout, r: master, pw: slave}, &drain{eof: true}, nil
}

// rawOutput turns off the terminal's output processing (OPOST), which
// would write each newline as "\r\n".
func rawOutput(tty *os.File) error {
	fd := int(tty.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("read the pty's settings: %w", err)
	}
	t.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return fmt.Errorf("set the pty's output raw: %w", err)
	}
	return nil
}

// started closes the driver's copy of the pipe's write end (the step
// holds its own) and drains the pipe; for a step that did not start, it
// closes the read end too. An idle drain (no pipe) does nothing.
func (d *drain) started(ok bool) {
	if d.r == nil {
		return
	}
	d.pw.Close()
	if !ok {
		d.r.Close()
		d.eof = true
		if d.file != nil {
			d.file.Close()
		}
		return
	}
	go d.run()
}

// run reads the pipe to its end.
func (d *drain) run() {
	buf := make([]byte, 32<<10)
	for {
		d.mu.Lock()
		d.reading = time.Now()
		d.mu.Unlock()
		n, err := d.r.Read(buf)
		d.mu.Lock()
		d.reading = time.Time{}
		if n > 0 && d.w != nil {
			_, _ = d.w.Write(buf[:n])
		}
		if n > 0 && d.file != nil {
			_, _ = d.file.Write(buf[:n])
		}
		if err != nil {
			d.eof = true
			d.mu.Unlock()
			d.r.Close()
			if d.file != nil {
				d.file.Close()
			}
			return
		}
		d.mu.Unlock()
	}
}

// quiet says the pipe is drained to its end, or its read has waited for
// data at least DrainQuiet since ended (the step's process's end) with
// nothing left in the pipe. Counted from the read's start alone, a step
// whose last line came after DrainQuiet of silence lost it on a loaded
// host: its read had begun long before, the line sat in the pipe (or in
// a read not yet handed on) when the step ended, and the pipe read as
// quiet (a probe's step lost its one line, 1 run in 6 beside a fuzzer).
func (d *drain) quiet(ended time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.eof {
		return true
	}
	return !d.reading.IsZero() && time.Since(later(d.reading, ended)) >= DrainQuiet && !d.pending()
}

// pending says whether the pipe holds bytes not yet read (FIONREAD,
// Linux's TIOCINQ, for a pipe and a terminal alike); a
// pipe that cannot say is taken to hold none.
func (d *drain) pending() bool {
	n := 0
	if rc, err := d.r.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
		})
	}
	return n > 0
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// endStep waits, once the step's process has ended, for its pipes to go
// quiet (at most DrainWait), then stops forwarding them.
func endStep(ds ...*drain) {
	ended := time.Now()
	deadline := ended.Add(DrainWait)
	for time.Now().Before(deadline) && !(ds[0].quiet(ended) && ds[1].quiet(ended)) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, d := range ds {
		d.mu.Lock()
		d.w = nil
		d.mu.Unlock()
	}
}

// workDir is the container's working directory, where the driver (or
// the probe) started: each step starts there, as the engine's exec does
// ("" in a test: where the test runs).
var workDir string

// errNoWorkDir is a step whose working directory is gone: the engine's
// exec cannot start it either (126).
var errNoWorkDir = errors.New("cannot start the step")

// stepCommand is a step (c, Argv not empty) as the driver and the probe
// start it, as the engine's exec would: the step's environment over the
// container's, its user's credentials (an error for a user the image
// lacks) and, as runc, that user's HOME where the environment has none;
// raised to raise (raiseStep; 0: not) where the driver could not be spared.
//
// Each step starts in the container's working directory (workDir) by its
// path, and in a session and process group of its own, as runc starts
// each exec. Before, every step inherited the driver's: the directory it
// held since the start (a step that removed and made /app again left
// every later step in the removed one, "getcwd: cannot access parent
// directories", and a verifier whose directory was gone ran there, where
// the engine's exec cannot start, 126), and its process group (a step's
// `trap 'kill 0' EXIT` killed an earlier step's server).
func stepCommand(c Command, raise int, stdout, stderr io.Writer) (*exec.Cmd, error) {
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if workDir != "" {
		if st, err := os.Stat(workDir); err != nil || !st.IsDir() {
			if err == nil {
				err = syscall.ENOTDIR
			}
			return nil, fmt.Errorf("%w: chdir to cwd (%q) set in config.json failed: %v", errNoWorkDir, workDir, errors.Unwrap(err))
		}
		cmd.Dir = workDir
	}
	if c.User != "" {
		cred, home, err := lookupUser(c.User)
		if err != nil {
			return nil, err
		}
		cmd.SysProcAttr.Credential = cred
		if !c.KeepHome && !slices.ContainsFunc(c.Env, func(e string) bool { return strings.HasPrefix(e, "HOME=") }) {
			cmd.Env = append(cmd.Env, "HOME="+home)
		}
	}
	// A step that leaves a process holding its output (a server started
	// in the background) ends when its own process does, as on a cluster.
	cmd.WaitDelay = time.Second
	if raise > 0 && cmd.Err == nil {
		raiseStep(cmd, raise)
	}
	return cmd, nil
}

// StepOOMScoreAdj is the OOM score adjustment of the steps the driver
// starts: the engine's default for a container's processes, as the task's
// would have under its harness.
const StepOOMScoreAdj = model.StepOOMScoreAdj

// oomSpare keeps the step driver out of the kernel's choice of OOM
// victim. headroom starts a driven container with the kernel's lowest
// adjustment (-1000, OOM_SCORE_ADJ_MIN: never chosen), which its steps
// would inherit: the driver puts its own back to StepOOMScoreAdj while it
// forks each step, and lowers it again once the step is started. Without
// it, on cgroup v1 the kernel killed the step's process at the limit and,
// 7 ms later and before that memory was freed, the driver too (1 demo
// trial in 20 on a loaded host): the container ended under the trial,
// whose verifier then could not run, an infra-error where the harness,
// whose container's PID 1 is no such target, has the agent's kill.
//
// The file is opened once, before the driver makes itself non-dumpable
// (its /proc files are then root's); a nil spare (the driver was not
// started protected, or the file cannot be opened) does nothing.
//
// An engine that refuses -1000 (one whose daemon may not lower a score,
// as on this project's CI machine) starts the driver at its default, the
// steps' own. Then the steps are raised instead (raise): each starts,
// through raiseStep, at the least score that outweighs the driver's own
// memory (stepRaise), so that while any process of the task lives the
// kernel takes it before the driver. Without it, memory the task held
// where no resident set counts it (52 MiB in unix-socket buffers behind
// a 0.2 MB sleep, pipe pages) left the driver the largest process: the
// kernel killed it, the trial was headroom's failure (driver-killed,
// never graded) where --exec-steps and the harness grade the task's own
// kill. Every step gets the same raise, so the kernel's order among the
// task's processes is its order under the harness.
type oomSpare struct {
	f     *os.File
	raise *raiser
}

func spareFromOOM(stderr io.Writer) *oomSpare {
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return nil
	}
	if strings.TrimSpace(string(b)) != strconv.Itoa(model.DriverOOMScoreAdj) {
		if r := newRaiser(); r != nil {
			return &oomSpare{raise: r}
		}
		return nil // the steps keep what the driver has
	}
	f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload drive: %v: its steps would be spared by the OOM killer; they run as it is\n", err)
		return nil
	}
	return &oomSpare{f: f}
}

// forStep runs start (a fork and exec) with the driver's adjustment at
// the steps' own, so the step inherits that one, then spares the driver
// again. A failed write is said once: a step must never start spared.
func (s *oomSpare) forStep(start func() error) error {
	if s == nil || s.f == nil {
		return start()
	}
	if _, err := s.f.WriteAt([]byte(strconv.Itoa(StepOOMScoreAdj)+"\n"), 0); err != nil {
		return fmt.Errorf("setting the step's OOM score adjustment: %w", err)
	}
	err := start()
	_, _ = s.f.WriteAt([]byte("-1000\n"), 0)
	return err
}

// onlyWriter hides that a writer is an *os.File.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(b []byte) (int, error) { return o.w.Write(b) }

// guardChannel makes this process non-dumpable: its /proc/PID/fd, environ
// and mem are then root's and, for anyone but itself, need CAP_SYS_PTRACE
// (ptrace_may_access), as does attaching to it. The steps it starts are
// dumpable again from their exec on.
func guardChannel() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making the step driver non-dumpable: %w (a task process could open its channel)", err)
	}
	return nil
}

// fileOp does one of the driver's file operations.
func fileOp(c Command, stdout, stderr io.Writer) int {
	if os.Geteuid() != 0 {
		return DriverNotRoot
	}
	if c.Op == OpRemove {
		code := 0
		for _, p := range c.Argv {
			if err := os.RemoveAll(p); err != nil {
				fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
				code = 1
			}
		}
		return code
	}
	if len(c.Argv) != 1 {
		fmt.Fprintf(stderr, "hr-workload drive: %s takes one path\n", c.Op)
		return 2
	}
	if c.Op == OpUntar {
		return untar(c.Argv, bytes.NewReader(c.Stdin), stderr)
	}
	// Non-blocking: a FIFO in the file's place must not hold the driver
	// (and headroom with it) in its open; only a regular file is read,
	// and never through a link that leaves its directory (the driver is
	// PID 1: /proc/1/environ).
	f, err := OpenInDir(c.Argv[0])
	switch {
	case errors.Is(err, os.ErrNotExist):
		return DriverNoFile
	case errors.Is(err, ErrLink):
		return DriverLink
	case errors.Is(err, ErrNotRegular):
		return DriverNotRegular
	case err != nil:
		fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
		return 1
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > model.MaxRewardFileBytes {
		return DriverTooLarge
	}
	// One byte more than the bound says it grew past it while read.
	n, err := copyBase64(stdout, io.LimitReader(f, model.MaxRewardFileBytes+1))
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "hr-workload drive: %v\n", err)
		return 1
	case n > model.MaxRewardFileBytes:
		return DriverTooLarge
	}
	return 0
}

// copyBase64 writes r on w in base64, lines of at most ReadLineBytes
// (each a whole encoding of its own), and says how many bytes it read.
func copyBase64(w io.Writer, r io.Reader) (int64, error) {
	buf := make([]byte, ReadLineBytes/4*3)
	line := make([]byte, ReadLineBytes+1)
	var n int64
	for {
		k, err := io.ReadFull(r, buf)
		if k > 0 {
			n += int64(k)
			base64.StdEncoding.Encode(line, buf[:k])
			e := base64.StdEncoding.EncodedLen(k)
			line[e] = '\n'
			if _, werr := w.Write(line[:e+1]); werr != nil {
				return n, werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
