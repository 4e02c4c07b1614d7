package kube

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// composeTask is terminal-bench's client/server shape: the task's
// container waits for its server to be healthy; the server needs a
// database started first; a named volume is shared.
func composeTask() model.Task {
	return model.Task{
		Name: "tb/client-server", Image: "tb/client:1", IdleCommand: []string{"sleep", "infinity"}, Network: model.NetworkTrialOnly,
		Format:    model.FormatHeadroom,
		DependsOn: []model.Dependency{{Service: "server", Condition: model.ServiceHealthy}},
		Volumes:   []model.VolumeMount{{Volume: "shared", Target: "/data"}},
		Ports:     []string{"3000/tcp"},
		Sidecars: []model.Sidecar{
			{Name: "server", Image: "tb/server:1", Command: []string{"python", "server.py"}, Env: []string{"PORT=8000"}, User: "1000:1000",
				Aliases: []string{"api"}, MemoryLimitBytes: 256 << 20, CPUs: 0.5, Ports: []string{"8000/tcp"},
				DependsOn:   []model.Dependency{{Service: "db", Condition: model.ServiceStarted}},
				Healthcheck: &model.Healthcheck{Test: []string{"CMD-SHELL", "curl -f http://localhost:8000/"}, Interval: 2 * time.Second, Timeout: 1500 * time.Millisecond, Retries: 5},
				Volumes:     []model.VolumeMount{{Volume: "shared", Target: "/srv", ReadOnly: true}}},
			{Name: "db", Image: "postgres:16", Entrypoint: []string{"docker-entrypoint.sh"}, Ports: []string{"5432/tcp"}, Capabilities: []string{"CAP_SYS_NICE"}},
		},
	}
}

