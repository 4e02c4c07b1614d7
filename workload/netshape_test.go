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

// The delay line holds at most MaxHeldFrames frames and MaxHeldBytes
// bytes: past either a frame is refused (dropped at its tail), and what
// it sends makes room again. Unbounded, a task's flood at a second's
// latency grew the helper until the kernel killed it (the twenty-third
// attacker's 1).
func TestDelayQueueIsBounded(t *testing.T) {
	q := &delayQueue{wake: make(chan struct{}, 1)}
	later := time.Now().Add(time.Hour)
	big := make([]byte, 1500)
	held := 0
	for q.push(later, big) {
		held++
	}
	if want := MaxHeldBytes / len(big); held != want || q.bytes != held*len(big) {
		t.Fatalf("held %d frames of 1500 bytes (%d bytes); want %d", held, q.bytes, want)
	}
	if q.push(later, make([]byte, MaxHeldBytes-q.bytes+1)) {
		t.Fatal("a frame one byte past the byte bound was held")
	}
	if !q.push(later, make([]byte, MaxHeldBytes-q.bytes)) {
		t.Fatal("a frame that fits the byte bound was refused")
	}
	q.mu.Lock()
	q.pop()
	q.pop()
	q.mu.Unlock()
	if !q.push(later, big) {
		t.Fatal("a frame sent made no room")
	}

	small := &delayQueue{wake: make(chan struct{}, 1)}
	n := 0
	for small.push(later, make([]byte, 1)) {
		n++
	}
	if n != MaxHeldFrames {
		t.Fatalf("held %d one-byte frames; want %d", n, MaxHeldFrames)
	}
}
