package verdict

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// terminal-bench 1 judges a verifier by what its parser reads of the
// tests' tmux pane, not of the output's bytes: it types run-tests.sh into
// a session made by `tmux new-session -x 160 -y 40 -d -s tests \;
// set-option -t tests history-limit 50000` and parses `tmux capture-pane
// -p -S -`. The capture is the pane as a terminal drew it: colours and
// other escape sequences are gone, a carriage return let later text
// overwrite a line's start, a line longer than 160 columns is two rows,
// and only the rows the pane's history kept are there. The history limit
// set after new-session does not reach the pane new-session made (tmux
// reads it when a pane is made): that pane keeps tmux's default, 2,000
// rows above its 40, and once it is full tmux lets go of its oldest tenth
// at once. A Transcript draws the output so, and its String is that
// capture. Read as raw lines, pytest's `--color=yes` summary hid its
// FAILED lines from the parser (no result: "every one of none passed"),
// "PASSED x\rFAILED" read as a pass, and a summary 2,100 lines long was
// read where terminal-bench's pane had lost its header (the thirteenth
// attacker's 2).
const (
	PaneColumns = 160
	PaneRows    = 40
	PaneHistory = 2000
)

// cell is one column of a row: "" empty, wideTail the second column of a
// wide character, else the character (with any combining marks).
type cell = string

const wideTail = "\x00"

// Transcript is a verifier's output drawn on terminal-bench's tests pane.
// The zero value is an empty pane with its cursor on the row after the
// command line the harness typed.
type Transcript struct {
	history [][]cell
	screen  [][]cell
	x, y    int // cursor; x == PaneColumns: the next character wraps
	esc     escState
	param   []byte // a CSI sequence's parameter bytes so far
	started bool
	// Dropped counts the rows the pane's history let go.
	Dropped int
}

type escState int

const (
	escNone escState = iota
	escStart
	escCSI
	escOSC
	escOSCEnd // ESC inside an OSC: the ST's first byte
	escSkip   // one more byte of a two-byte sequence (a charset's)
)

func (t *Transcript) start() {
	if t.started {
		return
	}
	t.started = true
	t.screen = make([][]cell, PaneRows)
	for i := range t.screen {
		t.screen[i] = make([]cell, PaneColumns)
	}
	t.y = 1 // row 0: the prompt and the command typed
}

// Add draws one line of output and its newline (as the pane's tty
// writes it, a carriage return and a line feed); on a nil Transcript it
// does nothing.
func (t *Transcript) Add(line string) {
	if t == nil {
		return
	}
	t.start()
	for len(line) > 0 {
		r, n := utf8.DecodeRuneInString(line)
		t.put(r)
		line = line[n:]
	}
	t.put('\r')
	t.put('\n')
}

func (t *Transcript) put(r rune) {
	switch t.esc {
	case escStart:
		switch r {
		case '[':
			t.esc, t.param = escCSI, t.param[:0]
		case ']':
			t.esc = escOSC
		case '(', ')', '*', '+', '#', '%':
			t.esc = escSkip
		default:
			t.esc = escNone
		}
		return
	case escSkip:
		t.esc = escNone
		return
	case escCSI:
		switch {
		case r >= 0x30 && r <= 0x3f:
			if len(t.param) < 64 {
				t.param = append(t.param, byte(r))
			}
		case r >= 0x20 && r <= 0x2f:
		case r >= 0x40 && r <= 0x7e:
			t.esc = escNone
			t.csi(byte(r))
		default:
			t.esc = escNone // not a CSI sequence after all
		}
		return
	case escOSC:
		switch r {
		case 0x07:
			t.esc = escNone
		case 0x1b:
			t.esc = escOSCEnd
		}
		return
	case escOSCEnd:
		t.esc = escNone
		return
	}
	switch r {
	case 0x1b:
		t.esc = escStart
	case '\r':
		t.x = 0
	case '\n', '\v', '\f':
		t.lineFeed()
	case '\b':
		t.x = max(min(t.x, PaneColumns-1)-1, 0)
	case '\t':
		t.x = min((t.x/8+1)*8, PaneColumns-1)
	default:
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return // other controls draw nothing
		}
		t.draw(r)
	}
}

