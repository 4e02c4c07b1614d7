package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// A step printing millions of lines sends its head as it comes, then
// only a live line now and then, and its tail when it ends: the events
// are bounded whatever it prints, the head and the tail are in order,
// and what was never sent is counted on the tail's first line (the
// sixteenth attacker's 1: an event a line made 50 million lines of `yes`
// cost 73 s, the task's timeout).
func TestFastOutputIsSentAsItsHeadAndTail(t *testing.T) {
	tr, evs := newTestTrial()
	o := &openStep{sr: model.StepResult{Name: "yes"}}
	const lines = 3_000_000
	line := func(i int) string { return fmt.Sprintf("%07d", i) } // 8 bytes a line with its newline
	for i := range lines {
		tr.emitOutput(o, "stdout", line(i))
	}
	tr.flushOutput(o)
	var sent []string
	live, skipped := 0, 0
	var skippedB int64
	for _, e := range *evs {
		ol := e.(event.OutputLine)
		if ol.Live {
			live++
			continue
		}
		skipped += ol.Skipped
		skippedB += ol.SkippedBytes
		sent = append(sent, ol.Text)
	}
	head := int(model.LogStepHeadBytes / 8)
	if len(sent)+skipped != lines || skippedB != int64(skipped)*8 {
		t.Fatalf("%d sent and %d skipped (%d bytes), want %d in all, 8 bytes each", len(sent), skipped, skippedB, lines)
	}
	if len(sent) > head+model.LogStepTailLines+outputTickLines*int(time.Second/outputTick)*5 {
		t.Errorf("%d lines sent of %d, want about the head's %d and the tail's %d", len(sent), lines, head, model.LogStepTailLines)
	}
	for i := range head {
		if sent[i] != line(i) {
			t.Fatalf("head line %d is %q, want %q", i, sent[i], line(i))
		}
	}
	for i := range model.LogStepTailLines {
		if got, want := sent[len(sent)-1-i], line(lines-1-i); got != want {
			t.Fatalf("tail line %d from the end is %q, want %q", i, got, want)
		}
	}
	t.Logf("%d lines: %d sent, %d live, %d skipped", lines, len(sent), live, skipped)
}

// A step printing slowly past its head still has every line sent within
// outputTick, in order, none skipped.
func TestSlowOutputPastItsHeadIsAllSent(t *testing.T) {
	tr, evs := newTestTrial()
	o := &openStep{sr: model.StepResult{Name: "log"}}
	o.sent.bytes = model.LogStepHeadBytes // past its head
	o.sent.tick = time.Now().Add(-time.Second)
	tr.emitOutput(o, "stdout", "first")
	if len(*evs) != 1 || (*evs)[0].(event.OutputLine).Text != "first" || (*evs)[0].(event.OutputLine).Live {
		t.Fatalf("a line past the head after a quiet second: %+v, want it sent", *evs)
	}
	tr.emitOutput(o, "stderr", "second") // within the tick: held
	tr.flushOutput(o)
	if len(*evs) != 2 || (*evs)[1].(event.OutputLine).Text != "second" || (*evs)[1].(event.OutputLine).Skipped != 0 {
		t.Errorf("the held line at the step's end: %+v", *evs)
	}
}
