package printable

import (
	"fmt"
	"strings"

	"github.com/mattn/go-runewidth"
)

// columns measures characters as a terminal draws them (East Asian
// ambiguous ones narrow, as outside a CJK locale).
var columns = &runewidth.Condition{StrictEmojiNeutral: true}

// Column is Line(s) with every character a terminal draws other than one
// column wide (a wide one: CJK, most emoji; a zero-width one: a
// combining mark) escaped too (\u65e5), so that a table padding by
// characters pads it truly. For names, which headroom refuses at load
// holding any such character (a record someone edited may still): a
// name of 21 wide characters moved its row's cells 21 columns right of
// their headers in the text report. The middle dot U+00B7 is escaped
// too: the tables put it between a row's task and agent, so an imported
// or edited record's task "x" with agent "a · b" and task "x · a" with
// agent "b" printed two rows as one label.
func Column(s string) string {
	s = Line(s)
	bad := false
	for _, r := range s {
		if columns.RuneWidth(r) != 1 || r == RowSeparator {
			bad = true
			break
		}
	}
	if !bad {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if columns.RuneWidth(r) != 1 || r == RowSeparator {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RowSeparator is the character between a row's task and agent in every
// table headroom prints ("task · agent").
const RowSeparator = '\u00b7'

// RowPart is a row label's task or agent with the row separator escaped
// (as Column escapes it), for a table that labels rows "task · agent"
// from names not made Columns first (the console's matrix of an opened
// experiment, whose records may be imported or edited).
func RowPart(s string) string {
	return strings.ReplaceAll(s, string(RowSeparator), `\u00b7`)
}
