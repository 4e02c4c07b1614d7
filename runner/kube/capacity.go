package kube

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DetailCapacity is the PlatformInfo detail that says where the host's
// memory and CPUs (what one trial's pod can be given) come from.
const DetailCapacity = "capacity"

// nsCapacity is what the namespace lets one pod have, from what a user
// without node read can see: its ResourceQuotas' hard requests (less
// what is used) and its LimitRanges' per-pod and per-container maxima.
// Zero where nothing bounds it; from says which objects did.
type nsCapacity struct {
	memory, milliCPU int64
	from             []string
}

func (c *nsCapacity) bound(mem, mcpu int64, what string) {
	took := false
	if mem > 0 && (c.memory == 0 || mem < c.memory) {
		c.memory, took = mem, true
	}
	if mcpu > 0 && (c.milliCPU == 0 || mcpu < c.milliCPU) {
		c.milliCPU, took = mcpu, true
	}
	if took {
		c.from = append(c.from, what)
	}
}

// namespaceCapacity reads the namespace's ResourceQuotas and LimitRanges;
// ok is false when they cannot be read either.
func (p *Platform) namespaceCapacity(ctx context.Context) (nsCapacity, bool) {
	var c nsCapacity
	quotas, qerr := p.cs.CoreV1().ResourceQuotas(p.ns).List(ctx, metav1.ListOptions{})
	if qerr == nil {
		for _, q := range quotas.Items {
			left := func(names ...corev1.ResourceName) int64 {
				for _, n := range names {
					h, ok := q.Status.Hard[n]
					if !ok {
						h, ok = q.Spec.Hard[n]
					}
					if !ok {
						continue
					}
					h.Sub(q.Status.Used[n])
					if strings.HasSuffix(string(n), "cpu") {
						return max(h.MilliValue(), 1)
					}
					return max(h.Value(), 1)
				}
				return 0
			}
			c.bound(left(corev1.ResourceRequestsMemory, corev1.ResourceMemory), left(corev1.ResourceRequestsCPU, corev1.ResourceCPU), "ResourceQuota "+q.Name)
			// A limit quota bounds the hard limit, which is at least the
			// guarantee: it bounds the guarantee too.
			c.bound(left(corev1.ResourceLimitsMemory), left(corev1.ResourceLimitsCPU), "ResourceQuota "+q.Name+" (limits)")
		}
	}
	ranges, lerr := p.cs.CoreV1().LimitRanges(p.ns).List(ctx, metav1.ListOptions{})
	if lerr == nil {
		for _, lr := range ranges.Items {
			for _, it := range lr.Spec.Limits {
				if it.Type != corev1.LimitTypeContainer && it.Type != corev1.LimitTypePod {
					continue
				}
				var mem, mcpu int64
				if q, ok := it.Max[corev1.ResourceMemory]; ok {
					mem = q.Value()
				}
				if q, ok := it.Max[corev1.ResourceCPU]; ok {
					mcpu = q.MilliValue()
				}
				c.bound(mem, mcpu, fmt.Sprintf("LimitRange %s (%s max)", lr.Name, strings.ToLower(string(it.Type))))
			}
		}
	}
	return c, qerr == nil || lerr == nil
}

// describeCapacity says where the capacity came from, for the record and
// doctor.
func (c nsCapacity) describe(ns string) string {
	if len(c.from) == 0 {
		return "none known: this user may not read nodes, and namespace " + ns + " has no ResourceQuota or LimitRange that bounds a pod; the scheduler decides where each pod fits (a pod that fits nowhere waits, unschedulable)"
	}
	return "namespace " + ns + "'s " + strings.Join(c.from, ", ") + " (this user may not read nodes)"
}
