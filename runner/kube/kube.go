// Package kube runs trials on a Kubernetes cluster: one pod per trial,
// the policy as its requests and limits, headroom's probe as its PID 1
// reading the pod's own cgroup and driving its steps, and kills read from
// the probe's counter and the pod's status. It implements runner.Platform;
// images are built with the local Docker engine and pushed to a registry
// or imported into a local cluster's containerd.
package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
)

// Name is the backend's registered name.
const Name = "kubernetes"

// Settings, by option name.
const (
	OptKubeconfig = "kubeconfig"
	OptContext    = "context"
	OptNamespace  = "namespace"
	OptRegistry   = "image-registry"
	OptContainerd = "containerd-socket"
	OptProbe      = "pod-probe"
)

// DefaultNamespace is where trials' pods go unless told.
const DefaultNamespace = "headroom"

// Definition registers the backend, its images made by the builder build
// opens (main_kube.go: runner.Register(kube.Definition(docker.OpenBuilder)),
// the local Docker engine) and then put on the cluster.
func Definition(build runner.OpenImageBuilder) runner.BackendDef {
	return runner.BackendDef{
		Name:    Name,
		Summary: "a Kubernetes cluster: one pod per trial (requests = guarantee, limits = hard limit)",
		Reproduce: func(t model.Task, image string, p model.ResourcePolicy) string {
			return Reproduce(DefaultNamespace, t, image, p)
		},
		PolicyArgs:     PolicyArgs,
		PolicyArgsName: "pod resources",
		Noun:           Name + " cluster",
		ConnectFix:     "check --kubeconfig, --context and that the cluster answers (`kubectl get nodes`)",
		Places:         true,
		CPUCap:         "on " + Name + " a run caps at the node's allocatable CPUs, read when it connects",
		Options: []runner.PlatformOption{
			{Name: OptKubeconfig, Usage: "kubeconfig file ($KUBECONFIG, else ~/.kube/config)", Default: defaultKubeconfig()},
			{Name: OptContext, Usage: "kubeconfig context (none: the file's current one)"},
			{Name: OptNamespace, Usage: "namespace of the trials' pods (made when missing)", Default: DefaultNamespace},
			{Name: OptRegistry, Usage: "registry the cluster pulls from: images are tagged REGISTRY/NAME:TAG and pushed (none: a local cluster, images imported)"},
			{Name: OptContainerd, Usage: "a local cluster's containerd socket, where images are imported (docker save | ctr import); a containerd.sock beside the kubeconfig is used when there"},
			{Name: OptProbe, Usage: "on: headroom's probe in each pod samples its cgroup and drives the steps; off: the metrics API only", Default: "on"},
		},
		Open: func(ctx context.Context, s map[string]string) (runner.Platform, error) { return Open(ctx, s, build) },
	}
}

func defaultKubeconfig() string {
	if k := os.Getenv("KUBECONFIG"); k != "" {
		return k
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".kube", "config")
	}
	return ""
}

// Platform is one cluster and namespace.
type Platform struct {
	cs   kubernetes.Interface
	cfg  *rest.Config
	ns   string
	set  map[string]string
	host string // the API server
	// owner labels what this process makes.
	owner string

	// remote runs exec and attach streams (a test's fake in unit tests).
	remote streamer

	// nsUnseen: the namespace could neither be read nor made (RBAC).
	nsUnseen bool
	// apiWait bounds the wait for an API server that went away
	// (DefaultAPIWait when 0).
	apiWait time.Duration
	// slowAfter is how long a start's call goes unanswered before the
	// trial says it waits on the API server (DefaultSlowCall when 0).
	slowAfter time.Duration

	// readKubeletConfig, when set, replaces the node proxy's /configz
	// (a test's fake).
	readKubeletConfig func(ctx context.Context, node string) ([]byte, error)
	// readPodMetrics, when set, replaces the metrics API's read of a
	// pod's PodMetrics (a test's fake), and metricsServed, its presence.
	readPodMetrics func(ctx context.Context, pod string) ([]byte, error)
	metricsServed  func() error

	// build opens the builder of the images (the local Docker engine's,
	// as registered); builder is it once open.
	build   runner.OpenImageBuilder
	mu      sync.Mutex
	builder runner.ImageBuilder
	images  map[string]string
	// imageConfigs are the task images' configs, inspected once each.
	imageConfigs map[string]imageConfig
	// nodePids are the nodes' pod pids limits, read once each.
	nodePids map[string]nodePids
}

