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

// A separate verifier runs after the agent's container, of its own
// resources: a trial holds the larger of the two guarantees (a 1 GiB
// verifier beside a 64 MiB agent holds 1 GiB), and a verifier larger
// than the host is refused before anything starts, named.
func TestAdmissionCountsTheSeparateVerifier(t *testing.T) {
	task := fake.Task("v", 64*model.MiB, "s")
	task.SeparateVerifier = &model.SeparateVerifier{Resources: model.Resources{MemoryBytes: 1 << 30}}
	tr := model.Trial{Task: "v", Policy: model.ResourcePolicy{GuaranteeBytes: 64 * model.MiB}}
	if got := runner.AdmittedBytes(tr, task); got != 1<<30 {
		t.Errorf("AdmittedBytes %d, want the verifier's 1 GiB (the larger; they run one after the other)", got)
	}
	tr.Policy.GuaranteeBytes = 2 << 30
	if got := runner.AdmittedBytes(tr, task); got != 2<<30 {
		t.Errorf("AdmittedBytes %d, want the agent's 2 GiB (the larger)", got)
	}
	task.SeparateVerifier.Resources.MemoryBytes = 100000000 * model.MiB
	cfg := config(t, []model.Task{task})
	cfg.GuaranteeCapacityBytes = 4 << 30
	_, err := runner.New(&fake.Backend{}, cfg)
	if err == nil || !strings.Contains(err.Error(), "v has a separate verifier ([verifier.environment] memory_mb) that guarantees 95.4TiB") {
		t.Errorf("error %v, want the separate verifier's 95.4TiB named", err)
	}
}