// A compose task's services are more containers of the trial's pod: the
// ratio's requests and limits on the task's container only, each sidecar
// its compose limits or none, in start order, every service's name at
// 127.0.0.1, its healthcheck the kubelet's readiness check, the probe's
// binary mounted (to read its peak), named volumes as emptyDirs, and a
// deny-all policy for a task with only its services for a network.
func TestPodComposeSidecars(t *testing.T) {
	task := composeTask()
	task.Resources.CPUs = 0.25
	c := podConfig{Namespace: "hr", Probe: true, ProbeImage: "headroom/workload:abc", Pull: corev1.PullNever}
	pod := Pod("e", model.Trial{ID: "t1", Policy: policy(2)}, task, c)
	var names []string
	for _, ctr := range pod.Spec.Containers {
		names = append(names, ctr.Name)
		if errs := validation.IsDNS1123Label(ctr.Name); len(errs) > 0 {
			t.Errorf("container name %q: %v", ctr.Name, errs)
		}
	}
	if strings.Join(names, " ") != "task svc-db svc-server" {
		t.Fatalf("containers %q: want the task's, then db before the server that depends on it", names)
	}
	main, db, server := pod.Spec.Containers[0], pod.Spec.Containers[1], pod.Spec.Containers[2]
	if qty(t, main.Resources.Limits, corev1.ResourceMemory) != "263424Ki" || qty(t, main.Resources.Requests, corev1.ResourceMemory) != "132352Ki" { // 2x 128 MiB and the probe's 1.25 MiB
		t.Errorf("task's resources %+v", main.Resources)
	}
	// db declares no limits: it gets the stated default bound, as on
	// Docker (a sidecar with none held whatever the node had), as a limit
	// (its memory request the same, its CPU request 10m) outside the
	// task's ratio.
	// Its CPU limit is the task's own spec (model.Sidecar.CPUBound): with
	// none a service did the task's work beyond its cpus.
	if qty(t, db.Resources.Limits, corev1.ResourceMemory) != "1Gi" || qty(t, db.Resources.Limits, corev1.ResourceCPU) != "250m" || qty(t, db.Resources.Requests, corev1.ResourceCPU) != "10m" || len(db.Resources.Requests) != 1 {
		t.Errorf("db declares no limits: got %+v, want the default 1Gi bound and the task's 0.25 CPU as its limits", db.Resources)
	}
	if qty(t, server.Resources.Limits, corev1.ResourceMemory) != "256Mi" || qty(t, server.Resources.Limits, corev1.ResourceCPU) != "500m" || qty(t, server.Resources.Requests, corev1.ResourceCPU) != "10m" || len(server.Resources.Requests) != 1 {
		t.Errorf("server's compose limits %+v", server.Resources)
	}
	if strings.Join(db.Command, " ") != "docker-entrypoint.sh" || db.Args != nil || server.Command != nil || strings.Join(server.Args, " ") != "python server.py" {
		t.Errorf("entrypoint/command: db %q %q, server %q %q", db.Command, db.Args, server.Command, server.Args)
	}
	if server.Image != "tb/server:1" || server.ImagePullPolicy != corev1.PullNever || server.Env[0].Name != "PORT" || *server.SecurityContext.RunAsUser != 1000 {
		t.Errorf("server %s %s env %+v sc %+v", server.Image, server.ImagePullPolicy, server.Env, server.SecurityContext)
	}
	rp := server.ReadinessProbe
	if rp == nil || strings.Join(rp.Exec.Command, " ") != "/bin/sh -c curl -f http://localhost:8000/" || rp.PeriodSeconds != 2 || rp.TimeoutSeconds != 2 || rp.FailureThreshold != 5 {
		t.Fatalf("server's healthcheck as readiness %+v", rp)
	}
	if sc := db.SecurityContext; sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Add) != 1 || sc.Capabilities.Add[0] != "SYS_NICE" {
		t.Errorf("db's cap_add %+v", db.SecurityContext)
	}
	if db.ReadinessProbe != nil {
		t.Error("db has no healthcheck but got a readiness probe")
	}
	if len(pod.Spec.HostAliases) != 1 || pod.Spec.HostAliases[0].IP != "127.0.0.1" ||
		strings.Join(pod.Spec.HostAliases[0].Hostnames, " ") != "server api db main client" {
		t.Errorf("host aliases %+v", pod.Spec.HostAliases)
	}
	mounts := func(ctr corev1.Container) (out []string) {
		for _, m := range ctr.VolumeMounts {
			out = append(out, m.Name+":"+m.MountPath)
		}
		return out
	}
	if got := mounts(main); !slices.Equal(got, []string{probeVolume + ":" + ProbeDir, "vol-shared:/data"}) {
		t.Errorf("task's mounts %q", got)
	}
	if got := mounts(server); !slices.Equal(got, []string{probeVolume + ":" + ProbeDir, "vol-shared:/srv"}) || !server.VolumeMounts[1].ReadOnly {
		t.Errorf("server's mounts %q", got)
	}
	var vols []string
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir == nil {
			t.Errorf("volume %s is not an emptyDir", v.Name)
		}
		vols = append(vols, v.Name)
	}
	if !slices.Equal(vols, []string{probeVolume, "vol-shared"}) {
		t.Errorf("volumes %q", vols)
	}
	if np := NetworkPolicy("e", task, c); np == nil || len(np.Spec.PolicyTypes) != 2 {
		t.Errorf("a task with only its services for a network got policy %+v", np)
	}
	if sidecarRefusal(task) != nil {
		t.Errorf("refused: %v", sidecarRefusal(task))
	}
	// Without the probe, no probe volume anywhere.
	c.Probe = false
	for _, ctr := range Pod("e", model.Trial{ID: "t1"}, task, c).Spec.Containers {
		if slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == probeVolume }) {
			t.Errorf("%s mounts the probe's volume without the probe", ctr.Name)
		}
	}
}

// What one pod cannot give a compose task's services is refused before
// any pod starts, saying which services and why.
func TestSidecarRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*model.Task)
		want string
	}{
		{"two listen on one port", func(t *model.Task) { t.Sidecars[1].Ports = []string{"8000/tcp"} }, "sidecar db and sidecar server both listen on port 8000/tcp"},
		{"a sidecar on the task's port", func(t *model.Task) { t.Sidecars[0].Ports = []string{"3000/tcp"} }, "sidecar server and the task's own service both listen on port 3000/tcp"},
		{"files bind-mounted in", func(t *model.Task) { t.Sidecars[0].Files = []model.Upload{{To: "/srv", Name: "a"}} }, "sidecar server has files bind-mounted in"},
		{"a named user", func(t *model.Task) { t.Sidecars[1].User = "postgres" }, `sidecar db runs as user "postgres"`},
	} {
		task := composeTask()
		tc.edit(&task)
		err := sidecarRefusal(task)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--backend docker") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// The same port under another protocol does not collide.
	task := composeTask()
	task.Sidecars[1].Ports = []string{"8000/udp"}
	if err := sidecarRefusal(task); err != nil {
		t.Errorf("udp beside tcp: %v", err)
	}
}

