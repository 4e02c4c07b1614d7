package docker

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// spikeTask: a base of baseMiB with a spike of spikeMiB lasting 20 ms
// every everyMS, for durationMS.
func spikeTask(t testing.TB, baseMiB, spikeMiB, everyMS, durationMS int) model.Task {
	return parseTask(t, fmt.Sprintf(`
[task]
name = "test/spikes"
[environment]
image = "builtin"
memory = "256M"
[verifier]
workload = { duration_ms = 0 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "spikes"
  workload = { duration_ms = %d, base_mb = %d, ramp_pct = 1, spike_mb = %d, spike_len_ms = 20, spike_every_ms = %d, spike_chance = 1, spike_log = true }
`, durationMS, baseMiB, spikeMiB, everyMS))
}

// spikeCounts is, per trial, how many spikes the workload made (its
// "spike START END" lines: from when the spike's memory was all touched to
// when it was let go, on the host's clock) and how many the samples saw: by
// the kernel's mark (a sample whose interval, from the sample before, meets
// the spike and whose PeakBytes is over the threshold) and by the samples'
// instants (a sample taken during the spike whose usage is over it).
type spikeCounts struct {
	made, byUsage, byPeak, samples int
	maxPeak                        int64
}

func countSpikes(evs []event.Event, threshold int64) map[string]*spikeCounts {
	samples := map[string][]event.Sample{}
	type span struct{ from, to time.Time }
	spikes := map[string][]span{}
	for _, e := range evs {
		switch e := e.(type) {
		case event.OutputLine:
			var from, to int64
			if n, _ := fmt.Sscanf(e.Text, "spike %d %d", &from, &to); n == 2 {
				spikes[e.Trial] = append(spikes[e.Trial], span{time.Unix(0, from), time.Unix(0, to)})
			}
		case event.MemorySample:
			samples[e.Trial] = append(samples[e.Trial], e.Sample)
		}
	}
	out := map[string]*spikeCounts{}
	for trial, ss := range samples {
		c := &spikeCounts{samples: len(ss), made: len(spikes[trial])}
		out[trial] = c
		for _, s := range ss {
			c.maxPeak = max(c.maxPeak, s.PeakBytes)
		}
		for _, sp := range spikes[trial] {
			// The first sample at or after the spike's start; the mark
			// of every sample from there to the first after its end
			// covers it.
			i := sort.Search(len(ss), func(i int) bool { return !ss[i].Time.Before(sp.from) })
			seenPeak, seenUsage := false, false
			for j := i; j < len(ss); j++ {
				if ss[j].PeakBytes >= threshold {
					seenPeak = true
				}
				if !ss[j].Time.After(sp.to) && ss[j].UsageBytes >= threshold {
					seenUsage = true
				}
				if ss[j].Time.After(sp.to) {
					break
				}
			}
			if seenPeak {
				c.byPeak++
			}
			if seenUsage {
				c.byUsage++
			}
		}
	}
	return out
}

// Each sample carries the kernel's high-water mark since the sample
// before, so a 20 ms spike is in the samples whatever the sampling rate:
// sampled at 5 Hz, every spike (one per 300 ms) is in some sample's peak,
// where the samples' instants see few. Each trial records the mode it got.
func TestSamplesCarryTheKernelPeak(t *testing.T) {
	needEngine(t)
	const base, spike = 8, 16
	task := spikeTask(t, base, spike, 300, 3000)
	b := newBackend(t, Options{SampleEvery: 200 * time.Millisecond})
	results, evs := sweep(t, b, []model.Task{task}, []model.Ratio{{Uncapped: true}}, 2, context.Background(), nil)
	counts := countSpikes(evs, (base+spike*8/10)*model.MiB)
	for _, r := range results {
		if r.PeakMode != cgroup.PeakReset {
			t.Skipf("trial %s: peak mode %q: this kernel's mark cannot be reset here", r.ID, r.PeakMode)
		}
		c := counts[r.ID]
		if c == nil {
			t.Fatalf("trial %s: no samples", r.ID)
		}
		t.Logf("trial %s: %d samples; %d spikes made, seen by the samples' instants %d, by the kernel's mark %d", r.ID, c.samples, c.made, c.byUsage, c.byPeak)
		if c.made == 0 {
			t.Fatalf("trial %s: the workload made no spike", r.ID)
		}
		if c.byPeak < c.made {
			t.Errorf("trial %s: %d of %d spikes in the samples' peaks, want every one", r.ID, c.byPeak, c.made)
		}
		if c.maxPeak > r.KernelPeakBytes {
			t.Errorf("trial %s: a sample's peak %d above the trial's kernel peak %d", r.ID, c.maxPeak, r.KernelPeakBytes)
		}
	}
}

// The peak row at scale (make bench-scale): 32 trials at once sampled at
// 20 Hz, 20 ms spikes every 250 ms for 8 s; per trial the spikes seen by
// the samples' instants and by the kernel's mark carried by each sample.
func TestPeakCaptureAtScale(t *testing.T) {
	needEngine(t)
	if os.Getenv("HEADROOM_BENCH") == "" {
		t.Skip("set HEADROOM_BENCH=1 (make bench-scale) to measure")
	}
	const base, spike, every, dur, n = 8, 32, 250, 8000, 32
	task := spikeTask(t, base, spike, every, dur)
	load, _ := os.ReadFile("/proc/loadavg")
	b := newBackend(t, Options{})
	results, evs := sweepAtOnce(t, b, []model.Task{task}, []model.Ratio{{Uncapped: true}}, n, n, context.Background(), nil)
	counts := countSpikes(evs, (base+spike*8/10)*model.MiB)
	var fracPeak, fracUsage []float64
	var rates []float64
	for _, r := range results {
		c := counts[r.ID]
		if c == nil || c.byPeak == 0 {
			t.Errorf("trial %s: no sample carried a spike", r.ID)
			continue
		}
		made := float64(c.made)
		fracPeak = append(fracPeak, float64(c.byPeak)/made)
		fracUsage = append(fracUsage, float64(c.byUsage)/made)
		rates = append(rates, r.SampleRateHz)
	}
	sort.Float64s(fracPeak)
	sort.Float64s(fracUsage)
	sort.Float64s(rates)
	if len(fracPeak) == 0 {
		t.Fatal("no trials")
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	fmt.Printf("| peaks at scale | %d trials at once, 20 Hz, 20 ms spikes of %d MiB every %d ms for %d s: spikes in the samples, of those each trial made | kernel mark per sample: %.0f%% mean, %.0f%% worst trial; the samples' instants: %.0f%% mean, %.0f%% worst; sampling %.1f Hz mean, %.1f Hz worst; peak mode %s | every spike | %s |\n",
		n, spike, every, dur/1000, 100*mean(fracPeak), 100*fracPeak[0], 100*mean(fracUsage), 100*fracUsage[0], mean(rates), rates[0], results[0].PeakMode, string(load[:14]))
}
