package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// A pod has no pids limit of its own: the kubelet gives every pod's
// cgroup its podPidsLimit (pids.max of the pod's cgroup, shared by its
// containers, its compose sidecars and the sandbox's pause process). A
// trial's policy's pids limit (the hardened profile's, a task's own) is
// therefore applied where the node's is the same, and otherwise the
// trial's record names the limit that held (Final.PidsLimitEnforced).
// The probe counts the forks refused in the task's container whichever
// cgroup's limit refused them (cgroup v1's pids.events, and v2's with
// the pids_localevents mount option, are the forking cgroup's own).

// kubeletConfigWait bounds the read of a node's kubelet configuration.
const kubeletConfigWait = 5 * time.Second

// nodePids is what headroom knows of a node's pod pids limit.
type nodePids struct {
	limit int64 // podPidsLimit; 0 for none
	err   error // why it is not known
}

// kubeletConfig reads a node's running kubelet configuration through the
// API server's node proxy (/configz; needs get on nodes/proxy).
func (p *Platform) kubeletConfig(ctx context.Context, node string) ([]byte, error) {
	if p.readKubeletConfig != nil {
		return p.readKubeletConfig(ctx, node)
	}
	if p.cfg == nil {
		return nil, fmt.Errorf("no connection to the API server's node proxy")
	}
	ctx, cancel := context.WithTimeout(ctx, kubeletConfigWait)
	defer cancel()
	return p.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "configz").DoRaw(ctx)
}

// podPidsLimit is the node's kubelet podPidsLimit (0: none), read once
// per node.
func (p *Platform) podPidsLimit(ctx context.Context, node string) (int64, error) {
	p.mu.Lock()
	if n, ok := p.nodePids[node]; ok {
		p.mu.Unlock()
		return n.limit, n.err
	}
	p.mu.Unlock()
	var n nodePids
	raw, err := p.kubeletConfig(ctx, node)
	if err != nil {
		n.err = fmt.Errorf("node %s's kubelet configuration could not be read (%v)", node, err)
	} else {
		var cz struct {
			KubeletConfig struct {
				PodPidsLimit *int64 `json:"podPidsLimit"`
			} `json:"kubeletconfig"`
		}
		if err := json.Unmarshal(raw, &cz); err != nil {
			n.err = fmt.Errorf("node %s's kubelet configuration: %v", node, err)
		} else if v := cz.KubeletConfig.PodPidsLimit; v != nil && *v > 0 {
			n.limit = *v
		}
	}
	if ctx.Err() == nil {
		p.mu.Lock()
		if p.nodePids == nil {
			p.nodePids = map[string]nodePids{}
		}
		p.nodePids[node] = n
		p.mu.Unlock()
	}
	return n.limit, n.err
}

// pidsLimitEnforced says, when the pids limit a pod on node has is not
// the policy's want (0: none), what it is: "" when they agree.
func (p *Platform) pidsLimitEnforced(ctx context.Context, node string, want int64) string {
	has, err := p.podPidsLimit(ctx, node)
	task := "none"
	if want > 0 {
		task = fmt.Sprint(want)
	}
	switch {
	case err != nil:
		if want <= 0 {
			return ""
		}
		return fmt.Sprintf("unknown: %v; the policy's is %s, and a pod can have only its node's podPidsLimit", err, task)
	case has == want:
		return ""
	case has == 0:
		return fmt.Sprintf("none: node %s's kubelet sets no podPidsLimit; the policy's is %s, and a pod can have only its node's", node, task)
	}
	return fmt.Sprintf("%d: node %s's kubelet podPidsLimit, for the whole pod; the policy's is %s", has, node, task)
}
