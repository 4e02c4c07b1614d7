package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// probeEndWait bounds the wait for the kubelet's word on how the task's
// container ended after the probe's stream did (its status follows the
// stream's end by a second or so; more on a loaded node).
var probeEndWait = 15 * time.Second

// probeDeath says why the probe's stream ended under a step when nothing
// else will: the pod deleted or evicted (killed from outside, read by the
// watch), the probe OOM-killed (the kills' own evidence) and headroom's
// own kill (Kill) are left to what reads them, and nil is returned. What
// is left is the probe itself dying — its runtime unable to make a thread
// in a pod whose pids limit the task filled, a crash, a signal — or its
// stream cut while the container runs: either way the steps' ends are not
// the task's, and the error (the trial's engine error, infra) names it.
func (s *sandbox) probeDeath(ctx context.Context) error {
	if s.sub == nil {
		return nil
	}
	s.mu.Lock()
	killing := s.removing || s.killing
	s.mu.Unlock()
	if killing {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeEndWait)
	defer cancel()
	poll := time.NewTimer(pollAfter)
	defer poll.Stop()
	var last *corev1.Pod
	for {
		pod, gone, changed := s.sub.latest()
		if pod != nil && pod != last {
			last = pod
			s.seen(pod)
		}
		s.mu.Lock()
		outside := s.killedBy != "" || s.removing || s.killing
		s.mu.Unlock()
		if gone || outside || (last != nil && OOMKilled(last)) {
			return nil
		}
		if last != nil {
			if t, ok := mainExit(last); ok {
				return s.probeDied(ctx, t)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the probe's stream from pod %s ended under the step while its container still runs (the attach was cut): the step's end is unknown", s.pod)
		case <-changed:
		case <-poll.C:
			if pod, err := s.b.p.cs.CoreV1().Pods(s.b.p.ns).Get(ctx, s.pod, metav1.GetOptions{}); err == nil {
				last = pod
				s.seen(pod)
			}
			poll.Reset(pollAfter)
		}
	}
}

// probeDied is the error for a task container that ended by itself with
// the probe, its PID 1: its exit and what its runtime said last (the
// container's log, the probe's own lines left out).
func (s *sandbox) probeDied(ctx context.Context, t *corev1.ContainerStateTerminated) error {
	how := fmt.Sprintf("exit %d", t.ExitCode)
	if t.Reason != "" {
		how += ", " + t.Reason
	}
	if t.ExitCode == 0 {
		// The probe ends cleanly only on SIGTERM.
		how += ": it was sent SIGTERM"
	} else if t.ExitCode > 128 {
		how += fmt.Sprintf(": signal %d, not an OOM kill", t.ExitCode-128)
	}
	tailLines := int64(400)
	raw, err := s.b.p.cs.CoreV1().Pods(s.b.p.ns).GetLogs(s.pod, &corev1.PodLogOptions{Container: mainContainer, TailLines: &tailLines}).DoRaw(ctx)
	if err == nil {
		if said := lastWords(string(raw)); said != "" {
			how += ": " + said + pidsNote(said, s.policy.PidsLimit, s.pidsEnforced)
		}
	}
	return fmt.Errorf("headroom's probe, PID 1 of pod %s, died under the step (%s): the step's end and the trial's counters are lost", s.pod, how)
}

// lastWords are a Go runtime's own lines in a container's log ("runtime:
// …", "fatal error: …"), at most three, "" when none.
func lastWords(log string) string {
	var words []string
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "runtime: ") || strings.HasPrefix(l, "runtime/cgo: ") || strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "hr-workload probe: ") {
			words = append(words, l)
		}
		if len(words) == 3 {
			break
		}
	}
	return strings.Join(words, "; ")
}

// pidsNote names the pods' pids limit behind a runtime that could not
// make a thread ("" for other deaths).
func pidsNote(words string, policy int64, enforced string) string {
	if !strings.Contains(words, "failed to create new OS thread") && !strings.Contains(words, "pthread_create failed") {
		return ""
	}
	limit := "its pids limit"
	if policy > 0 {
		limit = fmt.Sprintf("the pids limit (%d)", policy)
	}
	if enforced != "" {
		limit = "the pids limit that held, " + enforced
	}
	return " — the task filled the pod's pids, " + limit + ", and left the probe none"
}
