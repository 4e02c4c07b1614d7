package workload

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The replay terminal: a shell in a pseudo-terminal that a recorded
// agent's keystrokes are typed into, one step per action, as its harness
// typed them into a tmux pane. The task's image need not have tmux: this
// static program holds the pty itself, so every image replays alike and
// nothing is installed in the container (a tmux install would itself use
// memory and the network the ratio is about).
//
//	hr-workload term start --dir D         start the terminal (a server holding the pty and the shell) and return
//	hr-workload term keys --dir D --wait 5s --think 2s [--until-idle] -- KEY...
//	                                       type KEYs (tmux key names or literal text), show the output for wait+think
//	hr-workload term exec --think 2s -- ARGV...  run ARGV (a shell tool's command), then wait think; its exit status
//
// keys exits 0 when the keys were typed, TermGone when the terminal's
// server is not there (killed) and TermShellExited when its shell has
// ended. Its own notes are lines starting with TermNote on stderr.

// TermMode is the argument that makes the binary the replay terminal.
const TermMode = "term"

// Exit statuses of `term keys`.
const (
	TermGone        = 4
	TermShellExited = 5
)

// TermNote starts the lines `term keys` writes about the terminal itself
// (not the shell's output), so a comparison can leave them out.
const TermNote = "hr-term:"

// TermSize is the pane's size: Harbor's terminus sessions are 160x40.
var TermSize = unix.Winsize{Row: 40, Col: 160}

// termKeep is how much of the pane's output the server keeps unread.
const termKeep = 4 << 20

func term(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: hr-workload term start|serve|keys|exec ...")
		return 2
	}
	switch args[0] {
	case "start":
		return termStart(args[1:], stdout, stderr)
	case "serve":
		return termServe(args[1:], stderr)
	case "keys":
		return termKeys(args[1:], stdout, stderr)
	case "exec":
		return termExec(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "hr-workload term: unknown command %q\n", args[0])
	return 2
}

func termSocket(dir string) string { return filepath.Join(dir, "term.sock") }

// termStart starts the server in a session of its own (it outlives the
// step, and the step driver's or exec's end does not reach it) and
// returns once it listens, or says why it could not.
func termStart(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("term start", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "/tmp/.headroom-term", "directory of the terminal's socket")
	shell := fs.String("shell", "", "the shell to run (default: bash --login, or sh -l without bash)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintf(stderr, "hr-workload term: %v\n", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload term: %v\n", err)
		return 1
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload term: %v\n", err)
		return 1
	}
	defer r.Close()
	cmd := exec.Command(self, TermMode, "serve", "--dir", *dir, "--shell", *shell)
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		fmt.Fprintf(stderr, "hr-workload term: start the terminal: %v\n", err)
		return 1
	}
	w.Close()
	_ = r.SetReadDeadline(time.Now().Add(30 * time.Second))
	said, err := bufio.NewReader(r).ReadString('\n')
	line := strings.TrimSpace(said)
	if !strings.HasPrefix(line, "ready ") {
		if line == "" && err != nil {
			line = err.Error()
		}
		fmt.Fprintf(stderr, "hr-workload term: the terminal did not start: %s\n", line)
		return 1
	}
	fmt.Fprintf(stdout, "terminal: %s in a %dx%d pty, served by pid %d\n", strings.TrimPrefix(line, "ready "), TermSize.Col, TermSize.Row, cmd.Process.Pid)
	_ = cmd.Process.Release()
	return 0
}

// openPTY opens a pseudo-terminal pair sized TermSize.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock the pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("name the pty: %w", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open the pty's terminal: %w", err)
	}
	ws := TermSize
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &ws); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("size the pty: %w", err)
	}
	return master, slave, nil
}

// termShell is the shell a terminal runs: what a tmux pane runs in the
// images terminal agents meet (bash, as a login shell), else sh.
func termShell(named string) []string {
	if named != "" {
		return strings.Fields(named)
	}
	if _, err := os.Stat("/bin/bash"); err == nil {
		return []string{"/bin/bash", "--login"}
	}
	return []string{"/bin/sh", "-l"}
}

// pane is the server's state: the shell's output so far and its end.
type pane struct {
	mu      sync.Mutex
	out     []byte
	base    int64 // bytes dropped before out[0]
	more    chan struct{}
	ended   bool
	exitMsg string
	master  *os.File
	shell   int
	// served is where the last answer ended: the next one starts
	// there, so output between two actions is shown with the second.
	served int64
}

// since is the output after offset off and the new offset.
func (p *pane) since(off int64) ([]byte, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	end := p.base + int64(len(p.out))
	if off < p.base {
		off = p.base
	}
	return append([]byte(nil), p.out[off-p.base:]...), end
}