// Open connects with the settings; the API server must answer. Images are
// made by the builder build opens, when first needed.
func Open(ctx context.Context, s map[string]string, build runner.OpenImageBuilder) (*Platform, error) {
	return openWith(ctx, s, build, nil)
}

// Client-side rate limit of the API client. client-go's default (5/10)
// holds every sweep of short trials; 50/100 still held over 80% of the
// requests of 32 trials at once on kwok's fake nodes (about 5 requests a
// trial then: 10 trials/s at most, 2 s of every trial spent waiting on
// the limiter). 200/400 held none there, and the cluster (scheduler and
// kubelets) set the pace instead; on a quiet machine, at 42 trials/s and
// 5 requests a trial, it bound again (0.27 s a trial). With one
// NetworkPolicy per experiment a trial makes 3.1, so it binds past ~64
// trials/s: docs/PERFORMANCE.md, "Kubernetes at scale". The API server's own priority and fairness (APF) queues a
// client that asks too much, per user, without a client's guess.
const (
	clientQPS   = 200
	clientBurst = 400
)

// openWith is Open with a last word on the client's configuration (a
// test's counting transport).
func openWith(ctx context.Context, s map[string]string, build runner.OpenImageBuilder, tweak func(*rest.Config)) (*Platform, error) {
	quietClientGo()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if s[OptKubeconfig] != "" {
		rules.ExplicitPath = s[OptKubeconfig]
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: s[OptContext]})
	ns := s[OptNamespace]
	if ns == "" {
		ns = DefaultNamespace
	}
	if err := checkName(ns); err != nil {
		return nil, err
	}
	if kc := s[OptKubeconfig]; kc != "" {
		// A file that is not there is the command line's mistake (exit 2).
		if _, err := os.Stat(kc); err != nil {
			return nil, runner.SettingError{Err: fmt.Errorf("--kubeconfig %s: %w: pass the path of a kubeconfig file (kubectl's is ~/.kube/config; make kube-up's /tmp/headroom-kube/kubeconfig)", kc, err)}
		}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w (set --kubeconfig, or KUBECONFIG)", s[OptKubeconfig], err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	if tweak != nil {
		tweak(cfg)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if s[OptContainerd] == "" && s[OptRegistry] == "" && s[OptKubeconfig] != "" {
		// `make kube-up`'s cluster keeps its containerd's socket beside
		// its kubeconfig: images go there without being told.
		sock := filepath.Join(filepath.Dir(s[OptKubeconfig]), "containerd.sock")
		if st, err := os.Stat(sock); err == nil && st.Mode()&os.ModeSocket != 0 {
			s = maps.Clone(s)
			s[OptContainerd] = sock
		}
	}
	p := newPlatform(cs, cfg, s)
	p.build = build
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		return nil, fmt.Errorf("kubernetes API server %s not reachable: %w (is the cluster up? try `headroom doctor --backend kubernetes`)", cfg.Host, err)
	}
	if err := p.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// quietClientGo stops client-go's own logging (klog on stderr): a closed
// attach stream is logged as an "Unhandled Error" there, which would
// land on the console's screen. headroom reports what matters itself.
var quietClientGo = sync.OnceFunc(func() {
	klog.SetLogger(logr.Discard())
})

