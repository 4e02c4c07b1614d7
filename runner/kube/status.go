package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReasonOOMKilled is the container status reason of a container whose
// PID 1 the kernel killed at its limit.
const ReasonOOMKilled = "OOMKilled"

// containerStatus finds a container's status in the pod by name.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// OOMKilled says whether the pod's status reports an OOM kill of a
// container's PID 1: the current state's or the last termination's
// reason (the kubelet moves a terminated state there on a restart), of
// the main container or an init container. A compose sidecar's kill is
// its own (Final.Sidecars), not the trial's.
func OOMKilled(pod *corev1.Pod) bool {
	var all []corev1.ContainerStatus
	if st := containerStatus(pod, mainContainer); st != nil {
		all = append(all, *st)
	}
	all = append(all, pod.Status.InitContainerStatuses...)
	for _, st := range all {
		for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
			if t != nil && t.Reason == ReasonOOMKilled {
				return true
			}
		}
	}
	return strings.Contains(pod.Status.Reason, ReasonOOMKilled)
}

// fatalWaits are the waiting reasons a pod does not recover from by
// itself within a trial.
var fatalWaits = map[string]string{
	"ErrImageNeverPull":          "the image is not on the node and may not be pulled: import it into the cluster (see `headroom images --backend kubernetes`) or pass --image-registry",
	"ErrImagePull":               "the image cannot be pulled: check its name and --image-registry",
	"ImagePullBackOff":           "the image cannot be pulled: check its name and --image-registry",
	"InvalidImageName":           "the image name is not valid",
	"CreateContainerConfigError": "the container's configuration is refused",
	"CreateContainerError":       "the container cannot be created",
	"RunContainerError":          "the container cannot be started",
	"CrashLoopBackOff":           "the container keeps exiting",
}

// PodProgress is where a starting pod is.
type PodProgress struct {
	// Running: the main container runs.
	Running bool
	// Waiting says why not yet, for people ("unschedulable (…)",
	// "ContainerCreating"); empty when there is nothing to say.
	Waiting string
	// Err is set when the pod will not run: an image that cannot be had,
	// an init container that failed, a pod that ended.
	Err error
}

// Progress reads a starting pod's status.
func Progress(pod *corev1.Pod) PodProgress {
	if st := containerStatus(pod, mainContainer); st != nil && st.State.Running != nil {
		return PodProgress{Running: true}
	}
	describe := func(what string, st corev1.ContainerStatus) error {
		if t := st.State.Terminated; t != nil {
			return fmt.Errorf("pod %s: %s %s ended before the trial ran: %s (exit %d) %s", pod.Name, what, st.Name, t.Reason, t.ExitCode, strings.TrimSpace(t.Message))
		}
		if w := st.State.Waiting; w != nil {
			if fix, ok := fatalWaits[w.Reason]; ok {
				return fmt.Errorf("pod %s: %s %s (image %s): %s: %s — %s", pod.Name, what, st.Name, st.Image, w.Reason, strings.TrimSpace(w.Message), fix)
			}
		}
		return nil
	}
	for _, st := range pod.Status.InitContainerStatuses {
		if t := st.State.Terminated; t != nil && t.ExitCode == 0 {
			continue
		}
		if err := describe("init container", st); err != nil {
			return PodProgress{Err: err}
		}
	}
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name != mainContainer && st.State.Terminated != nil {
			// A compose sidecar may end (a one-off job); what the task
			// waits on of it is waitSidecars'.
			continue
		}
		if err := describe("container", st); err != nil {
			return PodProgress{Err: err}
		}
	}
	switch pod.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		return PodProgress{Err: fmt.Errorf("pod %s ended (%s) before the trial ran: %s %s", pod.Name, pod.Status.Phase, pod.Status.Reason, pod.Status.Message)}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			why := strings.TrimSpace(c.Message)
			if why == "" {
				why = c.Reason
			}
			if c.Reason == corev1.PodReasonUnschedulable {
				return PodProgress{Waiting: "unschedulable (" + why + ")"}
			}
			return PodProgress{Waiting: "not scheduled (" + why + ")"}
		}
	}
	for _, st := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := st.State.Waiting; w != nil && w.Reason != "" {
			return PodProgress{Waiting: w.Reason}
		}
	}
	if pod.Status.Phase == corev1.PodPending {
		return PodProgress{Waiting: "pending"}
	}
	return PodProgress{}
}

// mainExit is the main container's end, when it has ended.
func mainExit(pod *corev1.Pod) (*corev1.ContainerStateTerminated, bool) {
	st := containerStatus(pod, mainContainer)
	if st == nil || st.State.Terminated == nil {
		return nil, false
	}
	return st.State.Terminated, true
}

// containerID is the runtime's id of the main container (without the
// "containerd://" scheme), "" before it has one.
func containerID(pod *corev1.Pod) string {
	st := containerStatus(pod, mainContainer)
	if st == nil {
		return ""
	}
	_, id, ok := strings.Cut(st.ContainerID, "://")
	if !ok {
		return st.ContainerID
	}
	return id
}

// deletedFrom says, of a pod headroom did not delete, who ended it:
// its deletion (deletionTimestamp set, or already gone), an eviction,
// or a disruption the cluster names (preemption, a taint, the kubelet).
// "" when the pod still runs on its own.
func deletedFrom(pod *corev1.Pod) string {
	why := ""
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			why = strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	switch {
	case pod.Status.Reason == "Evicted":
		return strings.TrimSpace("the kubelet's eviction of its pod " + strings.TrimSpace(pod.Status.Message))
	case pod.DeletionTimestamp != nil && why != "":
		return "the deletion of its pod (" + why + ")"
	case pod.DeletionTimestamp != nil:
		return deletedOutside
	}
	return ""
}

// deletedOutside is a pod deleted by someone other than headroom.
const deletedOutside = "the deletion of its pod (kubectl delete pod, a drain, the cluster going down)"
