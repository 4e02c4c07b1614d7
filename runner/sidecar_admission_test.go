package runner_test

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// withSidecars is a fake task whose n services run at the default bound.
func withSidecars(name string, guarantee int64, n int) model.Task {
	t := fake.Task(name, guarantee, "s")
	for i := 0; i < n; i++ {
		t.Sidecars = append(t.Sidecars, model.Sidecar{Name: "svc" + string(rune('a'+i)), Image: "x"})
	}
	return t
}

// A trial holds its guarantee and its services' bounds: two 64 MiB tasks
// with two 1 GiB services each do not run at once on 3 GiB (each needs
// 2.06 GiB), where counting the guarantee alone admitted both (128 MiB).
func TestAdmissionCountsTheSidecarsBounds(t *testing.T) {
	tasks := []model.Task{withSidecars("a", 64*model.MiB, 2), withSidecars("b", 64*model.MiB, 2)}
	cfg := config(t, tasks)
	cfg.Concurrency = 2
	cfg.GuaranteeCapacityBytes = 3 << 30
	b, res, waits := gatedSweep(t, cfg)
	if b.MaxRunning() != 1 {
		t.Errorf("%d trials ran at once; their guarantees and services' bounds (2 × 2.06 GiB) fit 3 GiB once (runner.AdmittedBytes)", b.MaxRunning())
	}
	if len(res.results) != 2 {
		t.Errorf("%d results, want 2", len(res.results))
	}
	if len(waits) == 0 || !strings.Contains(waits[0], "needs 2.1GiB") {
		t.Errorf("waiting reasons %q, want the second trial waiting, needing 2.1GiB", waits)
	}
}

// A task whose services' bounds alone exceed the host is refused before
// anything starts, saying what its services add.
func TestSidecarsLargerThanHostAreRefusedUpFront(t *testing.T) {
	cfg := config(t, []model.Task{withSidecars("many", 64*model.MiB, 8)})
	cfg.GuaranteeCapacityBytes = 4 << 30
	_, err := runner.New(&fake.Backend{}, cfg)
	if err == nil || !strings.Contains(err.Error(), "many needs 8.1GiB (its guarantee 64MiB and its 8 services' bounds 8GiB)") {
		t.Errorf("error %v, want the 8 services' 8GiB named", err)
	}
	if got := runner.AdmittedBytes(model.Trial{Policy: model.ResourcePolicy{GuaranteeBytes: 64 * model.MiB}}, withSidecars("x", 0, 3)); got != 64*model.MiB+3*model.DefaultSidecarMemoryBytes {
		t.Errorf("AdmittedBytes %d, want 64 MiB + 3 × the default sidecar bound", got)
	}
}
