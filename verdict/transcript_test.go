package verdict

import (
	"fmt"
	"strings"
	"testing"
)

// rows is n lines made with format from 0, 1, ….
func rows(format string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format+"\n", i)
	}
	return b.String()
}

// drawn is a Transcript of out, a line at a time as runner hands it over.
func drawn(out string) *Transcript {
	tr := &Transcript{}
	lines := strings.Split(out, "\n")
	for _, l := range lines[:len(lines)-1] {
		tr.Add(l)
	}
	return tr
}

// Each want is what tmux 3.3a printed (checked on 2026-12-06) for `tmux
// capture-pane -p -S -` of a fresh 160x40 pane (tmux new-session -d -x
// 160 -y 40, its default 2,000 rows of history) after the pane's command
// wrote a newline (the row of terminal-bench's prompt) and then the
// case's bytes, through the tty (a newline a carriage return and a line
// feed); blank rows at the end are left out.
func TestTranscriptIsWhatTmuxCaptures(t *testing.T) {
	const head = "=========================== short test summary info ============================"
	for _, c := range []struct{ name, out, want string }{
		{"combining marks: at most 21 bytes a cell, the rest dropped (10 two-byte marks after an e; 10 on the empty cell at row 0, as a space)",
			"e" + strings.Repeat("\u0301", 20) + "|\n" + "x\x1b[1;2H" + strings.Repeat("\u0301", 2000) + "\n",
			" \u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\ne\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301|\nx"},
		{"11 marks after an a keep 10, 10 after a wide character keep 9",
			"a\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030a\u030b|\n" + "界" + strings.Repeat("\u0301", 10) + "|\n",
			"\na\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030a|\n\u754c\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301|"},
		{"ESC[2J: the rows down to the last drawn on go into the history, the cursor stays (the tester's case a: test_b FAILED is still read)",
			head + "\nFAILED tests/test_outputs.py::test_b - assert False\n\x1b[2J" + head + "\nPASSED tests/test_outputs.py::test_a\n",
			"\n=========================== short test summary info ============================\nFAILED tests/test_outputs.py::test_b - assert False\n\n\n\n=========================== short test summary info ============================\nPASSED tests/test_outputs.py::test_a"},
		{"ESC[2J, then more output (the tester's case b: the summary is still read)",
			head + "\nPASSED test_hello\n\x1b[2Jcleanup done\n",
			"\n=========================== short test summary info ============================\nPASSED test_hello\n\n\n\ncleanup done"},
		{"ESC[2J with the cursor moved up: every row down to the last drawn on goes",
			rows("line%d", 50) + "\x1b[5;3H\x1b[2Jafter\n",
			"\nline0\nline1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\nline11\nline12\nline13\nline14\nline15\nline16\nline17\nline18\nline19\nline20\nline21\nline22\nline23\nline24\nline25\nline26\nline27\nline28\nline29\nline30\nline31\nline32\nline33\nline34\nline35\nline36\nline37\nline38\nline39\nline40\nline41\nline42\nline43\nline44\nline45\nline46\nline47\nline48\nline49\n\n\n\n\n  after"},
		{"ESC[2J on a blank screen keeps nothing",
			"\x1b[2J\x1b[2Jafter\n",
			"\nafter"},
		{"a second ESC[2J keeps nothing more",
			rows("l%d", 5) + "\x1b[3;1H\x1b[2J\x1b[2Jafter\n",
			"\nl0\nl1\nl2\nl3\nl4\n\n\nafter"},
		{"ESC[3J clears the history",
			rows("row%d", 60) + "\x1b[3Jx\n",
			"row21\nrow22\nrow23\nrow24\nrow25\nrow26\nrow27\nrow28\nrow29\nrow30\nrow31\nrow32\nrow33\nrow34\nrow35\nrow36\nrow37\nrow38\nrow39\nrow40\nrow41\nrow42\nrow43\nrow44\nrow45\nrow46\nrow47\nrow48\nrow49\nrow50\nrow51\nrow52\nrow53\nrow54\nrow55\nrow56\nrow57\nrow58\nrow59\nx"},
		{"in the alternate screen a capture is the history and the alternate screen (blank, the cursor where it was)",
			rows("norm%d", 50) + "\x1b[?1049hALT1\nALT2\n",
			"\nnorm0\nnorm1\nnorm2\nnorm3\nnorm4\nnorm5\nnorm6\nnorm7\nnorm8\nnorm9\nnorm10\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nALT1\nALT2"},
		{"leaving ?1049: the normal screen back, the cursor where ?1049h found it; the alternate screen's scrolled rows kept nowhere",
			rows("norm%d", 50) + "\x1b[?1049hALT1\nALT2\n" + rows("alt%d", 45) + "\x1b[?1049lback\n",
			"\nnorm0\nnorm1\nnorm2\nnorm3\nnorm4\nnorm5\nnorm6\nnorm7\nnorm8\nnorm9\nnorm10\nnorm11\nnorm12\nnorm13\nnorm14\nnorm15\nnorm16\nnorm17\nnorm18\nnorm19\nnorm20\nnorm21\nnorm22\nnorm23\nnorm24\nnorm25\nnorm26\nnorm27\nnorm28\nnorm29\nnorm30\nnorm31\nnorm32\nnorm33\nnorm34\nnorm35\nnorm36\nnorm37\nnorm38\nnorm39\nnorm40\nnorm41\nnorm42\nnorm43\nnorm44\nnorm45\nnorm46\nnorm47\nnorm48\nnorm49\nback"},
		{"?47 keeps the cursor where it is",
			rows("norm%d", 5) + "\x1b[?47hALT1\nALT2\n\x1b[?47lback\n",
			"\nnorm0\nnorm1\nnorm2\nnorm3\nnorm4\n\n\nback"},
		{"?1047 as ?47",
			rows("norm%d", 5) + "\x1b[?1047hALT1\nALT2\n\x1b[?1047lback\n",
			"\nnorm0\nnorm1\nnorm2\nnorm3\nnorm4\n\n\nback"},
		{"in ?47 the screen is blank",
			rows("norm%d", 5) + "\x1b[?47hALT1\nALT2\n",
			"\n\n\n\n\n\nALT1\nALT2"},
		{"a second ?1049h changes nothing; a second ?1049l puts the cursor back again",
			rows("norm%d", 5) + "\x1b[?1049h\x1b[?1049hA\n\x1b[?1049lB\n\x1b[?1049lC\n",
			"\nnorm0\nnorm1\nnorm2\nnorm3\nnorm4\nC"},
		{"ESC[0J: the cursor's cell to the screen's end",
			rows("row%[1]drow%[1]drow%[1]drow%[1]drow%[1]d", 10) + "\x1b[4;6H\x1b[0Jz\n",
			"\nrow0row0row0row0row0\nrow1row1row1row1row1\nrow2rz"},
		{"ESC[1J: the screen's start to the cursor's cell",
			rows("row%[1]drow%[1]drow%[1]drow%[1]drow%[1]d", 10) + "\x1b[4;6H\x1b[1Jz\n",
			"\n\n\n     zw2row2row2row2\nrow3row3row3row3row3\nrow4row4row4row4row4\nrow5row5row5row5row5\nrow6row6row6row6row6\nrow7row7row7row7row7\nrow8row8row8row8row8\nrow9row9row9row9row9"},
		{"ESC[J leaves the history",
			rows("row%[1]drow%[1]drow%[1]drow%[1]drow%[1]d", 60) + "\x1b[4;6H\x1b[Jz\n",
			"\nrow0row0row0row0row0\nrow1row1row1row1row1\nrow2row2row2row2row2\nrow3row3row3row3row3\nrow4row4row4row4row4\nrow5row5row5row5row5\nrow6row6row6row6row6\nrow7row7row7row7row7\nrow8row8row8row8row8\nrow9row9row9row9row9\nrow10row10row10row10row10\nrow11row11row11row11row11\nrow12row12row12row12row12\nrow13row13row13row13row13\nrow14row14row14row14row14\nrow15row15row15row15row15\nrow16row16row16row16row16\nrow17row17row17row17row17\nrow18row18row18row18row18\nrow19row19row19row19row19\nrow20row20row20row20row20\nrow21row21row21row21row21\nrow22row22row22row22row22\nrow23row23row23row23row23\nrow24z"},
		{"ESC[2M deletes two rows, the cursor's column stays",
			rows("row%d", 10) + "\x1b[3;4H\x1b[2Mz\n",
			"\nrow0\nrowz\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9"},
		{"ESC[99M deletes to the bottom",
			rows("row%d", 10) + "\x1b[3;4H\x1b[99Mz\n",
			"\nrow0\n   z"},
		{"ESC[2L inserts two blank rows",
			rows("row%d", 10) + "\x1b[3;4H\x1b[2Lz\n",
			"\nrow0\n   z\n\nrow1\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9"},
		{"ESC[K, ESC[1K, ESC[2K",
			strings.Repeat("abcdefghij\n", 3) + "\x1b[2;4H\x1b[Kz\x1b[3;4H\x1b[1Ky\x1b[4;4H\x1b[2Kx\n",
			"\nabcz\n   yefghij\n   x"},
		{"ESC[2P, ESC[2@, ESC[2X",
			strings.Repeat("abcdefghij\n", 3) + "\x1b[2;4H\x1b[2P\x1b[3;4H\x1b[2@\x1b[4;4H\x1b[2X\n",
			"\nabcfghij\nabc  defghij\nabc  fghij"},
		{"ESC[3S scrolls the top rows into the history, ESC[2T scrolls down",
			rows("row%d", 10) + "\x1b[3S\x1b[2Tx\n",
			"\nrow0\nrow1\n\n\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\n\nx"},
		{"ESC M at the top row scrolls the screen down",
			rows("row%d", 10) + "\x1b[1;1H\x1bMtop\n",
			"top\n\nrow0\nrow1\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9"},
		{"a number past INT_MAX makes tmux ignore the sequence",
			"abcdef\u001b[65535Dz\nabcdef\u001b[65536Dz\nabcdef\u001b[2147483647Dz\nabcdef\u001b[2147483648Dz\n",
			"\nzbcdef\nzbcdef\nzbcdef\nabcdefz"},
		{"ESC[P past the row's end (a wrap to come) does nothing",
			strings.Repeat("c", 160) + "\x1b[Pz\n",
			"\ncccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\nz"},
		{"ESC[@ there neither",
			strings.Repeat("c", 160) + "\x1b[@z\n",
			"\ncccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\nz"},
		{"ESC[X there neither",
			strings.Repeat("c", 160) + "\x1b[Xz\n",
			"\ncccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\nz"},
		{"ESC[J there clears from the next row",
			strings.Repeat("c", 160) + "\x1b[Jz\n",
			"\ncccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\nz"},
		{"ESC[K and ESC[1K there",
			strings.Repeat("a", 160) + "\x1b[K\n" + strings.Repeat("b", 160) + "\x1b[1K\n",
			"\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{"a mark after a wide character at the row's end",
			strings.Repeat("a", 159) + "界\u0301\n" + strings.Repeat("a", 158) + "界\u0301\u0302\n",
			"\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n\u754c\u0301\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u754c\u0301\u0302"},
		{"a row erased in part is still drawn on (tmux's cellused): ESC[2J keeps it",
			"abc\n\u001b[1;1H\u001b[2B\u001b[2Cx\u001b[1K\u001b[40;1H\u001b[2J\u001b[1;1Hafter\n",
			"\nabc\n\nafter"},
		{"a row erased whole is not",
			"abc\nxyz\u001b[2K\u001b[40;1H\u001b[A\u001b[2J\u001b[1;1Hafter\n",
			"\nabc\nafter"},
		{"a row of spaces is drawn on",
			"   \n\u001b[2Jafter\n",
			"\n\n\n\nafter"},
		{"ESC[2J on the alternate screen keeps nothing",
			"n0\nn1\nn2\nn3\nn4\n\u001b[?1049hALT\n\u001b[2Jx\u001b[?1049lback\n",
			"\nn0\nn1\nn2\nn3\nn4\nback"},
		{"?1049l before any ?1049h moves nothing",
			"abc\u001b[?1049l\u001b[?1049hdef\u001b[5;5H\u001b[?1049lghi\n",
			"\nabcghi"},
		{"ESC[@ and ESC[P on wide characters",
			"\u754c\u754c\u754c\u001b[1G\u001b[1@\n\u754c\u754c\u754c\u001b[2G\u001b[1P\n",
			"\n \u754c\u754c\u754c\n\u754c\u754c\u754c"},
		{"ESC[2;5r: a line feed at the region's bottom scrolls the region, its top row into the history",
			rows("row%d", 10) + "\u001b[2;5r\u001b[5;1H\nA\nB\n\u001b[r\u001b[20;1Hend\n",
			"row0\nrow1\nrow2\n\nrow3\nA\nB\n\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\n\n\n\n\n\n\n\n\nend"},
		{"ESC[L and ESC[M in the region move its rows only; ESC[L below it moves the screen's",
			rows("row%d", 12) + "\u001b[3;8r\u001b[5;1H\u001b[2Lx\u001b[7;1H\u001b[9Mq\u001b[10;1H\u001b[Lo\u001b[r\u001b[20;1H\n",
			"\nrow0\nrow1\nrow2\nx\n\nq\n\nrow7\no\nrow8\nrow9\nrow10\nrow11"},
		{"ESC[M outside the region moves the screen's rows",
			rows("row%d", 12) + "\u001b[3;8r\u001b[10;1H\u001b[2Mo\u001b[1;1H\u001b[Mp\u001b[r\u001b[20;1H\n",
			"pow0\nrow1\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\noow10\nrow11"},
		{"ESC M at the region's top scrolls the region down",
			rows("row%d", 12) + "\u001b[3;8r\u001b[3;1H\u001bMa\u001b[1;1H\u001bMb\u001b[r\u001b[20;1H\n",
			"b\nrow0\na\nrow1\nrow2\nrow3\nrow4\nrow5\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"ESC[A and ESC[B stop at the region's edge when they start in it",
			rows("row%d", 12) + "\u001b[3;8r\u001b[5;1H\u001b[20Bd\u001b[20Au\u001b[10;1H\u001b[20Bv\u001b[2;1H\u001b[20Aw\u001b[r\u001b[25;1H\n",
			"w\nrow0\nruw1\nrow2\nrow3\nrow4\nrow5\ndow6\nrow7\nrow8\nrow9\nrow10\nrow11\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nv"},
		{"ESC[S and ESC[T scroll the region",
			rows("row%d", 12) + "\u001b[3;8r\u001b[2S\u001b[1T\u001b[r\u001b[20;1H\n",
			"row1\nrow2\n\nrow0\n\nrow3\nrow4\nrow5\nrow6\n\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"a region of one row, or upside down, is not set",
			rows("row%d", 12) + "\u001b[5;5r\u001b[8;3r\u001b[4;1Hx\n\n\n\n\n\n\n\ny\u001b[r\u001b[20;1H\n",
			"\nrow0\nrow1\nxow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nyow10\nrow11"},
		{"a wrap at the region's bottom scrolls it",
			rows("row%d", 12) + "\u001b[3;5r\u001b[5;1Hwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww\u001b[r\u001b[20;1H\n",
			"row1\n\nrow0\nrow2\nwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww\nwwwwwwwwww\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"a line feed on the bottom row below the region does nothing",
			rows("row%d", 12) + "\u001b[3;5r\u001b[40;1Hbottom\nnext\n\u001b[r\u001b[20;1H\n",
			"\nrow0\nrow1\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nnextom"},
		{"the region holds on the alternate screen, and after it",
			rows("row%d", 12) + "\u001b[3;5r\u001b[?1049h\u001b[5;1Ha\nb\nc\n\u001b[?1049l\u001b[5;1Hz\nq\nr\n\u001b[r\u001b[20;1H\n",
			"row1\nrow2\nzow3\n\nrow0\nq\nr\n\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"ESC[2J with a region",
			rows("row%d", 12) + "\u001b[3;5r\u001b[2Jx\u001b[r\u001b[20;1H\n",
			"\nrow0\nrow1\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11\nx"},
		{"ESC[0;99r is the whole screen; ESC[3;0r sets none (0 is 1) and leaves the cursor",
			rows("row%d", 12) + "\u001b[0;99r\u001b[5;1Hx\u001b[3;0ry\n",
			"\nrow0\nrow1\nrow2\nxyw3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"ESC[3;r runs to the screen's bottom",
			rows("row%d", 12) + "\u001b[3;r\u001b[5;1Hx\u001b[0;4ry\u001b[4;1H\n\nz\u001b[r\u001b[20;1H\n",
			"y\nrow0\nrow1\nrow2\n\nz\nxow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"ESC 7 and ESC 8, ESC[s and ESC[u save and restore the cursor",
			"abc\u001b7\u001b[5;10Hx\u001b8y\n\u001b[s\u001b[7;10Hq\u001b[ur\n",
			"\nabcy\nr\n\n         x\n\n         q"},
		{"ESC 8 with none saved: the top left corner",
			rows("row%d", 12) + "\u001b8z\n",
			"z\nrow0\nrow1\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"ESC[d (row), ESC[` (column), ESC[E and ESC[F (down, up, to the row's start)",
			rows("row%d", 12) + "\u001b[5da\u001b[20`b\u001b[3Ec\u001b[2Fd\n",
			"\nrow0\nrow1\nrow2\naow3               b\ndow4\nrow5\ncow6\nrow7\nrow8\nrow9\nrow10\nrow11"},
		{"ESC[Z goes back a tab stop; ESC[I does nothing in tmux 3.3a",
			"a\tb\u001b[2Ic\u001b[Zd\u001b[3Ze\n",
			"\ne       dc"},
		{"ESC[b repeats the character before",
			"ab\u001b[5bc\n",
			"\nabbbbbbc"},
		{"only an ASCII character drawn just before: not after a sequence, a control, other UTF-8 or a mark, nor twice",
			"ab\u001b[m\u001b[3b|\ncd\r\u001b[3b|\n\u754c\u001b[2b|\n\u001b[3b|\nef\u001b7\u001b[2b|\ne\u0301\u001b[2b|\ngh\u001b[2b\u001b[2b|\n",
			"\nab|\n|d\n\u754c|\n|\nef|\ne\u0301|\nghhh|"},
		{"ESC # 8 fills the screen with E and homes the cursor",
			rows("row%d", 12) + "\u001b#8\u001b[20;1H\n",
			strings.Repeat(strings.Repeat("E", 160)+"\n", 39) + strings.Repeat("E", 160)},
		{"ESC c clears the screen as ESC[2J (its rows into the history) and homes the cursor",
			rows("row%d", 50) + "\u001bcafter\n",
			"\nrow0\nrow1\nrow2\nrow3\nrow4\nrow5\nrow6\nrow7\nrow8\nrow9\nrow10\nrow11\nrow12\nrow13\nrow14\nrow15\nrow16\nrow17\nrow18\nrow19\nrow20\nrow21\nrow22\nrow23\nrow24\nrow25\nrow26\nrow27\nrow28\nrow29\nrow30\nrow31\nrow32\nrow33\nrow34\nrow35\nrow36\nrow37\nrow38\nrow39\nrow40\nrow41\nrow42\nrow43\nrow44\nrow45\nrow46\nrow47\nrow48\nrow49\nafter"},
		{"a wide character overwritten at its start loses its second half",
			"\u754c\u001b[14Din\n",
			"\nin"},
		{"ESC[J from the top left corner clears as ESC[2J, into the history",
			"\u754c\u001b[23F\u001b[J\n",
			"\n\u754c"},
		{"not on the alternate screen",
			"ab\u001b[?1049h\u754c\u001b[H\u001b[Jx\u001b[?1049l\n",
			"\nab"},
		{"ESC[b repeats to the row's end at most, never wrapping",
			"ab\x1b[3b|\n" + strings.Repeat("z", 159) + "\x1b[16b|\n" + strings.Repeat("y", 160) + "\x1b[b|\n",
			"\nabbbb|\n" + strings.Repeat("z", 160) + "\n|\n" + strings.Repeat("y", 160) + "\n|"},
		{"ESC[2P on a blank row draws on it: ESC[2J keeps it",
			"\u001b[2P\u001b[2Jy\n",
			"\n\n\ny"},
		{"ESC[2X does not",
			"\u001b[2X\u001b[2Jy\n",
			"\ny"},
	} {
		if got := strings.TrimRight(drawn(c.out).String(), "\n"); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// ESC[2J past a full history: after 2,030 lines tmux 3.3a's capture
	// began at n199 (the history's oldest tenth let go as the screen's 39
	// rows drawn on went into it), then n2029, 39 blank rows and after.
	if got, want := strings.TrimRight(drawn(rows("n%d", 2030)+"\x1b[2Jafter\n").String(), "\n"), strings.TrimSuffix(rows("n%d", 2030), "\n")[strings.Index(rows("n%d", 2030), "n199"):]+strings.Repeat("\n", 40)+"after"; got != want {
		t.Errorf("ESC[2J past a full history: %d rows from %q, want %d from %q", strings.Count(got, "\n")+1, got[:min(len(got), 8)], strings.Count(want, "\n")+1, want[:8])
	}
	// 2,100 lines in the region ESC[2;40r: tmux 3.3a's capture kept the
	// region's top rows in the history, from line201 (a tenth let go at a
	// time), and line0 on the row above the region, homed there by ESC[r.
	var want strings.Builder
	for i := 201; i < 2100; i++ {
		if i == 2062 {
			want.WriteString("line0\n")
		}
		fmt.Fprintf(&want, "line%d\n", i)
	}
	if got := strings.TrimRight(drawn("\x1b[2;40r"+rows("line%d", 2100)+"\x1b[r\n").String(), "\n"); got != strings.TrimSuffix(want.String(), "\n") {
		t.Errorf("2,100 lines in a region: %d rows from %q, want %d from line201", strings.Count(got, "\n")+1, got[:min(len(got), 8)], strings.Count(want.String(), "\n"))
	}
	// The two verdicts ESC[2J flipped: read off tmux's capture, test_b
	// failed, and the summary before a clear is there.
	j, _ := Judge(Pytest, drawn(head+"\nFAILED tests/test_outputs.py::test_b - assert False\n\x1b[2J"+head+"\nPASSED tests/test_outputs.py::test_a\n").String())
	if j.Passed || j.Tests == nil || j.Tests.Failed != 1 {
		t.Errorf("a summary with test_b FAILED, ESC[2J, one with test_a PASSED: %+v; want test_b failed", j)
	}
	j, _ = Judge(Pytest, drawn(head+"\nPASSED tests/test_outputs.py::test_hello\n\x1b[2Jcleanup done\n").String())
	if !j.Passed {
		t.Errorf("a summary, ESC[2J, cleanup done: %+v; want passed", j)
	}
}
