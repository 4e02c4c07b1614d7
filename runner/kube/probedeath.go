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
// own kill (Kill) are left to what reads them. What is left is the probe
// itself ending — its runtime unable to make a thread in a pod whose pids
// limit the task filled, or a signal (deathVerdict tells them apart) — or
// its stream cut while the container runs: the error (the trial's engine
// error, infra) names the probe's own failure; the note says a probe's
// end the task may have caused, the step's 137 standing.
func (s *sandbox) probeDeath(ctx context.Context) (string, error) {
	if s.sub == nil {
		return "", nil
	}
	s.mu.Lock()
	killing := s.removing || s.killing
	s.mu.Unlock()
	if killing {
		return "", nil
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
			return "", nil
		}
		if last != nil {
			if t, ok := mainExit(last); ok {
				return s.probeDied(ctx, t)
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the probe's stream from pod %s ended under the step while its container still runs (the attach was cut): the step's end is unknown", s.pod)
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

// probeDied says how the task's container ended with the probe, its
// PID 1, from its exit and the runtime's last words in its log.
func (s *sandbox) probeDied(ctx context.Context, t *corev1.ContainerStateTerminated) (string, error) {
	tailLines := int64(400)
	said := ""
	if raw, err := s.b.p.cs.CoreV1().Pods(s.b.p.ns).GetLogs(s.pod, &corev1.PodLogOptions{Container: mainContainer, TailLines: &tailLines}).DoRaw(ctx); err == nil {
		said = lastWords(string(raw))
	}
	return deathVerdict(s.pod, t, said, s.policy.PidsLimit, s.pidsEnforced)
}

// deathVerdict is the error for a probe whose runtime's last words (said)
// show its own failure — it could not make a thread, ran out of memory, a
// bug of its own: the exit and those words. A probe ended by a signal —
// SIGTERM (exit 0), kill -ABRT 1 or -HUP 1 from a step — leaves none:
// that may be the task's own act, so the step's 137 stands, the task's
// failure as before, with a note for the step's output.
func deathVerdict(pod string, t *corev1.ContainerStateTerminated, said string, pidsLimit int64, enforced string) (string, error) {
	how := fmt.Sprintf("exit %d", t.ExitCode)
	if t.Reason != "" {
		how += ", " + t.Reason
	}
	if said == "" {
		if t.ExitCode == 0 {
			how += ": it ends so on SIGTERM"
		} else if t.ExitCode > 128 {
			how += fmt.Sprintf(": signal %d, not an OOM kill", t.ExitCode-128)
		}
		return fmt.Sprintf("headroom: the probe, PID 1 of pod %s, ended under the step (%s), every process of the container with it", pod, how), nil
	}
	how += ": " + said + pidsNote(said, pidsLimit, enforced)
	return "", fmt.Errorf("headroom's probe, PID 1 of pod %s, died under the step (%s): the step's end and the trial's counters are lost", pod, how)
}

// lastWords are a Go runtime's own lines of its own failure in a
// container's log ("runtime: …", "fatal error: …", "panic: …"), at most
// three, "" when none (a crash on a signal sent to it prints the
// signal's name instead: "SIGABRT: abort").
func lastWords(log string) string {
	var words []string
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "runtime: ") || strings.HasPrefix(l, "runtime/cgo: ") || strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "panic: ") {
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