func newPlatform(cs kubernetes.Interface, cfg *rest.Config, s map[string]string) *Platform {
	// Before any informer of this platform logs (klog's logger is set
	// once, racing a reflector another platform started otherwise).
	quietClientGo()
	ns := s[OptNamespace]
	if ns == "" {
		ns = DefaultNamespace
	}
	host := ""
	if cfg != nil {
		host = cfg.Host
	}
	p := &Platform{cs: cs, cfg: cfg, ns: ns, set: s, host: host, owner: runner.Owner(), images: map[string]string{}}
	if cfg != nil {
		p.remote = remote{cfg: cfg, rc: cs.CoreV1().RESTClient(), ns: ns}
	}
	return p
}

// streams is the exec and attach of the pods.
func (p *Platform) streams() streamer { return p.remote }

// ensureNamespace makes the namespace when it is missing; one headroom
// may not make (RBAC) must exist already, and the error says so.
func (p *Platform) ensureNamespace(ctx context.Context) error {
	_, err := p.cs.CoreV1().Namespaces().Get(ctx, p.ns, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("namespace %s: %w", p.ns, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns, Labels: map[string]string{LabelHeadroom: "1"}}}
	if _, cerr := p.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); cerr != nil && !apierrors.IsAlreadyExists(cerr) {
		if apierrors.IsForbidden(err) {
			// Not allowed to look at namespaces: pods in it may still be
			// (Sandboxes checks, before the first trial).
			p.nsUnseen = true
			return nil
		}
		return fmt.Errorf("namespace %s is missing and cannot be made (%v): ask the cluster's admin for it (`kubectl create namespace %s`) or pass --namespace a namespace you may use", p.ns, cerr, p.ns)
	}
	return nil
}

// Namespace is where the trials' pods go.
func (p *Platform) Namespace() string { return p.ns }

// Close releases the clients.
func (p *Platform) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.builder != nil {
		return p.builder.Close()
	}
	return nil
}

// Shell opens a shell in a trial's pod.
func (p *Platform) Shell(sandboxID string) ([]string, error) {
	if sandboxID == "" {
		return nil, errors.New("no pod to open a shell in")
	}
	args := []string{"kubectl"}
	if k := p.set[OptKubeconfig]; k != "" {
		args = append(args, "--kubeconfig", k)
	}
	if c := p.set[OptContext]; c != "" {
		args = append(args, "--context", c)
	}
	args = append(args, "exec", "-it", "-n", p.ns, sandboxID, "-c", mainContainer, "--")
	return append(args, p.shellArgv(sandboxID)...), nil
}

// shellArgv is the shell the console opens in a trial's pod: as the
// steps' user where the pod runs as root for its probe (its annotation),
// through the probe's binary, as the Docker backend's `exec -u`.
func (p *Platform) shellArgv(pod string) []string {
	sh := []string{"sh"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := p.cs.CoreV1().Pods(p.ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil || got.Annotations[runner.LabelStepUser] == "" {
		return sh
	}
	bin := wire.Binary // the built-in image's own
	if slices.ContainsFunc(got.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == probeInstaller }) {
		bin = runner.TaskDriverPath // copied in by its init container
	}
	return workload.AsArgv(bin, got.Annotations[runner.LabelStepUser], got.Annotations[annotationKeepHome] == "1", sh)
}

// thisHost says whether a node is this machine: its name or one of its
// addresses is this host's.
func thisHost(node corev1.Node) bool {
	me, _ := os.Hostname()
	if me != "" && strings.EqualFold(node.Name, me) {
		return true
	}
	mine := map[string]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				mine[ipn.IP.String()] = true
			}
		}
	}
	for _, a := range node.Status.Addresses {
		if (a.Type == corev1.NodeHostName && strings.EqualFold(a.Address, me)) || mine[a.Address] {
			return true
		}
	}
	return false
}

var (
	_ runner.Platform    = (*Platform)(nil)
	_ runner.Backend     = (*backend)(nil)
	_ runner.Sandbox     = (*sandbox)(nil)
	_ runner.QueueWaiter = (*sandbox)(nil)
)
