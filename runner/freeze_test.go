package runner

import (
	"strings"
	"testing"
	"time"
)

// A span headroom did not run counts only where it overlaps the trial.
func TestFreezeWatchCountsTheOverlap(t *testing.T) {
	var w freezeWatch
	t0 := time.Unix(1000, 0)
	w.add(t0.Add(10*time.Second), t0.Add(35*time.Second))
	if got := w.during(t0, t0.Add(5*time.Second)); got != "" {
		t.Errorf("a trial before the freeze: %q", got)
	}
	if got := w.during(t0, t0.Add(20*time.Second)); !strings.Contains(got, "10s") {
		t.Errorf("a trial that ended 10 s into a 25 s freeze: %q", got)
	}
	if got := w.during(t0.Add(5*time.Second), t0.Add(60*time.Second)); !strings.Contains(got, "25s") || !strings.Contains(got, "SIGSTOP") {
		t.Errorf("a trial across the whole freeze: %q", got)
	}
}
