package runner

import (
	"testing"
	"time"
)

func TestPSITotal(t *testing.T) {
	mem := []byte("some avg10=21.61 avg60=10.18 avg300=5.34 total=90918175\nfull avg10=1.09 avg60=0.65 avg300=0.37 total=16182874\n")
	tests := []struct {
		data []byte
		kind string
		want int64
	}{
		{mem, "some", 90918175},
		{mem, "full", 16182874},
		{[]byte("some avg10=1.00 avg60=0.00 avg300=0.00 total=12"), "some", 12}, // no newline
		{[]byte("some avg10=1.00\n"), "some", 0},                                // no total
		{[]byte("garbage"), "some", 0},
		{nil, "full", 0},
	}
	for _, tt := range tests {
		if got := psiTotal(tt.data, tt.kind); got != tt.want {
			t.Errorf("psiTotal(%q, %s) = %d, want %d", tt.data, tt.kind, got, tt.want)
		}
	}
	t0 := time.Unix(0, 0)
	a := pressure{at: t0, cpuSome: 1000, memSome: 0, ok: true}
	b := pressure{at: t0.Add(2 * time.Second), cpuSome: 1000 + 1_500_000, memSome: 100_000, ok: true}
	n := noiseOver(a, b)
	if !n.PSI || n.CPUSome != 0.75 || n.MemorySome != 0.05 {
		t.Errorf("noise %+v, want CPU 75%%, memory 5%%", n)
	}
	if n := noiseOver(a, pressure{at: b.at}); n.PSI || n.CPUSome != 0 {
		t.Errorf("an unreadable end must leave no shares: %+v", n)
	}
}

// A trial at its memory limit marks every trial beside it, now or
// joining while it runs, and none after it left (the twenty-fourth
// attacker's 1).
func TestNeighbourhoodSaysWhoWasAtItsLimit(t *testing.T) {
	var n neighbourhood
	quiet := n.join()
	thrash := n.join()
	n.markAtLimit(thrash, "t0001")
	n.markAtLimit(thrash, "t0001") // once
	late := n.join()
	if most, beside := n.leave(quiet); most != 2 || beside != "t0001" {
		t.Errorf("beside it from the start: most %d, beside %q", most, beside)
	}
	if _, beside := n.leave(thrash); beside != "" {
		t.Errorf("the trial at its limit is not beside itself: %q", beside)
	}
	after := n.join()
	if _, beside := n.leave(late); beside != "t0001" {
		t.Errorf("joined while it ran: beside %q", beside)
	}
	if _, beside := n.leave(after); beside != "" {
		t.Errorf("joined after it left: beside %q", beside)
	}
	n.markAtLimit(thrash, "t0001") // gone: nothing
	if len(n.atLimit) != 0 || len(n.beside) != 0 {
		t.Errorf("a trial that left is remembered: %v %v", n.atLimit, n.beside)
	}
}
