package model

import (
	"fmt"
	"strings"
)

// HeadroomLinePrefix starts every line of a trial's log that is
// headroom's own (a step's start and end, an OOM kill, a cut).
const HeadroomLinePrefix = "==>"

// TaskLineMark starts a line of a task's standard output that would
// otherwise read as headroom's own: one that begins with "==>" is
// written "| ==> …". A line of its standard error starts "! " as ever.
const TaskLineMark = "| "

// LogOutputLine is one line a task printed as a trial's log shows it
// (log.txt, the console's log): its standard error after "! ", a
// standard-output line that begins as headroom's own lines do after
// TaskLineMark, and control characters other than a tab written as
// escapes ("\r", "\x1b"), so that no carriage return or terminal
// sequence can redraw a line as one of headroom's on a reader's
// terminal. Without its newline.
func LogOutputLine(stream, text string) string {
	text = escapeControls(text)
	switch {
	case stream == "stderr":
		return "! " + text
	case strings.HasPrefix(text, HeadroomLinePrefix):
		return TaskLineMark + text
	}
	return text
}

func escapeControls(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\n':
			b.WriteString(`\n`)
		case (c < 0x20 && c != '\t') || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// A trial's log.txt keeps, of each step's output, its first
// LogStepHeadBytes and its last LogStepTailBytes (at most LogStepTailLines
// lines), with a line saying what was left out between them. The runner
// sends a step's output past its head as it comes only while it comes
// slowly, and its tail when the step ends: a step printing 50 million
// short lines costs headroom a few seconds, not a minute charged to the
// task's timeout (the sixteenth attacker's 1).
const (
	LogStepHeadBytes = 1 << 20
	LogStepTailBytes = 1 << 20
	LogStepTailLines = 1 << 16
)