func (p *pane) notify() {
	select {
	case p.more <- struct{}{}:
	default:
	}
}

func (p *pane) read() {
	buf := make([]byte, 32<<10)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.out = append(p.out, buf[:n]...)
			if len(p.out) > termKeep {
				drop := len(p.out) - termKeep
				p.out = append([]byte(nil), p.out[drop:]...)
				p.base += int64(drop)
			}
			p.mu.Unlock()
			p.notify()
		}
		if err != nil {
			return
		}
	}
}

// running is the foreground job's command name ("" when the shell has
// its prompt, or has ended).
func (p *pane) running() string {
	p.mu.Lock()
	ended := p.ended
	p.mu.Unlock()
	if ended {
		return ""
	}
	fg, err := unix.IoctlGetInt(int(p.master.Fd()), unix.TIOCGPGRP)
	if err != nil || fg == p.shell {
		return ""
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", fg))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(comm))
}

// shellRead is how many bytes process pid has read (rchar of its
// /proc io), -1 where that cannot be read.
func shellRead(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar:"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// consumed says the shell has read the n bytes typed since it had read
// from in all, sleeps, and has no child: it took the line, ran it (a
// builtin, or a command it has reaped) and waits for more. False where
// any of it cannot be read (the caller then waits as before): a key the
// terminal acts on itself (C-c, an erase in a canonical shell) is never
// read, and a shell asleep with a child may be waiting on it before the
// child has taken the terminal.
func (p *pane) consumed(from, n int64) bool {
	if from < 0 || n <= 0 {
		return false
	}
	if r := shellRead(p.shell); r < from+n {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.shell))
	if err != nil {
		return false
	}
	// The state follows the command's name in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || i+2 >= len(stat) || stat[i+2] != 'S' {
		return false
	}
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p.shell, p.shell))
	return err == nil && strings.TrimSpace(string(children)) == ""
}

// termQuiet is how long the terminal stays quiet, once the shell is back
// at its prompt, before an action's output is taken as whole: a pty
// hands a write to its reader within a millisecond or so, and the
// harness's own tmux wait costs more than this.
const termQuiet = 20 * time.Millisecond

// termRequest is one action for the server.
type termRequest struct {
	Keys      []string      `json:"keys"`
	Wait      time.Duration `json:"wait"`
	Think     time.Duration `json:"think"`
	UntilIdle bool          `json:"until_idle,omitempty"`
}

// termReply is one line of the server's answer: output, or the end.
type termReply struct {
	Out     string `json:"out,omitempty"`
	Done    bool   `json:"done,omitempty"`
	Running string `json:"running,omitempty"`
	Exited  string `json:"exited,omitempty"`
}

func termServe(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("term serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "/tmp/.headroom-term", "directory of the terminal's socket")
	shell := fs.String("shell", "", "the shell to run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// The start's pipe: not the shell's to hold open.
	syscall.CloseOnExec(3)
	ready := os.NewFile(3, "ready")
	fail := func(err error) int {
		if ready != nil {
			fmt.Fprintf(ready, "%v\n", err)
			ready.Close()
		}
		return 1
	}
	master, slave, err := openPTY()
	if err != nil {
		return fail(err)
	}
	argv := termShell(*shell)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append(os.Environ(), "TERM=xterm")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start %s: %w", argv[0], err))
	}
	slave.Close()
	sock := termSocket(*dir)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		_ = cmd.Process.Kill()
		return fail(fmt.Errorf("listen on %s: %w", sock, err))
	}
	p := &pane{more: make(chan struct{}, 1), master: master, shell: cmd.Process.Pid}
	go p.read()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.ended = true
		p.exitMsg = "exit status 0"
		if err != nil {
			p.exitMsg = err.Error()
		}
		p.mu.Unlock()
		p.notify()
	}()
	fmt.Fprintf(ready, "ready %s (pid %d)\n", strings.Join(argv, " "), cmd.Process.Pid)
	ready.Close()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return 1
		}
		p.serve(conn)
	}
}

