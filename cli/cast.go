package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// castRecorder is the console's terminal with a recording beside it: an
// asciicast v2 file (a header line, then one [seconds, "o", text] line
// per write), so a demo can be replayed by any asciicast player
// (asciinema play, the web player) when no live machine is at hand.
//
// It is the terminal itself to Bubble Tea (the embedded *os.File gives it
// the descriptor for the size and raw mode); only Write is its own: the
// bytes go to the terminal, then, as written, to the cast.
type castRecorder struct {
	*os.File
	mu    sync.Mutex
	cast  *os.File
	start time.Time
	now   func() time.Time
	last  float64
	held  []byte // a rune cut at a write's end, waiting for its rest
	err   error  // the cast's first write failure; the console goes on
}

// castHeader is asciicast v2's first line.
type castHeader struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// newCastRecorder creates path and writes the header: the terminal's
// size now (80×24 when it has none), the time, TERM.
func newCastRecorder(path string, tty *os.File, title string, now func() time.Time) (*castRecorder, error) {
	w, h := 80, 24
	if ws, err := unix.IoctlGetWinsize(int(tty.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 && ws.Row > 0 {
		w, h = int(ws.Col), int(ws.Row)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, usagef("--record: %v", err)
	}
	start := now()
	head, _ := json.Marshal(castHeader{Version: 2, Width: w, Height: h, Timestamp: start.Unix(), Title: title,
		Env: map[string]string{"TERM": os.Getenv("TERM"), "SHELL": os.Getenv("SHELL")}})
	if _, err := f.Write(append(head, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("--record %s: %w", path, err)
	}
	return &castRecorder{File: tty, cast: f, start: start, now: now}, nil
}

// Write writes p to the terminal and records what was written.
func (c *castRecorder) Write(p []byte) (int, error) {
	n, err := c.File.Write(p)
	c.record(p[:n])
	return n, err
}

// record appends one output event; its time always moves on, so a
// player's timeline does.
func (c *castRecorder) record(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || len(p) == 0 {
		return
	}
	data := append(c.held, p...)
	c.held = nil
	// JSON strings are UTF-8: a rune cut between two writes waits.
	if k := cutRune(data); k > 0 {
		c.held = append([]byte(nil), data[len(data)-k:]...)
		data = data[:len(data)-k]
	}
	if len(data) == 0 {
		return
	}
	c.event(string(data))
}

func (c *castRecorder) event(data string) {
	at := c.now().Sub(c.start).Seconds()
	if at <= c.last {
		at = c.last + 1e-6 // the file's resolution
	}
	c.last = at
	line, _ := json.Marshal([]any{json.Number(fmt.Sprintf("%.6f", at)), "o", data})
	if _, err := c.cast.Write(append(line, '\n')); err != nil {
		c.err = err
	}
}

// Finish writes a held partial rune (as the terminal got it) and closes
// the cast; the error is the recording's first.
func (c *castRecorder) Finish() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.held) > 0 && c.err == nil {
		c.event(string(c.held))
	}
	c.held = nil
	if err := c.cast.Close(); c.err == nil {
		c.err = err
	}
	return c.err
}

// cutRune is how many bytes at the end of b begin a rune not yet whole.
func cutRune(b []byte) int {
	for k := 1; k <= min(utf8.UTFMax-1, len(b)); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0 // ASCII: nothing open
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
