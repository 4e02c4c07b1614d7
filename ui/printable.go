package ui

import (
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/printable"
)

// printableEvent is e with every string a task could have put in it (its
// name, what it printed, its processes' commands, the kernel's name for
// what it killed, a record someone edited) made printable before the
// console keeps it; the frequent events by hand, the rest by
// printable.Value. The log file keeps what came.
func printableEvent(e event.Event) event.Event {
	switch x := e.(type) {
	case event.MemorySample:
		return e
	case event.OutputLine:
		if printable.Is(x.Text) && printable.Is(x.Step) {
			return e // the usual line: not copied
		}
		x.Text, x.Step = printable.Line(x.Text), printable.Line(x.Step)
		return x
	}
	return printable.Value(e)
}