// serve types one request's keys and streams the output that follows
// for its wait (and, with UntilIdle, until the shell has its prompt
// again) and then its think time.
func (p *pane) serve(conn net.Conn) {
	defer conn.Close()
	var req termRequest
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&req); err != nil {
		return
	}
	enc := json.NewEncoder(conn)
	off := p.served
	defer func() { p.served = off }()
	read0, typed := shellRead(p.shell), int64(0)
	for _, k := range req.Keys {
		n, err := p.master.Write([]byte(TmuxKey(k)))
		typed += int64(n)
		if err != nil {
			break
		}
	}
	flush := func() bool {
		var b []byte
		b, off = p.since(off)
		return len(b) == 0 || enc.Encode(termReply{Out: string(b)}) == nil
	}
	stream := func(until time.Time, idle bool) {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		// A command just typed may not have left the shell yet: its
		// prompt counts once the command was seen running, once the
		// shell has read every byte typed and waits for more (consumed:
		// a builtin, or a command quicker than a tick), or after a
		// second. Without consumed, every quick blocking command took a
		// second: 150 `true`s replayed ran past a 2-minute limit that
		// their 9 s recording kept (the thirty-second attacker's 1).
		sawBusy, from := false, time.Now()
		for {
			if !flush() {
				return
			}
			p.mu.Lock()
			ended := p.ended
			p.mu.Unlock()
			prompt := false
			if idle {
				prompt = p.running() == ""
				sawBusy = sawBusy || !prompt
				prompt = prompt && (sawBusy || time.Since(from) > time.Second || p.consumed(read0, typed))
				until = time.Now().Add(time.Hour)
			}
			if prompt {
				// The shell is back at its prompt: what it wrote last
				// (the command's output, the prompt) may not have been
				// read off the terminal yet (a pty hands it over a
				// moment later). It is drained until the terminal has
				// been quiet for termQuiet (at most a second), so that
				// it is this action's and not the next one's: the
				// review's 5, which the second's floor had hidden (the
				// host terminal test read "# echo hi-2" without its
				// answer, 3 times in 15).
				quiet, most := time.NewTimer(termQuiet), time.Now().Add(time.Second)
				for drained := false; !drained; {
					select {
					case <-p.more:
						flush()
						if time.Now().Before(most) {
							quiet.Reset(termQuiet)
						}
					case <-quiet.C:
						drained = true
					}
				}
				flush()
				return
			}
			if ended || (!idle && !time.Now().Before(until)) {
				return
			}
			timer := time.NewTimer(time.Until(until))
			select {
			case <-p.more:
			case <-timer.C:
			case <-tick.C:
			}
			timer.Stop()
		}
	}
	stream(time.Now().Add(req.Wait), false)
	if req.UntilIdle {
		stream(time.Time{}, true)
	}
	stream(time.Now().Add(req.Think), false)
	p.mu.Lock()
	exited := ""
	if p.ended {
		exited = p.exitMsg
	}
	p.mu.Unlock()
	_ = enc.Encode(termReply{Done: true, Running: p.running(), Exited: exited})
}

// tmuxKeys are the key names tmux's send-keys takes, as the bytes a
// terminal sends for them.
var tmuxKeys = map[string]string{
	"Enter": "\r", "KPEnter": "\r", "Tab": "\t", "BTab": "\x1b[Z", "Escape": "\x1b", "Space": " ",
	"BSpace": "\x7f", "Up": "\x1b[A", "Down": "\x1b[B", "Right": "\x1b[C", "Left": "\x1b[D",
	"Home": "\x1b[H", "End": "\x1b[F", "DC": "\x1b[3~", "IC": "\x1b[2~",
	"PageUp": "\x1b[5~", "PPage": "\x1b[5~", "PgUp": "\x1b[5~", "PageDown": "\x1b[6~", "NPage": "\x1b[6~", "PgDn": "\x1b[6~",
}

// TmuxKey is what tmux's send-keys types for one argument: a key name
// (Enter, C-c, ^D, M-x, Up) as that key, anything else as literal text.
func TmuxKey(k string) string {
	if s, ok := tmuxKeys[k]; ok {
		return s
	}
	ctrl := func(c byte) (string, bool) {
		switch {
		case c >= 'a' && c <= 'z':
			return string(rune(c - 'a' + 1)), true
		case c >= 'A' && c <= 'Z':
			return string(rune(c - 'A' + 1)), true
		case c == '@' || c == ' ':
			return "\x00", true
		case c >= '[' && c <= '_':
			return string(rune(c - '@')), true
		case c == '?':
			return "\x7f", true
		}
		return "", false
	}
	switch {
	case len(k) == 3 && (k[:2] == "C-" || k[:2] == "c-"):
		if s, ok := ctrl(k[2]); ok {
			return s
		}
	case len(k) == 2 && k[0] == '^':
		if s, ok := ctrl(k[1]); ok {
			return s
		}
	case len(k) > 2 && k[:2] == "M-":
		rest := k[2:]
		if s, ok := tmuxKeys[rest]; ok {
			return "\x1b" + s
		}
		if len(rest) == 1 || (len(rest) == 3 && rest[:2] == "C-") {
			return "\x1b" + TmuxKey(rest)
		}
	}
	return k
}

