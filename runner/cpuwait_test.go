package runner

import (
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// A task that bursts past its cores and then idles waited behind its own
// threads: split over the whole span, the idle time's room was charged to
// the host (the twenty-first attacker's 4: "waited 2.9s for a CPU (49%)",
// contended, 2 of 2). Split reading by reading, none of it is the host's;
// a task the host holds back (half its one core's time waiting, half
// running) is still the host's.
func TestWaitSplitIntervalByInterval(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sec := int64(time.Second)
	// Eight busy threads under cpus = 1 for 3 s (7 s of waiting and 1 s
	// used each second), then 3 s asleep.
	burst := &waitSplit{cores: 1, hostCPUs: 2}
	var wait, used int64
	for i := 0; i <= 6; i++ {
		if i > 0 && i <= 3 {
			wait, used = wait+7*sec, used+sec
		}
		burst.add(wait, used, t0.Add(time.Duration(i)*time.Second))
	}
	host, own := burst.add(wait, used, t0.Add(6*time.Second))
	if host != 0 || own != 21*time.Second {
		t.Errorf("burst, then idle: host %v own %v; want 0 and 21s", host, own)
	}
	if whole, _ := model.SplitCPUWait(time.Duration(wait), 6*time.Second, model.CPUUse{UsageNanos: used}, 1, 2); whole != 3*time.Second {
		t.Errorf("split over the whole span: host %v; the test no longer shows what it fixed", whole)
	}
	// One thread that waits half of each second: the host's.
	held := &waitSplit{cores: 1, hostCPUs: 2}
	wait, used = 0, 0
	for i := 0; i <= 4; i++ {
		if i > 0 {
			wait, used = wait+sec/2, used+sec/2
		}
		host, own = held.add(wait, used, t0.Add(time.Duration(i)*time.Second))
	}
	if host != 2*time.Second || own != 0 {
		t.Errorf("held back by the host: host %v own %v; want 2s and 0", host, own)
	}
	// A reading older than the last (a sample delivered late) is skipped.
	if h, o := held.add(wait-sec, used-sec, t0.Add(2*time.Second)); h != host || o != own {
		t.Errorf("a stale reading moved the split: %v %v", h, o)
	}
}

// The recorder gives the split the wait its samples read.
func TestRecorderSplitsTheSamplesWait(t *testing.T) {
	var out model.TrialResult
	r := newRecorder(&out, 0, nil)
	r.waits = waitSplit{cores: 1, hostCPUs: 2}
	t0 := time.Unix(1000, 0)
	r.sample(event.Sample{Time: t0, CPU: model.CPUUse{UsageNanos: 1}, CPUWaitRead: true})
	r.sample(event.Sample{Time: t0.Add(time.Second / 2), CPU: model.CPUUse{UsageNanos: 2}}) // no wait read
	r.sample(event.Sample{Time: t0.Add(time.Second), CPU: model.CPUUse{UsageNanos: 1 + int64(time.Second)}, CPUWaitRead: true, CPUWaitNanos: int64(3 * time.Second)})
	if host, own := r.waits.add(int64(3*time.Second), 1+int64(time.Second), t0.Add(time.Second)); host != 0 || own != 3*time.Second {
		t.Errorf("a second at its one core with three threads waiting: host %v own %v; want 0 and 3s", host, own)
	}
}

// waitBox is a sandbox that reads only its CPU use and wait.
type waitBox struct {
	Sandbox
	used, wait int64
}

func (b *waitBox) CPUUse() (model.CPUUse, bool)   { return model.CPUUse{UsageNanos: b.used}, true }
func (b *waitBox) CPUWait() (time.Duration, bool) { return time.Duration(b.wait), true }

// A separate verifier's container has counters of its own, far below the
// trial's: its readings were skipped by the trial's split as stale, and
// its steps recorded no CPU wait at all, the host's or their own (round
// nineteen's open item). Such a step is split over its whole span.
func TestSeparateVerifiersWaitIsItsOwnSpan(t *testing.T) {
	sec := int64(time.Second)
	main := &waitBox{used: 100 * sec, wait: 50 * sec}
	t0 := time.Unix(1000, 0)
	tr := &trialRun{r: &Runner{}}
	tr.trial.Policy.LimitCPUs = 1
	tr.r.cfg.HostCPUs = 2
	tr.recorder.waits = waitSplit{of: main, cores: 1, hostCPUs: 2}
	tr.recorder.waits.add(main.wait, main.used, t0)

	// The verifier's one thread held back half of each of 2 s by the
	// host: 1 s of the host's wait.
	verifier := &waitBox{used: sec / 100, wait: 0}
	o := &openStep{cpuBefore: model.CPUUse{UsageNanos: verifier.used}, cpuOK: true, waitOK: true}
	tr.splitFrom(verifier, o)
	verifier.used += sec
	verifier.wait += sec
	start := time.Now()
	_, host := tr.spanNoise(verifier, o, start, start.Add(2*time.Second))
	if time.Duration(host) != time.Second || tr.steps.wait != time.Second {
		t.Errorf("the separate verifier's step: host wait %v (steps %v); want 1s", time.Duration(host), tr.steps.wait)
	}
	if h, o := tr.recorder.waits.add(main.wait, main.used, t0.Add(time.Second)); h != 0 || o != 0 {
		t.Errorf("the verifier's readings moved the trial's split: %v %v", h, o)
	}
}

// The recorder tells the sweep, once, that its trial reached nine tenths
// of its limit (neighbourhood.markAtLimit).
func TestRecorderSaysItsTrialIsAtItsLimit(t *testing.T) {
	var out model.TrialResult
	r := newRecorder(&out, 64*model.MiB, nil)
	told := 0
	r.atLimit = func() { told++ }
	t0 := time.Unix(1000, 0)
	r.sample(event.Sample{Time: t0, UsageBytes: 40 * model.MiB})
	if told != 0 {
		t.Fatalf("told at 40 of 64 MiB")
	}
	r.sample(event.Sample{Time: t0.Add(time.Second), UsageBytes: 63 * model.MiB})
	r.sample(event.Sample{Time: t0.Add(2 * time.Second), UsageBytes: 64 * model.MiB})
	if told != 1 {
		t.Errorf("told %d times at its limit; want once", told)
	}
}
