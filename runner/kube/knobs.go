package kube

import (
	"fmt"

	"github.com/headroom-eval/headroom/model"
)

// CheckKnobs refuses the knobs a pod cannot be given here (docs/
// KUBERNETES.md's table): the time limits are headroom's own and carry
// over; shaping a pod's network needs a helper in its namespace with
// NET_ADMIN (or a CNI's bandwidth annotations), a disk limit needs the
// node's block device, and neighbours would be pods placed on the same
// node: none of these is applied yet, so a sweep that asks for them is
// refused rather than run with the knob doing nothing.
func (p *Platform) CheckKnobs(_ model.Task, cols []model.Ratio) error {
	for _, c := range cols {
		for _, k := range c.Knobs.Set() {
			switch k {
			case model.KnobTime:
			case model.KnobNetwork:
				return fmt.Errorf("the network knobs (column %s) are not applied on Kubernetes: a pod's network is the CNI's (kubernetes.io/ingress-bandwidth and egress-bandwidth annotations need the bandwidth plugin, latency a NET_ADMIN helper in the pod); run them with --backend docker", c)
			case model.KnobDisk:
				return fmt.Errorf("the disk knob (column %s) is not applied on Kubernetes: a pod has no blkio limit (the node's device is the kubelet's); run it with --backend docker", c)
			case model.KnobNeighbours:
				return fmt.Errorf("the neighbours knob (column %s) is not applied on Kubernetes yet (neighbours would be pods pinned to the trial's node); run it with --backend docker", c)
			}
		}
	}
	return nil
}