// draw puts a character at the cursor, wrapping as tmux does: a character
// that does not fit on the row goes to the start of the next.
func (t *Transcript) draw(r rune) {
	w := runewidth.RuneWidth(r)
	if w == 0 {
		// A combining mark joins the character before it.
		if x := min(t.x, PaneColumns) - 1; x >= 0 {
			row := t.screen[t.y]
			if row[x] == wideTail && x > 0 {
				x--
			}
			if row[x] != "" {
				row[x] += string(r)
			}
		}
		return
	}
	if t.x+w > PaneColumns {
		t.lineFeed()
		t.x = 0
	}
	row := t.screen[t.y]
	if row[t.x] == wideTail && t.x > 0 {
		row[t.x-1] = " " // half of a wide character overwritten
	}
	row[t.x] = string(r)
	if w == 2 {
		row[t.x+1] = wideTail
	}
	t.x += w
}

// lineFeed moves the cursor down a row, the pane's top row going into its
// history at the bottom.
func (t *Transcript) lineFeed() {
	if t.y < PaneRows-1 {
		t.y++
		return
	}
	if len(t.history) >= PaneHistory {
		// tmux frees its history's oldest tenth at once when it is full
		// (grid_collect_history).
		n := PaneHistory / 10
		t.history = append(t.history[:0], t.history[n:]...)
		t.Dropped += n
	}
	t.history = append(t.history, t.screen[0])
	copy(t.screen, t.screen[1:])
	t.screen[PaneRows-1] = make([]cell, PaneColumns)
}

// csi applies a CSI sequence's cursor moves and erasures; colours and the
// rest change nothing a capture shows.
func (t *Transcript) csi(final byte) {
	var ps []int
	for _, f := range strings.Split(string(t.param), ";") {
		n, _ := strconv.Atoi(strings.TrimLeft(f, "?>=<"))
		ps = append(ps, n)
	}
	arg := func(i, def int) int {
		if i < len(ps) && ps[i] > 0 {
			return ps[i]
		}
		return def
	}
	switch final {
	case 'A':
		t.y = max(t.y-arg(0, 1), 0)
	case 'B':
		t.y = min(t.y+arg(0, 1), PaneRows-1)
	case 'C':
		t.x = min(t.x+arg(0, 1), PaneColumns-1)
	case 'D':
		t.x = max(min(t.x, PaneColumns-1)-arg(0, 1), 0)
	case 'G':
		t.x = min(arg(0, 1), PaneColumns) - 1
	case 'H', 'f':
		t.y, t.x = min(arg(0, 1), PaneRows)-1, min(arg(1, 1), PaneColumns)-1
	case 'K':
		row, x := t.screen[t.y], min(t.x, PaneColumns)
		from, to := x, PaneColumns
		switch arg(0, 0) {
		case 1:
			from, to = 0, min(x+1, PaneColumns)
		case 2:
			from = 0
		}
		for i := from; i < to; i++ {
			row[i] = ""
		}
	case 'J':
		switch arg(0, 0) {
		case 2:
			for _, row := range t.screen {
				clear(row)
			}
		case 3:
			t.Dropped += len(t.history)
			t.history = nil
		}
	}
}

// String is the pane as `tmux capture-pane -p -S -` prints it: its
// history's rows, then its screen's, each without its trailing blanks.
func (t *Transcript) String() string {
	if t == nil || !t.started {
		return ""
	}
	var b strings.Builder
	rows := append(append([][]cell{}, t.history...), t.screen...)
	for i, row := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		end := len(row)
		for end > 0 && (row[end-1] == "" || row[end-1] == " ") {
			end--
		}
		for _, c := range row[:end] {
			switch c {
			case "":
				b.WriteByte(' ')
			case wideTail:
			default:
				b.WriteString(c)
			}
		}
	}
	return b.String()
}
