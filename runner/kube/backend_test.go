package kube

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
)

// fakeProbe answers the backend as the probe would, over a fake attach:
// hello, samples carrying the kill counter, steps ("oom" is a child the
// kernel kills: the counter rises, PID 1 lives), the peak and the final
// counters.
type fakeProbe struct {
	mu    sync.Mutex
	kills int
	execs [][]string
	stdin []byte
	// firstSample, when set, is the probe's first reading's delay after
	// its hello: its sampling period (a step may open before it).
	firstSample time.Duration
	// execErr, when set, is the exec's error (the runtime's word).
	execErr func(argv []string) error
	// files are what the probe's cat finds, by container and path
	// ("svc-web:/sys/fs/cgroup/…"); containers, each exec's container.
	files      map[string]string
	containers []string
	// id is what id(1) says in the pod ("" : the image has no id).
	id string
	// pidsHits is the final counters' refused forks.
	pidsHits int
}

func (f *fakeProbe) Attach(ctx context.Context, pod, container string, stdin io.Reader, stdout, stderr io.Writer) error {
	send := func(l workload.ProbeLine) { fmt.Fprintln(stdout, l.String()) }
	sample := func() {
		f.mu.Lock()
		k := f.kills
		f.mu.Unlock()
		send(workload.ProbeLine{Kind: workload.ProbeSample, Time: time.Now(), Reading: cgroup.Reading{Usage: 100 << 20, InactiveFile: 10 << 20, OOMKills: k, CPU: model.CPUUse{UsageNanos: 7e6}}})
	}
	// Output before the attach (the hello) is not seen: the backend asks.
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		var c workload.Command
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return err
		}
		switch c.Op {
		case workload.OpHello:
			send(workload.ProbeLine{Kind: workload.ProbeHello, Version: 1, Every: 50 * time.Millisecond})
			if f.firstSample > 0 {
				time.AfterFunc(f.firstSample, sample)
			}
		case workload.OpPeak:
			send(workload.ProbeLine{Kind: workload.ProbePeak, ID: c.End, Peak: 150 << 20, Known: true})
		case workload.OpFinal:
			f.mu.Lock()
			send(workload.ProbeLine{Kind: workload.ProbeFinal, ID: c.End, LimitHits: 2, Known: true, OOMKills: f.kills, PidsHits: f.pidsHits})
			f.mu.Unlock()
		case workload.OpKill:
			return nil
		case workload.OpUser:
			code := 0
			if c.Argv[0] == "ghost" {
				send(workload.ProbeLine{Kind: workload.ProbeErr, ID: c.End, Text: "unable to find user ghost: not in /etc/passwd"})
				code = 126
			}
			send(workload.ProbeLine{Kind: workload.ProbeExit, ID: c.End, Code: code})
		default:
			sample()
			code := 0
			if c.Argv[0] == "oom" {
				f.mu.Lock()
				f.kills++
				f.mu.Unlock()
				sample()
				code = 137
			}
			send(workload.ProbeLine{Kind: workload.ProbeOut, ID: c.End, Text: "ran " + strings.Join(c.Argv, " ")})
			send(workload.ProbeLine{Kind: workload.ProbeErr, ID: c.End, Text: "user=" + c.User})
			send(workload.ProbeLine{Kind: workload.ProbeExit, ID: c.End, Code: code})
		}
	}
	return nil
}

func (f *fakeProbe) Exec(ctx context.Context, pod, container string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	f.mu.Lock()
	f.execs = append(f.execs, argv)
	f.containers = append(f.containers, container)
	content, isFile := f.files[container+":"+argv[len(argv)-1]]
	f.mu.Unlock()
	if len(argv) > 1 && argv[1] == workload.ProbeMode {
		// The probe exec'd beside PID 1: it serves the exec's streams.
		return 0, f.Attach(ctx, pod, container, stdin, stdout, stderr)
	}
	if stdin != nil {
		b, _ := io.ReadAll(stdin)
		f.mu.Lock()
		f.stdin = b
		f.mu.Unlock()
	}
	if f.execErr != nil {
		if err := f.execErr(argv); err != nil {
			return 0, err
		}
	}
	if len(argv) == 1 && argv[0] == "id" {
		if f.id == "" {
			return 0, errors.New(`exec: "id": executable file not found in $PATH`)
		}
		io.WriteString(stdout, f.id+"\n")
		return 0, nil
	}
	if len(argv) > 1 && argv[1] == workload.CatMode {
		if isFile {
			io.WriteString(stdout, content)
			return 0, nil
		}
		if argv[2] == "/missing" || container != mainContainer {
			fmt.Fprintln(stderr, "hr-workload cat: open /missing: no such file or directory")
			return workload.CatMissing, nil
		}
		io.WriteString(stdout, "reward 1\n")
	}
	return 0, nil
}

