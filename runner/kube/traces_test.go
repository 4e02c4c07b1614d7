package kube

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload/wire"
)

// A task granted SYS_PTRACE (or ALL) gets no probe in its pod: its
// processes could open the probe's stdin and answer for it (a review
// found the Docker backend's refusal had no Kubernetes twin).
func TestTracingTaskGetsNoProbe(t *testing.T) {
	b := &backend{probe: true, probeImage: "workload:x"}
	task := model.Task{Name: "t", IdleCommand: []string{wire.Binary, wire.IdleMode}}
	if pid1, _ := b.usesProbe(task); !pid1 {
		t.Fatal("a built-in task without capabilities should get the probe as PID 1")
	}
	for _, c := range []string{"SYS_PTRACE", "cap_sys_ptrace", "ALL"} {
		task.Capabilities = []string{"NET_BIND_SERVICE", c}
		if pid1, exec := b.usesProbe(task); pid1 || exec {
			t.Errorf("granted %s: probe as PID 1 %v, beside it %v; want neither", c, pid1, exec)
		}
	}
}
