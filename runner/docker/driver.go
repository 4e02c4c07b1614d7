package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
)

// usesDriver says whether a task's steps go through the step driver: only
// in headroom's own image, whose binary is the driver, and unless the
// backend was told to use exec for every step.
func (b *Backend) usesDriver(task model.Task) bool {
	return !b.opts.ExecSteps && slices.Equal(task.IdleCommand, []string{wire.Binary, wire.IdleMode}) && tracesDriver(task) == ""
}

// tracesDriver says why a task's own processes could read the driver's
// channel ("" when they cannot): the driver is non-dumpable, which keeps
// its /proc/1/fd and ptrace from every process without CAP_SYS_PTRACE;
// a task granted it could read the commands (their nonces and secrets)
// and forge their ends, so its steps take the engine's exec, whose
// output never passes through the container's PID 1.
func tracesDriver(task model.Task) string {
	if c := runner.TracingCapability(task); c != "" {
		return "the task is granted " + c + ", with which its processes could read the step driver's channel"
	}
	return ""
}

// driver is headroom's end of a sandbox's step driver: the container's
// attached stdin (commands) and output (the steps' lines and end markers).
type driver struct {
	// keepHome: the container's environment sets HOME, which a step run
	// as another user keeps (workload.Command.KeepHome).
	keepHome bool
	conn     types.HijackedResponse
	// ended is closed when the output stream ends: the container stopped.
	ended chan struct{}

	busy sync.Mutex // one command at a time

	mu  sync.Mutex
	cur *driven
	// stepPID is the running command's process (its pid in the
	// container), as the driver said it (0: none running).
	stepPID int
}

// runningPID is the pid, in the container, of the process the driver
// started for the command in flight (0 for none).
func (d *driver) runningPID() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stepPID
}

// pidPending says whether a command is in flight whose process's pid the
// driver has not said yet (for up to pidWait after it was sent): until it
// has, the step's processes cannot be told from others by their pids, and
// a process list read then would name the step by its argv.
func (d *driver) pidPending(now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cur != nil && d.cur.started != "" && d.stepPID == 0 && now.Sub(d.cur.at) < pidWait
}

// pidWait bounds how long the process watch waits for a step's pid: it
// comes within milliseconds; a wait of a second hid the processes of a
// step killed in its first second (the F11 row named no process).
const pidWait = 100 * time.Millisecond

// driven is the command in flight.
type driven struct {
	end     string
	started string // the marker before the pid of the command's process
	line    func(stream, text string)
	code    int
	// streams counts the streams whose end marker arrived: the command is
	// done when both have, so no line of either is left behind.
	streams int
	// bad says why the end was not the driver's answer ("" when it was).
	bad  string
	done chan struct{}
	at   time.Time // when it was sent
	// argv is the command's line as its process shows it (its argv
	// joined by spaces), for a process read before its pid is said.
	argv string
	// heldMark is the marker the driver says when the command's process
	// has ended and others hold its output (workload.Command.Held); held
	// says it came.
	heldMark string
	held     bool
}

// pendingArgv is the command line of the command in flight whose pid the
// driver has not said yet ("" when none is): a process of the driver's
// with that very line is the step's, read before its pid's marker came
// (late on a loaded host: a demo quit then left a cancelled verifier
// named by hr-workload's argv in its record).
func (d *driver) pendingArgv() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur == nil || d.stepPID != 0 || d.cur.started == "" {
		return ""
	}
	return d.cur.argv
}

// clipText is a bounded piece of what a stream said, for an error.
func clipText(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// attachDriver attaches to a created container whose entrypoint is the
// driver; the caller starts it.
func attachDriver(ctx context.Context, b *Backend, id string) (*driver, error) {
	conn, err := b.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("attach to the step driver: %w", err)
	}
	return newDriver(conn), nil
}