// scheduler plays the cluster: it holds each new pod unschedulable, and
// lets it run once the backend has said it waits.
func scheduler(t *testing.T, cs *fake.Clientset, ns string, waited <-chan string) {
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			pod := ev.Object.(*corev1.Pod).DeepCopy()
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient memory."}}}
			if _, err := cs.CoreV1().Pods(ns).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-waited:
			case <-time.After(10 * time.Second):
				t.Error("the backend never said the pod waits")
				return
			}
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: mainContainer, ContainerID: "containerd://cid", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
			if _, err := cs.CoreV1().Pods(ns).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
			return
		}
	}()
}

func fakePlatform(t *testing.T) (*Platform, *fake.Clientset, *fakeProbe) {
	cs := fake.NewSimpleClientset()
	p := newPlatform(cs, nil, map[string]string{OptNamespace: "hr", OptProbe: "on"})
	fp := &fakeProbe{}
	p.remote = fp
	return p, cs, fp
}

// A whole trial on the fake cluster: the pod waits unschedulable (said
// through the request's Waiting), runs, its probe drives the steps and
// reports a child's kill by its counter, the final counters are read,
// and nothing is left.
func TestTrialOnFakeCluster(t *testing.T) {
	p, cs, fp := fakePlatform(t)
	waited := make(chan string, 4)
	scheduler(t, cs, "hr", waited)
	ctx := context.Background()
	tell := func(r string) { waited <- r }
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trial := model.Trial{ID: "t0001", Policy: policy(1)}
	done := make(chan struct{})
	var sb runner.Sandbox
	go func() {
		defer close(done)
		sb, err = b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: trial, Task: builtinTask(), Waiting: tell})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Start did not return")
	}
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-waited:
		t.Fatalf("a second waiting report %q", r)
	default:
	}
	if pm := sb.(runner.PeakModer).PeakMode(); pm != cgroup.PeakSamples {
		t.Errorf("peak mode %q, want %q: the probe's samples carry no mark", pm, cgroup.PeakSamples)
	}
	if sb.SampleSource() != "probe-cgroup-v1" || sb.StepRunner() != "driver" || sb.ID() != PodName("exp1", "t0001") {
		t.Errorf("source %q runner %q id %q", sb.SampleSource(), sb.StepRunner(), sb.ID())
	}
	var lines []string
	res, err := sb.Exec(ctx, []string{"echo", "hi"}, nil, "nobody", func(stream, text string) { lines = append(lines, stream+":"+text) })
	if err != nil || res.ExitCode != 0 || strings.Join(lines, "|") != "stdout:ran echo hi|stderr:user=nobody" {
		t.Errorf("step: %+v %v %q", res, err, lines)
	}
	res, err = sb.Exec(ctx, []string{"oom"}, nil, "", func(string, string) {})
	if err != nil || res.ExitCode != 137 {
		t.Errorf("killed child: %+v %v", res, err)
	}
	select {
	case o := <-sb.OOMs():
		if o.Count != 1 || o.Source != "probe" {
			t.Errorf("kill signal %+v", o)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the probe's kill counter was not signalled")
	}
	var sm event.Sample
	select {
	case sm = <-sb.Samples():
	case <-time.After(5 * time.Second):
		t.Fatal("no sample")
	}
	if sm.UsageBytes != 100<<20 || sm.WorkingSetBytes != 90<<20 || sm.CacheBytes != 10<<20 {
		t.Errorf("sample %+v", sm)
	}
	if peak, ok := sb.TakeKernelPeak(); !ok || peak != 150<<20 {
		t.Errorf("peak %d %v", peak, ok)
	}
	if err := sb.CopyIn(ctx, []model.Upload{{To: "/work", Name: "x.txt", Content: "hello"}}); err != nil {
		t.Fatal(err)
	}
	if data, err := sb.ReadFile(ctx, "/logs/reward.txt"); err != nil || string(data) != "reward 1\n" {
		t.Errorf("ReadFile %q %v", data, err)
	}
	if _, err := sb.ReadFile(ctx, "/missing"); err == nil || !strings.Contains(err.Error(), "file does not exist") {
		t.Errorf("missing file: %v", err)
	}
	fp.mu.Lock()
	if got := strings.Join(fp.execs[0], " "); got != wire.Binary+" untar /" || !strings.Contains(string(fp.stdin), "work/x.txt") {
		t.Errorf("copy in: %q, tar of %d bytes", got, len(fp.stdin))
	}
	fp.mu.Unlock()
	owned, err := p.Owned(ctx)
	if err != nil || len(owned) != 2 {
		t.Fatalf("owned %+v %v", owned, err)
	}
	for _, o := range owned {
		trial := "t0001"
		if o.Kind == KindNetworkPolicy {
			trial = "" // the experiment's, not the trial's
		}
		if o.Experiment != "exp1" || o.Trial != trial || o.Owner != p.owner || !o.OwnerAlive {
			t.Errorf("owned %+v", o)
		}
	}
	f, err := sb.Remove(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !f.OOMKilled || !f.LimitHitsKnown || f.LimitHits != 2 || f.KernelPeakBytes != 150<<20 {
		t.Errorf("final %+v", f)
	}
	b.Close() // the experiment's NetworkPolicy goes with the backend
	if owned, _ := p.Owned(ctx); len(owned) != 0 {
		t.Errorf("left behind: %+v", owned)
	}
	for range sb.Samples() { // closed by Remove
	}
}

// A pod whose image is not on the node fails the start with the reason
// and what to do, and is deleted.
func TestStartFailsOnMissingImage(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	w, err := cs.CoreV1().Pods("hr").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added {
				pod := ev.Object.(*corev1.Pod).DeepCopy()
				pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: mainContainer, Image: pod.Spec.Containers[0].Image,
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "not present with pull policy of Never"}}}}}
				cs.CoreV1().Pods("hr").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
				return
			}
		}
	}()
	b, _ := p.Sandboxes(context.Background(), runner.SandboxOptions{})
	_, err = b.Start(context.Background(), runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t2", Policy: policy(1)}, Task: builtinTask()})
	if err == nil || !strings.Contains(err.Error(), "ErrImageNeverPull") || !strings.Contains(err.Error(), "import it") {
		t.Fatalf("start: %v", err)
	}
	b.Close() // the experiment's NetworkPolicy goes with the backend
	if owned, _ := p.Owned(context.Background()); len(owned) != 0 {
		t.Errorf("left behind: %+v", owned)
	}
}

