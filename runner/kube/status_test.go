package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func terminated(reason string, code int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}
}

func TestOOMKilledFromStatus(t *testing.T) {
	tests := []struct {
		name string
		st   corev1.PodStatus
		want bool
	}{
		{"running", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}, false},
		{"current state", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, State: terminated("OOMKilled", 137)}}}, true},
		{"last termination", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, LastTerminationState: terminated("OOMKilled", 137)}}}, true},
		{"killed otherwise", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, State: terminated("Error", 137)}}}, false},
		{"init container", corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: probeInstaller, State: terminated("OOMKilled", 137)}}}, true},
		{"empty", corev1.PodStatus{}, false},
	}
	for _, tt := range tests {
		if got := OOMKilled(&corev1.Pod{Status: tt.st}); got != tt.want {
			t.Errorf("%s: OOMKilled = %v", tt.name, got)
		}
	}
}

func TestProgress(t *testing.T) {
	unsched := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 Insufficient memory.",
	}}}
	tests := []struct {
		name    string
		st      corev1.PodStatus
		running bool
		waiting string
		err     string
	}{
		{"no status yet", corev1.PodStatus{}, false, "", ""},
		{"unschedulable", unsched, false, "unschedulable (0/1 nodes are available: 1 Insufficient memory.)", ""},
		{"creating", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}, false, "ContainerCreating", ""},
		{"image never pulled", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, Image: "tb/x:1",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: `Container image "tb/x:1" is not present with pull policy of Never`}}}}},
			false, "", "ErrImageNeverPull"},
		{"init failed", corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: probeInstaller, State: terminated("Error", 1)}}}, false, "", "init container headroom-probe ended"},
		{"init done, main creating", corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: probeInstaller, State: terminated("Completed", 0)}}}, false, "pending", ""},
		{"running", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}, true, "", ""},
		{"ended at once", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, State: terminated("OOMKilled", 137)}}}, false, "", "OOMKilled (exit 137)"},
	}
	for _, tt := range tests {
		got := Progress(&corev1.Pod{Status: tt.st})
		errText := ""
		if got.Err != nil {
			errText = got.Err.Error()
		}
		if got.Running != tt.running || got.Waiting != tt.waiting || (tt.err == "") != (got.Err == nil) || !strings.Contains(errText, tt.err) {
			t.Errorf("%s: %+v, want running %v waiting %q err ~%q", tt.name, got, tt.running, tt.waiting, tt.err)
		}
	}
}

func TestContainerID(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, ContainerID: "containerd://abc123"}}}}
	if got := containerID(pod); got != "abc123" {
		t.Errorf("containerID %q", got)
	}
}
