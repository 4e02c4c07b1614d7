package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/headroom-eval/headroom/workload/wire"
)

// The showcase is watched: its install must climb for seconds before the
// 1x limit can kill it, even with the largest jitter and a spike at the
// worst moment (it was killed about 1 s in).
func TestDemoInstallClimbsForSeconds(t *testing.T) {
	c, err := taskfile.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	task, err := c.Find(demoTask)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := task.Agent(demoAgent)
	if !ok || len(a.Steps) == 0 {
		t.Fatalf("no %s agent", demoAgent)
	}
	install := a.Steps[0]
	var p wire.Profile
	if err := json.Unmarshal([]byte(install.Argv[len(install.Argv)-1]), &p); err != nil {
		t.Fatalf("install profile: %v", err)
	}
	limitMB := float64(model.NewPolicy(task.Resources, model.Ratio{K: 1}, 2).HardLimitBytes) / (1 << 20)
	worst := 1 + p.JitterPct/100
	base, spike := p.BaseMB*worst, p.SpikeMB*worst
	if base+spike <= limitMB {
		t.Fatalf("the install (%.0f MB + %.0f MB spike) never reaches the 1x limit %.0f MB: the demo shows no kill", base, spike, limitMB)
	}
	ramp := time.Duration(float64(p.DurationMS)*p.RampPct/100) * time.Millisecond
	earliest := time.Duration(float64(ramp) * max(limitMB-spike, 0) / base)
	if earliest < 2*time.Second {
		t.Errorf("the 1x kill can come %s after the install starts: too fast to watch the gauge climb", earliest)
	}
}
