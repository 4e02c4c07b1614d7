package session

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/store"
)

// A cluster's capacity is its largest node's allocatable memory, and the
// refusal says so: not "memory minus the reserve", which it is not.
func TestCapacityWordingOnACluster(t *testing.T) {
	plan := model.Plan{Trials: []model.Trial{{Task: "big", Policy: model.ResourcePolicy{GuaranteeBytes: 8 << 30}}}}
	kube := &Engine{AdmitsItself: true, Host: store.Host{Hostname: "node-1", MemoryBytes: 4 << 30}}
	err := runner.CheckGuaranteesOf(plan, kube.Capacity(1<<30), kube.CapacityBasis())
	if err == nil || !strings.Contains(err.Error(), "largest node (node-1) can give one pod at most 4GiB") || strings.Contains(err.Error(), "minus the reserve") {
		t.Errorf("cluster: %v", err)
	}
	docker := &Engine{Host: store.Host{MemoryBytes: 4 << 30}}
	err = runner.CheckGuaranteesOf(plan, docker.Capacity(1<<30), docker.CapacityBasis())
	if err == nil || !strings.Contains(err.Error(), "at most 3GiB (memory minus the reserve)") {
		t.Errorf("docker: %v", err)
	}
}
