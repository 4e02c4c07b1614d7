package kube

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// unread are the kinds this user may not list there (RBAC), as
	// "ResourceQuotas": nothing known of them is not "none".
	unread []string
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
	if apierrors.IsForbidden(qerr) {
		c.unread = append(c.unread, "ResourceQuotas")
	}
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
	if apierrors.IsForbidden(lerr) {
		c.unread = append(c.unread, "LimitRanges")
	}
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
	unread := ""
	if len(c.unread) > 0 {
		unread = "; this user may not read namespace " + ns + "'s " + strings.Join(c.unread, " or ") + " either (RBAC), so a bound they set is not known: " + readQuotaRole
	}
	if len(c.from) == 0 {
		if len(c.unread) == 2 {
			return "none known: this user may not read nodes, nor namespace " + ns + "'s ResourceQuotas and LimitRanges (RBAC); the scheduler decides where each pod fits (a pod that fits nowhere waits, unschedulable); " + readQuotaRole
		}
		what := "has no ResourceQuota or LimitRange that bounds a pod"
		if len(c.unread) == 1 {
			what = "has no " + strings.TrimSuffix(otherKind(c.unread[0]), "s") + " that bounds a pod"
		}
		return "none known: this user may not read nodes, and namespace " + ns + " " + what + "; the scheduler decides where each pod fits (a pod that fits nowhere waits, unschedulable)" + unread
	}
	return "namespace " + ns + "'s " + strings.Join(c.from, ", ") + " (this user may not read nodes)" + unread
}

// readQuotaRole is the rule a namespace's Role needs for headroom to read
// what bounds one pod there (docs/KUBERNETES.md).
const readQuotaRole = `add to the Role the rule {apiGroups: [""], resources: [resourcequotas, limitranges], verbs: [get, list]}`

// otherKind is the kind read beside one that was not.
func otherKind(unread string) string {
	if unread == "ResourceQuotas" {
		return "LimitRanges"
	}
	return "ResourceQuotas"
}
