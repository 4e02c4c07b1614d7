package runner

import (
	"reflect"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

func TestKillCountMergesSources(t *testing.T) {
	var k KillCount
	steps := []struct {
		largest int
		named   bool
		want    int
		ok      bool
	}{
		{0, false, 0, false}, // nothing yet
		{0, true, 0, false},  // a name with no kill counted: nothing to pass on
		{1, false, 1, true},  // the engine's event: the first kill
		{1, false, 1, false}, // the cgroup's counter: the same kill
		{1, true, 1, true},   // the kernel's log: the same kill, now named
		{2, true, 2, true},   // a second kill
		{1, false, 2, false}, // a slower source still at one
	}
	for i, s := range steps {
		got, ok := k.Seen(s.largest, s.named)
		if got != s.want || ok != s.ok {
			t.Errorf("step %d Seen(%d, %v) = %d, %v; want %d, %v", i, s.largest, s.named, got, ok, s.want, s.ok)
		}
	}
	if k.Count() != 2 {
		t.Errorf("count %d", k.Count())
	}
}

// "Killed at X" names the kernel's figure at the kill, not the last
// sample (issue #39: "killed in step install at 95MiB (limit 128MiB) …
// rss 124.3MiB", the kernel's usage at the kill 127.3 MiB): the engine's
// event comes first with no figure, the kernel's log fills it in.
func TestKillRecordTakesTheKernelsFigure(t *testing.T) {
	const mib = 1 << 20
	oe := OOMEvent(OOMSignal{Source: "events", Count: 1}, "install", 95*mib, 0)
	if b, kernel := oe.KilledAt(); kernel || b != 95*mib {
		t.Fatalf("before the kernel's word: %d %v, want the last sample", b, kernel)
	}
	if got := oe.KilledAtLabel(func(b int64) string { return "95MiB" }); got != "95MiB (last sample)" {
		t.Errorf("label %q: a stale sample must say it is one", got)
	}
	kernel := OOMSignal{Source: "kernel", Count: 1, Process: "pip", PID: 7, RSSBytes: 124 * mib, UsageBytes: 127 * mib}
	if !FillKill(&oe, kernel) {
		t.Fatal("the kernel's word filled nothing in")
	}
	if b, k := oe.KilledAt(); !k || b != 127*mib || oe.Process != "pip" {
		t.Errorf("after the kernel's word: %d %v %+v, want its 127 MiB", b, k, oe)
	}
	if FillKill(&oe, kernel) {
		t.Error("filled in twice")
	}
	if oe := OOMEvent(kernel, "install", 95*mib, 0); oe.KernelUsageBytes != 127*mib {
		t.Errorf("a kill first heard from the kernel: %+v", oe)
	}
}

// A backend that knows a kill took its step driver (a pod's probe, PID 1,
// where no process watch gives roles) says so on the signal: the record's
// kill is the driver's whether that word comes first or after a faster
// source's count, so the trial is driver-killed (model.CauseDriverKilled).
func TestKillRecordTakesTheBackendsDriverWord(t *testing.T) {
	if oe := OOMEvent(OOMSignal{Source: "pod-status", Count: 1, Driver: true}, "install", 0, 0); !oe.Driver {
		t.Errorf("the driver's kill heard first: %+v", oe)
	}
	oe := OOMEvent(OOMSignal{Source: "kernel", Count: 1, Process: "hr-workload", PID: 9}, "install", 0, 0)
	if !FillKill(&oe, OOMSignal{Source: "pod-status", Count: 1, Driver: true}) || !oe.Driver {
		t.Errorf("the driver's word after the kernel's: %+v", oe)
	}
	ev := model.Evidence{}
	for _, o := range []model.OOMEvent{oe} {
		ev.DriverKilled = ev.DriverKilled || o.Driver
	}
	if o, c := model.Classify(ev); o != model.InfraError || c != model.CauseDriverKilled {
		t.Errorf("classified %s · %s, want infra-error · driver-killed", o, c)
	}
}

// The kernel's word on a kill goes to its own kill by its number, behind
// a new count that has not had its word yet; any other signal as it is.
func TestKillSignalsPutEachWordOnItsKill(t *testing.T) {
	word := OOMSignal{Source: "kernel", Count: 3, Process: "bash", PID: 7}
	for _, c := range []struct {
		name          string
		sig           OOMSignal
		before, words int
		want          []OOMSignal
	}{
		{"a count", OOMSignal{Source: "cgroup", Count: 3}, 0, 0, []OOMSignal{{Source: "cgroup", Count: 3}}},
		{"the word on the last kill counted", word, 2, 3, []OOMSignal{word}},
		{"the first word after a count of three", word, 3, 1, []OOMSignal{{Source: "kernel", Count: 1, Process: "bash", PID: 7}}},
		{"the first word raising the count to three", word, 0, 1, []OOMSignal{{Source: "kernel", Count: 3}, {Source: "kernel", Count: 1, Process: "bash", PID: 7}}},
	} {
		if got := KillSignals(c.sig, c.before, c.words); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v; want %+v", c.name, got, c.want)
		}
	}
}