// The reaper's view: pods and policies by label, owner from the
// annotation, a dead owner on this host seen as dead; Remove of one
// already gone is fine.
func TestOwnedAndRemove(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	task := builtinTask()
	parts := strings.Split(p.owner, ":")
	parts[1], parts[2] = "999999999", "1"
	dead := podConfig{Namespace: "hr", Owner: strings.Join(parts, ":")}
	for _, id := range []string{"a", "b"} {
		if _, err := cs.CoreV1().Pods("hr").Create(context.Background(), Pod("e", model.Trial{ID: id}, task, dead), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cs.CoreV1().Pods("hr").Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "not-ours", Namespace: "hr"}}, metav1.CreateOptions{})
	owned, err := p.Owned(context.Background())
	if err != nil || len(owned) != 2 {
		t.Fatalf("owned %+v %v", owned, err)
	}
	for _, o := range owned {
		if o.OwnerAlive || o.Kind != KindPod {
			t.Errorf("%+v: a dead owner on this host", o)
		}
		if err := p.Remove(context.Background(), o); err != nil {
			t.Error(err)
		}
		if err := p.Remove(context.Background(), o); err != nil {
			t.Errorf("removing again: %v", err)
		}
	}
	if owned, _ := p.Owned(context.Background()); len(owned) != 0 {
		t.Errorf("left: %+v", owned)
	}
	if _, err := cs.CoreV1().Pods("hr").Get(context.Background(), "not-ours", metav1.GetOptions{}); err != nil {
		t.Error("a pod without the label was touched")
	}
}
