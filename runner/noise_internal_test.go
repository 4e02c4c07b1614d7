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
