package docker

import (
	"context"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A service that exits during the trial is recorded so, and said on the
// trial: a sidecar that crashed read as nothing in the record, and the
// failure that followed as the task's alone (the twenty-eighth
// attacker's 2: compose would have restarted it).
func TestASidecarThatExitedIsRecorded(t *testing.T) {
	needEngine(t)
	task := peerTask(t, "test/sidecar-exits", 1, 1, `["/hr-workload", "no-such-mode"]`, "workload = { duration_ms = 500 }")
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
	r := results[0]
	var peer *model.SidecarUsage
	for i := range r.Sidecars {
		if r.Sidecars[i].Name == "peer" {
			peer = &r.Sidecars[i]
		}
	}
	if peer == nil || peer.Exited == nil || *peer.Exited != 2 {
		t.Fatalf("sidecars %+v; want peer exited 2", r.Sidecars)
	}
	if !strings.Contains(r.Reason, "service peer exited 2 during the trial") {
		t.Errorf("%s: reason %q; want the service's exit said", r.Outcome, r.Reason)
	}
}