// newDriver reads a driver's output from conn until it ends.
func newDriver(conn types.HijackedResponse) *driver {
	d := &driver{conn: conn, ended: make(chan struct{})}
	stdout, stderr := runner.LineWriter(d.lineFrom("stdout")), runner.LineWriter(d.lineFrom("stderr"))
	go func() {
		defer close(d.ended)
		_, _ = stdcopy.StdCopy(stdout, stderr, conn.Reader)
		stdout.Close()
		stderr.Close()
	}()
	return d
}

// lineFrom handles one line of a stream: the current command's output, or
// its end marker (with any unterminated last line before it).
func (d *driver) lineFrom(stream string) func(string) {
	return func(text string) {
		d.mu.Lock()
		c := d.cur
		d.mu.Unlock()
		if c == nil {
			return // nothing is running: nothing of a step can be here
		}
		if stream == "stderr" && c.heldMark != "" && text == c.heldMark {
			d.mu.Lock()
			c.held = true
			d.mu.Unlock()
			return
		}
		if stream == "stderr" && c.started != "" {
			if j := strings.Index(text, c.started); j >= 0 {
				if j > 0 {
					c.line(stream, text[:j])
				}
				if pid, err := strconv.Atoi(strings.TrimSpace(text[j+len(c.started):])); err == nil && pid > 0 {
					d.mu.Lock()
					if d.cur == c {
						d.stepPID = pid
					}
					d.mu.Unlock()
				}
				return
			}
		}
		i := strings.Index(text, c.end)
		if i < 0 {
			c.line(stream, text)
			return
		}
		if i > 0 {
			c.line(stream, text[:i])
		}
		// Both streams carry the code; one that does not parse, or the two
		// disagreeing, is not the driver's answer.
		code, err := strconv.Atoi(strings.TrimSpace(text[i+len(c.end):]))
		if err != nil || code < 0 || code > 255 || (c.streams == 1 && code != c.code) {
			c.bad = fmt.Sprintf("its end marker on %s said %q", stream, clipText(text[i+len(c.end):]))
		}
		c.code = code
		if c.streams++; c.streams == 2 {
			close(c.done)
		}
	}
}

// errDriverGone is returned for a command sent after the container stopped.
var errDriverGone = errors.New("the container has stopped (its step driver ended)")

// run runs one command and waits for its end, the container's or ctx's.
func (d *driver) run(ctx context.Context, argv, env []string, user string, line func(stream, text string)) (runner.ExecResult, error) {
	cmd := workload.Command{Argv: argv, User: user, KeepHome: d.keepHome}
	// The driver writes a traced step's output file from the step's one
	// output pipe, without its trace lines (workload.Command.OutputFile).
	env, cmd.Terminal = runner.SplitTerminal(env)
	env, _ = runner.SplitHold(env) // held where it has an OutputFile
	cmd.Env, cmd.OutputFile, cmd.TraceMark = runner.SplitOutputFile(env)
	if cmd.OutputFile != "" {
		cmd.TraceFD = runner.TraceFD
	}
	return d.send(ctx, cmd, line)
}