func termKeys(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("term keys", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "/tmp/.headroom-term", "directory of the terminal's socket")
	var req termRequest
	fs.DurationVar(&req.Wait, "wait", 0, "how long the harness waited after the keys (terminus' duration)")
	fs.DurationVar(&req.Think, "think", 0, "the agent's think time before its next action")
	fs.BoolVar(&req.UntilIdle, "until-idle", false, "wait, after wait, until the shell has its prompt again (a blocking command)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	req.Keys = fs.Args()
	conn, err := net.Dial("unix", termSocket(*dir))
	if err != nil {
		fmt.Fprintf(stderr, "%s the terminal is gone (its server does not answer: %v)\n", TermNote, errors.Unwrap(err))
		return TermGone
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		fmt.Fprintf(stderr, "%s the terminal is gone: %v\n", TermNote, err)
		return TermGone
	}
	clean := &termCleaner{w: stdout}
	dec := json.NewDecoder(bufio.NewReader(conn))
	for {
		var r termReply
		if err := dec.Decode(&r); err != nil {
			clean.flush()
			fmt.Fprintf(stderr, "%s the terminal is gone mid-action: %v\n", TermNote, err)
			return TermGone
		}
		if !r.Done {
			clean.write(r.Out)
			continue
		}
		clean.flush()
		switch {
		case r.Exited != "":
			fmt.Fprintf(stderr, "%s the terminal's shell has ended (%s)\n", TermNote, r.Exited)
			return TermShellExited
		case r.Running != "":
			fmt.Fprintf(stderr, "%s still running: %s\n", TermNote, r.Running)
		}
		return 0
	}
}

// termExec runs a shell tool's command as the agent's tool ran it (its
// own process, its exit status), then waits the agent's think time.
func termExec(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("term exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	think := fs.Duration("think", 0, "the agent's think time before its next action")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: hr-workload term exec --think D -- ARGV...")
		return 2
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			fmt.Fprintf(stderr, "%s %v\n", TermNote, err)
			return 127
		}
		code = exit.ExitCode()
		if code < 0 {
			code = 128 + int(exit.Sys().(syscall.WaitStatus).Signal())
		}
	}
	time.Sleep(*think) // the agent's recorded think time, not a synchronisation
	return code
}

// termCleaner writes a terminal's output as lines of text: escape
// sequences dropped, a line rewritten with carriage returns (a progress
// bar) kept as it was last drawn.
type termCleaner struct {
	w       io.Writer
	pending string
}

func (c *termCleaner) write(s string) {
	c.pending += s
	i := strings.LastIndexByte(c.pending, '\n')
	if i < 0 {
		return
	}
	fmt.Fprint(c.w, CleanTerminal(c.pending[:i+1]))
	c.pending = c.pending[i+1:]
}

func (c *termCleaner) flush() {
	if c.pending != "" {
		fmt.Fprintln(c.w, CleanTerminal(c.pending))
		c.pending = ""
	}
}

// CleanTerminal is a terminal's output as the text a reader sees: escape
// sequences (colours, cursor moves, titles) dropped, backspaces applied,
// each line as last drawn after carriage returns, no other control bytes.
func CleanTerminal(s string) string {
	var b strings.Builder
	lines := strings.SplitAfter(s, "\n")
	for _, line := range lines {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimRight(line, "\r\n")
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			// The last drawing that is not empty: "\r" before a
			// redraw, or a trailing "\r" that only moved the cursor.
			parts := strings.Split(line, "\r")
			line = ""
			for j := len(parts) - 1; j >= 0; j-- {
				if stripEscapes(parts[j]) != "" {
					line = parts[j]
					break
				}
			}
		}
		b.WriteString(stripEscapes(line))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// stripEscapes drops escape sequences and control bytes but tabs, and
// applies backspaces.
func stripEscapes(s string) string {
	out := make([]rune, 0, len(s))
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			i += 2
			for i < len(rs) && (rs[i] < 0x40 || rs[i] > 0x7e) {
				i++
			}
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == ']':
			i += 2
			for i < len(rs) && rs[i] != 0x07 && !(rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '\\') {
				i++
			}
			if i < len(rs) && rs[i] == 0x1b {
				i++
			}
		case r == 0x1b:
			i++ // a two-byte sequence (ESC =, ESC >, ESC 7...)
		case r == '\b':
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case r == '\t' || r >= 0x20 && r != 0x7f:
			out = append(out, r)
		}
	}
	return string(out)
}
