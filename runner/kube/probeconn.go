package kube

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// probeConn is headroom's end of a pod's probe: the attached stdin
// (commands) and stdout (the probe's lines).
type probeConn struct {
	stdin io.WriteCloser
	// ended is closed when the stream ends: the container stopped, or the
	// attach broke.
	ended chan struct{}
	// onSample and onHello get the probe's readings as they come.
	onSample func(workload.ProbeLine)
	onHello  func(workload.ProbeLine)

	busy sync.Mutex // one step at a time

	mu      sync.Mutex
	waiting map[string]*call
	writeMu sync.Mutex
}

// call is a command in flight: its lines and its answer. Its lines are
// handed to line by a goroutine of its own (deliver), never by the
// stream's reader: line may ask the probe something (the runner reads a
// traced command's kernel peak as its trace line comes), whose answer
// only the reader can take — each such ask waited out its bound (5 s), and
// a traced verifier ran past its time limit.
type call struct {
	line   func(stream, text string)
	answer chan workload.ProbeLine

	mu      sync.Mutex
	wake    chan struct{} // a line queued, or done
	queue   [][2]string
	done    bool
	drained chan struct{} // closed when deliver has handed on every line
}

// push queues one of the call's lines for deliver.
func (cl *call) push(stream, text string) {
	cl.mu.Lock()
	cl.queue = append(cl.queue, [2]string{stream, text})
	cl.mu.Unlock()
	select {
	case cl.wake <- struct{}{}:
	default:
	}
}

// deliver hands the queued lines to line, in order, until the call is
// finished and every line handed on.
func (cl *call) deliver() {
	defer close(cl.drained)
	for {
		cl.mu.Lock()
		q, done := cl.queue, cl.done
		cl.queue = nil
		cl.mu.Unlock()
		for _, l := range q {
			cl.line(l[0], l[1])
		}
		if done && len(q) == 0 {
			return
		}
		if len(q) == 0 {
			<-cl.wake
		}
	}
}

// finish says no more lines come and waits until those queued are handed
// on (none is handed on after the command's ask returns).
func (cl *call) finish() {
	if cl.line == nil {
		return
	}
	cl.mu.Lock()
	cl.done = true
	cl.mu.Unlock()
	select {
	case cl.wake <- struct{}{}:
	default:
	}
	<-cl.drained
}

func newProbeConn(stdin io.WriteCloser) *probeConn {
	return &probeConn{stdin: stdin, ended: make(chan struct{}), waiting: map[string]*call{}}
}

// read takes the probe's stream until it ends, then closes ended.
func (c *probeConn) read(r io.Reader) {
	defer close(c.ended)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		c.handle(sc.Text())
	}
}

// handle dispatches one line.
func (c *probeConn) handle(text string) {
	l, ok := workload.ParseProbeLine(text)
	if !ok {
		return // not the probe's (the image's own output before it)
	}
	switch l.Kind {
	case workload.ProbeSample:
		if c.onSample != nil {
			c.onSample(l)
		}
		return
	case workload.ProbeHello:
		if c.onHello != nil {
			c.onHello(l)
		}
		c.answer("hello", l)
		return
	}
	c.mu.Lock()
	cl := c.waiting[l.ID]
	c.mu.Unlock()
	if cl == nil {
		return
	}
	switch l.Kind {
	case workload.ProbeOut:
		if cl.line != nil {
			cl.push("stdout", l.Text)
		}
	case workload.ProbeErr:
		if cl.line != nil {
			cl.push("stderr", l.Text)
		}
	default:
		c.answer(l.ID, l)
	}
}

func (c *probeConn) answer(id string, l workload.ProbeLine) {
	c.mu.Lock()
	cl := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if cl != nil {
		cl.answer <- l
	}
}

// errProbeGone is a command sent after the probe's stream ended.
var errProbeGone = errors.New("the pod's probe has ended (the container stopped)")

// ask sends cmd (its End a fresh id, or "hello") and waits for its
// answer, ctx or the stream's end.
func (c *probeConn) ask(ctx context.Context, cmd workload.Command, line func(stream, text string)) (workload.ProbeLine, error) {
	select {
	case <-c.ended:
		return workload.ProbeLine{}, errProbeGone
	default:
	}
	if cmd.End == "" {
		var nonce [8]byte
		_, _ = rand.Read(nonce[:])
		cmd.End = hex.EncodeToString(nonce[:])
	}
	id := cmd.End
	if cmd.Op == workload.OpHello {
		id = "hello"
	}
	cl := &call{line: line, answer: make(chan workload.ProbeLine, 1), wake: make(chan struct{}, 1), drained: make(chan struct{})}
	if line != nil {
		go cl.deliver()
	}
	defer cl.finish()
	c.mu.Lock()
	c.waiting[id] = cl
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	msg, err := json.Marshal(cmd)
	if err != nil {
		forget()
		return workload.ProbeLine{}, err
	}
	c.writeMu.Lock()
	_, err = c.stdin.Write(append(msg, '\n'))
	c.writeMu.Unlock()
	if err != nil {
		forget()
		return workload.ProbeLine{}, fmt.Errorf("probe: %w", err)
	}
	select {
	case l := <-cl.answer:
		return l, nil
	case <-c.ended:
		select {
		case l := <-cl.answer:
			return l, nil
		default:
		}
		forget()
		return workload.ProbeLine{}, errProbeGone
	case <-ctx.Done():
		forget()
		return workload.ProbeLine{}, ctx.Err()
	}
}

// run runs one step through the probe.
// keepHome: the container's environment sets HOME, which a step run as
// user keeps (workload.Command.KeepHome).
func (c *probeConn) run(ctx context.Context, argv, env []string, user string, keepHome bool, line func(stream, text string)) (runner.ExecResult, error) {
	c.busy.Lock()
	defer c.busy.Unlock()
	env, terminal := runner.SplitTerminal(env)
	env, _ = runner.SplitHold(env) // not held (docs/PARITY.md)
	l, err := c.ask(ctx, workload.Command{Argv: argv, Env: env, User: user, KeepHome: keepHome && user != "", Terminal: terminal}, line)
	if errors.Is(err, errProbeGone) {
		// The probe died under the step (the kernel killed it, or the pod
		// went): every process in the container went with it.
		return runner.ExecResult{ExitCode: 137}, nil
	}
	if err != nil {
		return runner.ExecResult{}, err
	}
	return runner.ExecResult{ExitCode: l.Code}, nil
}

// quick asks for a probe answer that needs no step, bounded in time.
func (c *probeConn) quick(op string, wait time.Duration) (workload.ProbeLine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return c.ask(ctx, workload.Command{Op: op}, nil)
}

// kill tells the probe to kill every process and end.
func (c *probeConn) kill() error {
	msg, _ := json.Marshal(workload.Command{Op: workload.OpKill, End: "kill"})
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(append(msg, '\n'))
	return err
}

// gone says whether the probe's stream has ended.
func (c *probeConn) gone() bool {
	select {
	case <-c.ended:
		return true
	default:
		return false
	}
}

func (c *probeConn) close() {
	c.stdin.Close()
}