// composeCluster plays the cluster for a compose task: the pod runs with
// the server started but not ready (its healthcheck not yet passed) and
// db OOM-killed; once the backend says it waits for the services, the
// server turns ready.
func composeCluster(t *testing.T, cs *fake.Clientset, waited <-chan string) {
	w, err := cs.CoreV1().Pods("hr").Watch(context.Background(), metav1.ListOptions{})
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
			running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: mainContainer, ContainerID: "containerd://cid", State: running, Ready: true},
				{Name: "svc-db", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: ReasonOOMKilled, ExitCode: 137}}},
				{Name: "svc-server", State: running},
			}}
			if _, err := cs.CoreV1().Pods("hr").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
				return
			}
			select {
			case r := <-waited:
				if !strings.Contains(r, "compose services") {
					t.Errorf("waiting for %q", r)
				}
			case <-time.After(10 * time.Second):
				t.Error("the backend never said it waits for the services")
				return
			}
			pod.Status.ContainerStatuses[2].Ready = true
			if _, err := cs.CoreV1().Pods("hr").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
			return
		}
	}()
}

// A compose trial on the fake cluster: Start returns only once the
// service the task waits for is healthy (ready); at the end each
// sidecar's peak is read from its own cgroup, a sidecar the kernel
// killed is named so (its peak its limit), and a sidecar's kill is not
// the trial's.
func TestComposeTrialOnFakeCluster(t *testing.T) {
	p, cs, fp := fakePlatform(t)
	fp.files = map[string]string{
		"svc-server:/sys/fs/cgroup/memory/memory.max_usage_in_bytes": "73400320\n",
		"svc-server:/sys/fs/cgroup/memory/memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
	}
	waited := make(chan string, 4)
	composeCluster(t, cs, waited)
	ctx := context.Background()
	tell := func(r string) { waited <- r }
	bk, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bk.(*backend).probeImage = "headroom/workload:abc"
	task := composeTask()
	task.Sidecars[1].MemoryLimitBytes = 64 << 20
	type started struct {
		sb  runner.Sandbox
		err error
	}
	done := make(chan started, 1)
	go func() {
		sb, err := bk.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t1", Policy: policy(1)}, Task: task, Waiting: tell})
		done <- started{sb, err}
	}()
	var st started
	select {
	case st = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Start did not return")
	}
	if st.err != nil {
		t.Fatal(st.err)
	}
	pod, err := cs.CoreV1().Pods("hr").Get(ctx, st.sb.ID(), metav1.GetOptions{})
	if err != nil || !pod.Status.ContainerStatuses[2].Ready {
		t.Fatalf("Start returned before the server was ready: %v", err)
	}
	f, err := st.sb.Remove(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f.OOMKilled {
		t.Error("a sidecar's kill was taken for the trial's")
	}
	// Each with the CPU bound its pod container had: server's compose
	// cpus, db's the task's (none here: the default).
	want := []model.SidecarUsage{{Name: "server", PeakBytes: 70 << 20, CPUs: 0.5}, {Name: "db", PeakBytes: 64 << 20, OOMKilled: true, CPUs: model.DefaultCPUs}}
	if !slices.Equal(f.Sidecars, want) {
		t.Errorf("sidecars %+v, want %+v", f.Sidecars, want)
	}
	fp.mu.Lock()
	defer fp.mu.Unlock()
	for i, argv := range fp.execs {
		if fp.containers[i] == "svc-server" && (argv[0] != runner.TaskDriverPath || argv[1] != workload.CatMode) {
			t.Errorf("the server's cgroup read by %q, not the probe's cat", argv)
		}
	}
}

// A sidecar the task waits to finish successfully that fails fails the
// start, naming it; a task's container that waits for a healthy service
// with no healthcheck is refused too.
func TestSidecarsReady(t *testing.T) {
	task := composeTask()
	task.DependsOn = append(task.DependsOn, model.Dependency{Service: "db", Condition: model.ServiceCompleted})
	pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{Name: "svc-db", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 3}}},
		{Name: "svc-server", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, Ready: true},
	}}}
	if _, err := sidecarsReady(pod, task); err == nil || !strings.Contains(err.Error(), "sidecar db exited 3") {
		t.Errorf("failed job: %v", err)
	}
	pod.Status.ContainerStatuses[0].State.Terminated.ExitCode = 0
	if ok, err := sidecarsReady(pod, task); !ok || err != nil {
		t.Errorf("finished job and healthy server: %v %v", ok, err)
	}
	task.Sidecars[0].Healthcheck = nil
	if _, err := sidecarsReady(pod, task); err == nil || !strings.Contains(err.Error(), "no healthcheck") {
		t.Errorf("healthy without a healthcheck: %v", err)
	}
	// Harbor waits for every healthcheck, asked for or not.
	h := composeTask()
	h.Format, h.DependsOn = model.FormatHarbor, nil
	pod.Status.ContainerStatuses[1].Ready = false
	if ok, _ := sidecarsReady(pod, h); ok {
		t.Error("harbor: ready before the server's healthcheck passed")
	}
}
