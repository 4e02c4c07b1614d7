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

// A user who may not read nodes: a quota's bound is named as such, and
// with none known nothing is refused (the scheduler decides).
func TestCapacityOfANamespaceScopedUser(t *testing.T) {
	plan := model.Plan{Trials: []model.Trial{{Task: "big", Policy: model.ResourcePolicy{GuaranteeBytes: 8 << 30}}}}
	none := &Engine{AdmitsItself: true, Info: store.Engine{Details: map[string]string{"capacity": "none known: the scheduler decides"}}}
	if c := none.Capacity(1 << 30); runner.CheckGuaranteesOf(plan, c, none.CapacityBasis()) != nil {
		t.Errorf("nothing known, yet refused at %d", c)
	}
	quota := &Engine{AdmitsItself: true, Host: store.Host{MemoryBytes: 3 << 30}, Info: store.Engine{Details: map[string]string{"capacity": "namespace evals's ResourceQuota q (this user may not read nodes)"}}}
	err := runner.CheckGuaranteesOf(plan, quota.Capacity(1<<30), quota.CapacityBasis())
	if err == nil || !strings.Contains(err.Error(), "one pod may have at most 3GiB, by namespace evals's ResourceQuota q") {
		t.Errorf("quota: %v", err)
	}
}
