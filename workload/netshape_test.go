package workload

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// The delay line's jitter is the distribution the docs state: within
// latency ± jitter, its median and mean the latency, spread over the
// range, and frames keep their order with no frame held back (each
// departs at its arrival plus the delay of that moment, and departures
// never go backwards).
func TestJitterCurveIsCentredAndKeepsOrder(t *testing.T) {
	const latency, jitter = 100 * time.Millisecond, 50 * time.Millisecond
	start := time.Unix(1000, 0)
	c := newJitterCurve(latency, jitter, start, rand.New(rand.NewPCG(1, 2)))
	var delays []time.Duration
	var sum time.Duration
	lastDepart := time.Time{}
	for i := 0; i < 400000; i++ {
		// Frames 0.5 ms apart, with quiet spells now and then.
		at := start.Add(time.Duration(i) * 500 * time.Microsecond)
		if i%50000 == 0 {
			start = start.Add(3 * time.Second)
		}
		d := c.at(at)
		if d < latency-jitter || d > latency+jitter {
			t.Fatalf("delay %s outside %s ± %s", d, latency, jitter)
		}
		depart := at.Add(d)
		if depart.Before(lastDepart) {
			t.Fatalf("frame %d departs %s before the one ahead of it", i, lastDepart.Sub(depart))
		}
		lastDepart = depart
		delays = append(delays, d)
		sum += d
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	q := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))] }
	mean := sum / time.Duration(len(delays))
	t.Logf("delays: p5 %s, p25 %s, median %s, mean %s, p75 %s, p95 %s", q(0.05), q(0.25), q(0.5), mean, q(0.75), q(0.95))
	for name, v := range map[string]time.Duration{"median": q(0.5), "mean": mean} {
		if d := v - latency; d < -2*time.Millisecond || d > 2*time.Millisecond {
			t.Errorf("%s delay %s, want the latency %s ± 2ms", name, v, latency)
		}
	}
	if q(0.05) > latency-jitter/2 || q(0.95) < latency+jitter/2 {
		t.Errorf("p5 %s, p95 %s: the delays do not spread over %s ± %s", q(0.05), q(0.95), latency, jitter)
	}
}

// Without jitter every frame gets the latency.
func TestJitterCurveWithoutJitter(t *testing.T) {
	c := newJitterCurve(30*time.Millisecond, 0, time.Unix(0, 0), rand.New(rand.NewPCG(1, 2)))
	for i := range 100 {
		if d := c.at(time.Unix(0, int64(i)*int64(time.Millisecond))); d != 30*time.Millisecond {
			t.Fatalf("delay %s, want 30ms", d)
		}
	}
}