// send tells the driver one command (its End is made here) and waits for
// its end.
func (d *driver) send(ctx context.Context, cmd workload.Command, line func(stream, text string)) (runner.ExecResult, error) {
	d.busy.Lock()
	defer d.busy.Unlock()
	select {
	case <-d.ended:
		return runner.ExecResult{}, errDriverGone
	default:
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	id := hex.EncodeToString(nonce[:])
	c := &driven{end: "\x1e[headroom-end " + id + "]", started: "\x1e[headroom-pid " + id + "]", line: line, done: make(chan struct{}), at: time.Now(), argv: strings.Join(cmd.Argv, " ")}
	cmd.End = c.end
	if cmd.Op == "" {
		cmd.Started = c.started
	}
	if cmd.OutputFile != "" {
		c.heldMark = "\x1e[headroom-held " + id + "]"
		cmd.Held = c.heldMark
	}
	msg, err := json.Marshal(cmd)
	if err != nil {
		return runner.ExecResult{}, err
	}
	d.mu.Lock()
	d.cur = c
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.cur, d.stepPID = nil, 0
		d.mu.Unlock()
	}()
	// The write honours ctx as the wait for the answer does: a driver that
	// takes no more input (its stdin's buffer full while it is held, say
	// by an upload into a FIFO the task planted) must not hold the trial
	// past its step's deadline. A write cut off leaves the command stream
	// torn, so nothing more is sent (the deadline stays in the past).
	//
	// A file operation's line (up to 8 MiB of a step's files) is written
	// whole unless the driver takes nothing for fileOpWrite, whatever the
	// step's deadline: cut off by a 50 ms time limit, it tore the stream,
	// and every later operation of the trial failed as "the engine went
	// away" (the twenty-seventh attacker's 1). The wait for its answer
	// still honours ctx.
	writeCtx := ctx
	if cmd.Op != "" {
		var cancel context.CancelFunc
		writeCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), fileOpWrite)
		defer cancel()
	}
	stop := context.AfterFunc(writeCtx, func() { _ = d.conn.Conn.SetWriteDeadline(time.Unix(1, 0)) })
	_, err = d.conn.Conn.Write(append(msg, '\n'))
	if !stop() && err == nil {
		err = writeCtx.Err() // cut off just as it finished: the same
	}
	if err != nil {
		if writeCtx.Err() != nil {
			return runner.ExecResult{}, writeCtx.Err()
		}
		return runner.ExecResult{}, fmt.Errorf("step driver: %w", err)
	}
	answer := func() (runner.ExecResult, error) {
		if c.bad != "" {
			return runner.ExecResult{}, fmt.Errorf("the step driver's answer did not parse: %s: %w", c.bad, runner.ErrTaskInterfered)
		}
		return runner.ExecResult{ExitCode: c.code}, nil
	}
	select {
	case <-c.done:
		return answer()
	case <-d.ended:
		select {
		case <-c.done: // the stream's last bytes were this command's end
			return answer()
		default:
		}
		// The driver died under the step (the kernel killed it, or the
		// container was killed): every process in the container went
		// with it, as an exec'd step would have.
		return runner.ExecResult{ExitCode: 137}, nil
	case <-ctx.Done():
		d.mu.Lock()
		held := c.held
		d.mu.Unlock()
		if held {
			return d.release(c, ctx.Err())
		}
		return runner.ExecResult{}, ctx.Err()
	}
}

// release ends the hold of a command whose process has ended while
// others hold its output (workload.OpRelease), at its timeout (cause):
// those processes run on, as the harness's do when it cancels its exec.
// Where the driver does not answer within releaseWait, the command is
// cut off as any other at its timeout (its processes stopped).
func (d *driver) release(c *driven, cause error) (runner.ExecResult, error) {
	msg, _ := json.Marshal(workload.Command{Op: workload.OpRelease, End: c.end})
	_ = d.conn.Conn.SetWriteDeadline(time.Now().Add(releaseWait))
	_, err := d.conn.Conn.Write(append(msg, '\n'))
	if err != nil {
		return runner.ExecResult{}, cause
	}
	_ = d.conn.Conn.SetWriteDeadline(time.Time{})
	select {
	case <-c.done:
		if c.bad != "" {
			return runner.ExecResult{}, cause
		}
		return runner.ExecResult{ExitCode: c.code, Released: true}, cause
	case <-d.ended:
	case <-time.After(releaseWait):
	}
	return runner.ExecResult{}, cause
}

// fileOpWrite bounds the write of a file operation's line to the driver:
// one that takes nothing that long is held (its stdin full), and the
// write is cut off.
const fileOpWrite = 5 * time.Second

// releaseWait bounds the driver's answer to a release.
const releaseWait = 5 * time.Second

// close ends the connection and waits for the output to be drained.
func (d *driver) close() {
	d.conn.Close()
	<-d.ended
}
