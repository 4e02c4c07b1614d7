package taskfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/dotenv"
	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/model"
	"go.yaml.in/yaml/v3"
)

// A task directory's compose file is its environment only where its own
// harness reads it. Harbor's Docker environment reads
// environment/docker-compose.yaml, merged over its own base compose that
// defines the service "main" (built from environment/Dockerfile, or the
// task's docker_image, idling on `sleep infinity`, with the task's cpus
// and memory as limits); terminal-bench reads the task's
// docker-compose.yaml, whose service named by container_name
// ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME} (by convention "client")
// runs the task. Any other compose file (docker-compose.yml, compose.yaml,
// one in a subdirectory) is the task's data, which a Dockerfile may COPY.
const composeFile = "docker-compose.yaml"

// Main services: Harbor's fixed name, and terminal-bench's convention.
const (
	harborMainService = "main"
	tbMainService     = "client"
	tbContainerVar    = "T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME"
)

// composeHarness is what a harness brings to a compose file: which
// service runs the task, the variables it interpolates, and the
// directories it bind-mounts itself (headroom makes those in the
// container instead).
type composeHarness struct {
	main string
	// baseMain: the harness defines main itself, so a compose file may
	// leave it out or only amend it (Harbor).
	baseMain  bool
	vars      map[string]string
	ownMounts map[string]bool // container paths
	// secrets are the task's own pass-through variables (NAME → host
	// variable): a compose value naming one passes it on.
	secrets map[string]string
}

// harborHarness is Harbor's Docker environment for a task: its compose
// variables as its DockerEnvironmentEnvVars sets them.
func harborHarness(t *model.Task, envDir, dockerImage string) composeHarness {
	abs, _ := filepath.Abs(envDir)
	vars := map[string]string{
		"MAIN_IMAGE_NAME":        sanitizeImageName("hb__" + t.Name),
		"CONTEXT_DIR":            abs,
		"ENV_VERIFIER_LOGS_PATH": VerifierLogDir,
		"ENV_AGENT_LOGS_PATH":    AgentLogDir,
		"ENV_ARTIFACTS_PATH":     "/logs/artifacts",
		"CPUS":                   strconv.FormatFloat(t.Resources.CPUs, 'f', -1, 64),
		"MEMORY":                 strconv.FormatInt(t.Resources.MemoryBytes/model.MiB, 10) + "M",
		"COMPOSE_PROJECT_NAME":   sanitizeImageName(t.Name),
		// Host directories Harbor mounts at the ENV_ paths; headroom makes
		// those directories in the container instead.
		"HOST_VERIFIER_LOGS_PATH": "/harness/logs/verifier",
		"HOST_AGENT_LOGS_PATH":    "/harness/logs/agent",
		"HOST_ARTIFACTS_PATH":     "/harness/logs/artifacts",
	}
	if dockerImage != "" {
		vars["PREBUILT_IMAGE_NAME"] = dockerImage
	}
	addEnvVars(vars, t.Env)
	return composeHarness{main: harborMainService, baseMain: true, vars: vars, secrets: secretNames(t.PassEnv),
		ownMounts: map[string]bool{VerifierLogDir: true, AgentLogDir: true, "/logs/artifacts": true}}
}

// tbHarness is terminal-bench's DockerComposeManager for a task.
func tbHarness(t *model.Task) composeHarness {
	prefix := strings.ReplaceAll("tb__"+t.Name, ".", "-")
	vars := map[string]string{
		"T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME": prefix + "__client",
		tbContainerVar:                          "headroom-" + sanitizeImageName(t.Name),
		"T_BENCH_TASK_DOCKER_NAME_PREFIX":       prefix,
		"T_BENCH_CONTAINER_LOGS_PATH":           "/logs",
		"T_BENCH_CONTAINER_AGENT_LOGS_PATH":     "/agent-logs",
		"T_BENCH_TEST_DIR":                      TestsDir,
		"T_BENCH_TASK_LOGS_PATH":                "/harness/logs",
		"T_BENCH_TASK_AGENT_LOGS_PATH":          "/harness/agent-logs",
		"COMPOSE_PROJECT_NAME":                  sanitizeImageName(t.Name),
	}
	return composeHarness{main: tbMainService, vars: vars, secrets: secretNames(t.PassEnv),
		ownMounts: map[string]bool{"/logs": true, "/agent-logs": true}}
}

// projectDotEnv adds the compose project's .env to the variables a
// terminal-bench harness gives its compose file: the harness runs
// `docker compose -f <task>/docker-compose.yaml`, whose project
// directory is the task's, and compose reads .env there, for
// interpolation and for a bare NAME in environment:, under the harness's
// own variables (its environment wins). A task that took GREETING from
// its .env ran with it empty here (the twenty-eighth attacker's 4).
// Harbor puts its own base file first, so its project directory is not
// the task's, and no .env of the task's is read there.
func projectDotEnv(h composeHarness, dir string) error {
	p := filepath.Join(dir, ".env")
	data, err := readTaskFile(dir, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	vars := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := h.vars[k]; return v, ok }
	if err := dotenv.ParseWithFormat(bytes.NewReader(data), p, vars, lookup, ""); err != nil {
		return fmt.Errorf("%s: %v", p, err)
	}
	for k, v := range vars {
		if _, own := h.vars[k]; !own {
			h.vars[k] = v
		}
	}
	return nil
}

func secretNames(pass []string) map[string]string {
	m := map[string]string{}
	for _, p := range pass {
		name, host := model.PassEnvNames(p)
		m[name] = host
	}
	return m
}

func addEnvVars(vars map[string]string, env []string) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
}

var unsafeName = regexp.MustCompile(`[^a-z0-9._-]+`)

func sanitizeImageName(s string) string {
	s = unsafeName.ReplaceAllString(strings.ToLower(s), "-")
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= '0' && s[0] <= '9') {
		s = "0" + s
	}
	return s
}

// composeService is one service as decoded.
type composeService struct {
	name          string
	line          int
	image         string
	build         *model.Build
	entrypoint    []string
	command       []string
	env           []string
	passEnv       []string
	fromHost      []string // variables the harness's own environment would give
	workDir       string
	user          string
	containerName string
	networkMode   string
	memLimit      int64
	cpus          float64
	dependsOn     []model.Dependency
	healthcheck   *model.Healthcheck
	files         []model.Upload
	volumes       []model.VolumeMount
	// harnessMounts are its mounts of the harness's own log directories
	// (composeHarness.ownMounts): empty volumes of the trial's here.
	harnessMounts []string
	aliases       []string
	// networks are the compose networks it names (none: the default).
	networks []string
	hostname string
	// ports are the container ports its ports: and expose: name.
	ports []string
	// capAdd are its cap_add capabilities, capAt where each is asked
	// for (file:line).
	capAdd []string
	capAt  map[string]string
	// notes are what headroom does not honour.
	notes []model.Deviation
	// envFiles are its env_file entries, read after its environment
	// (envFromFiles).
	envFiles []envFileRef
}

// composeDoc decodes one compose file, expanding variables as it goes.
type composeDoc struct {
	path string
	dir  string
	h    composeHarness
	// taskDir bounds the host files a bind mount may copy in.
	taskDir string
	unset   map[string]bool
}

// compose is a decoded compose file: its services in file order.
type compose struct {
	services []*composeService
	notes    []model.Deviation
}

func (c *compose) service(name string) *composeService {
	for _, s := range c.services {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (d *composeDoc) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", d.path, n.Line, fmt.Sprintf(format, args...))
}

// readCompose decodes the subset of the compose specification a task
// environment uses. What it cannot honour it notes (deviations); what it
// cannot read at all is an error naming the line.
func readCompose(path, taskDir string, h composeHarness) (*compose, error) {
	data, err := readTaskFile(taskDir, path)
	if err != nil {
		return nil, err
	}
	return parseCompose(path, data, taskDir, h)
}

func parseCompose(path string, data []byte, taskDir string, h composeHarness) (*compose, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	d := &composeDoc{path: path, dir: filepath.Dir(path), h: h, taskDir: taskDir, unset: map[string]bool{}}
	c := &compose{}
	if err := d.checkMerges(&root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty compose file: give it a services: section", path)
	}
	top := resolve(root.Content[0])
	if top.Kind != yaml.MappingNode {
		return nil, d.errf(top, "a compose file is a mapping with a services: section")
	}
	for _, kv := range pairs(top) {
		k, v := kv[0].Value, kv[1]
		switch {
		case k == "services":
			if v.Kind != yaml.MappingNode {
				return nil, d.errf(v, "services: must map service names to their settings")
			}
			for _, sv := range pairs(v) {
				s, skip, err := d.service(sv[0], sv[1])
				if err != nil {
					return nil, err
				}
				if !skip {
					c.services = append(c.services, s)
				}
				if len(c.services) > model.MaxSidecars+1 {
					// The task's own service and MaxSidecars beside it.
					return nil, d.errf(sv[0], "service %s is the %dth: a task runs at most %d services beside its own container (each holds memory outside the task's limit)", s.name, len(c.services), model.MaxSidecars)
				}
			}
		case k == "networks":
			for _, nv := range pairs(v) {
				if m := mapping(nv[1]); m["external"] != nil || m["ipam"] != nil || m["internal"] != nil {
					c.notes = append(c.notes, model.Deviation{What: "compose network " + nv[0].Value + " settings not used", Detail: "external, internal and ipam are ignored: every service is on one private network per trial"})
				}
			}
		case k == "volumes":
			for _, vv := range pairs(v) {
				// name too: compose would mount that one volume in every
				// trial; here each trial gets its own (the audit called
				// the task faithful: the twenty-fifth attacker's 6).
				if m := mapping(vv[1]); m["external"] != nil || m["driver"] != nil || m["driver_opts"] != nil || m["name"] != nil {
					c.notes = append(c.notes, model.Deviation{What: "compose volume " + vv[0].Value + " settings not used", Detail: "external, name, driver and driver_opts are ignored: each trial gets a fresh local volume of its own"})
				}
			}
		case k == "version", k == "name", strings.HasPrefix(k, "x-"):
		default:
			c.notes = append(c.notes, model.Deviation{What: "compose key " + k + " not used", Detail: ""})
		}
	}
	if len(c.services) == 0 {
		return nil, fmt.Errorf("%s: no services: a compose environment needs at least the service the task runs in", path)
	}
	for _, s := range c.services {
		for _, dep := range s.dependsOn {
			if c.service(dep.Service) == nil && !(h.baseMain && dep.Service == h.main) {
				return nil, fmt.Errorf("%s:%d: service %s depends on %s, which the file does not define", path, s.line, s.name, dep.Service)
			}
		}
	}
	for _, v := range slices.Sorted(maps.Keys(d.unset)) {
		if d.unset[v] {
			c.notes = append(c.notes, model.Deviation{What: "compose variable " + v + " unset", Detail: "the harness takes it from its own environment; here it expands to \"\""})
		} else {
			// ${V:-default}: the harness's environment wins where it
			// sets V (the twenty-fourth attacker's: the audit named a
			// bare $V alone).
			c.notes = append(c.notes, model.Deviation{What: "compose variable " + v + " defaulted", Detail: "the harness takes it from its own environment where that sets it; here its default (or alternative) in the file applies"})
		}
	}
	if dev := segmented(c.services, h); dev != nil {
		c.notes = append(c.notes, *dev)
	}
	if err := checkCycles(c, path); err != nil {
		return nil, err
	}
	return c, nil
}

func checkCycles(c *compose, path string) error {
	state := map[string]int{}
	var visit func(s *composeService) error
	visit = func(s *composeService) error {
		switch state[s.name] {
		case 1:
			return fmt.Errorf("%s:%d: service %s depends on itself through depends_on", path, s.line, s.name)
		case 2:
			return nil
		}
		state[s.name] = 1
		for _, dep := range s.dependsOn {
			if ds := c.service(dep.Service); ds != nil {
				if err := visit(ds); err != nil {
					return err
				}
			}
		}
		state[s.name] = 2
		return nil
	}
	for _, s := range c.services {
		if err := visit(s); err != nil {
			return err
		}
	}
	return nil
}

// Service keys that change nothing a trial can observe (restart policy,
// labels, logging). Ports are kept for what they say of the container's
// own ports (Sidecar.Ports); publishing them to the host is not done.
var composeInert = map[string]bool{
	"pull_policy": true, "stop_grace_period": true,
	"stop_signal": true, "labels": true, "logging": true,
	"platform": true, "container_name": true, "mem_reservation": true, "memswap_limit": true,
	"mem_swappiness": true, "cpu_shares": true, "annotations": true,
}

// service decodes one service; skip is true for a service compose would
// not start by default (it has profiles).
func (d *composeDoc) service(key, n *yaml.Node) (*composeService, bool, error) {
	n, name := resolve(n), key.Value
	s := &composeService{name: name, line: key.Line}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return s, false, nil // "client: {}"-like: harness defaults only
	}
	if n.Kind != yaml.MappingNode {
		return nil, false, d.errf(n, "service %s: expected its settings as a mapping", name)
	}
	var err error
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, resolve(kv[1])
		field := "service " + name + " " + k
		switch k {
		case "profiles":
			return nil, true, nil
		case "image":
			s.image, err = d.str(v, field)
		case "build":
			s.build, err = d.build(s, v, field)
		case "command":
			s.command, err = d.words(v, field)
		case "entrypoint":
			s.entrypoint, err = d.words(v, field)
		case "environment":
			err = d.environment(s, v, field)
		case "env_file":
			err = d.envFile(s, v, field)
		case "working_dir":
			s.workDir, err = d.str(v, field)
		case "user":
			if s.user, err = d.str(v, field); err == nil {
				if uerr := model.CheckUser(s.user); uerr != nil {
					err = d.errf(v, "%s: %v", field, uerr)
				}
			}
		case "container_name":
			s.containerName, err = d.str(v, field)
		case "hostname":
			// The container's own name for itself (what `hostname`
			// says), and one more the network answers to, as compose
			// sets both.
			if s.hostname, err = d.str(v, field); s.hostname != "" {
				s.aliases = append(s.aliases, s.hostname)
			}
		case "mem_limit":
			s.memLimit, err = d.bytes(v, field)
		case "cpus":
			s.cpus, err = d.float(v, field)
		case "deploy":
			err = d.deploy(s, v, field)
		case "depends_on":
			s.dependsOn, err = d.dependsOn(v, field)
		case "healthcheck":
			s.healthcheck, err = d.healthcheck(v, field)
		case "volumes":
			err = d.volumes(s, v, field)
		case "networks":
			err = d.networks(s, v, field)
		case "network_mode":
			s.networkMode, err = d.str(v, field)
		case "ports", "expose":
			err = d.ports(s, v, field)
		case "cap_add":
			err = d.capAdd(s, v, field)
		case "restart":
			// A service that exits stays down here: a sidecar that
			// crashed on its first start and that compose restarted
			// was a failure of the task's, and the audit said faithful
			// (the twenty-eighth attacker's 2).
			var policy string
			if policy, err = d.str(v, field); err == nil && policy != "" && policy != "no" {
				s.notes = append(s.notes, model.Deviation{What: "service " + name + " restart: " + policy + " not honoured",
					Detail: "a service that exits is not restarted here (compose would restart it): a service that never exits runs the same"})
			}
		case "tty", "stdin_open":
			// No terminal or open stdin is given: `bash` kept alive by
			// one exits at once here (the twenty-eighth attacker's 3).
			if on, ferr := d.boolean(v, field); ferr != nil {
				err = ferr
			} else if on {
				s.notes = append(s.notes, model.Deviation{What: "service " + name + " " + k + " not honoured",
					Detail: "no terminal or open stdin is attached: a process kept alive by one (a shell reading it) exits at once here"})
			}
		case "extends":
			return nil, false, d.errf(v, "service %s: extends is not supported: write the service out in full", name)
		default:
			if !composeInert[k] {
				s.notes = append(s.notes, model.Deviation{What: "service " + name + " " + k + " not honoured", Detail: ""})
			}
		}
		if err != nil {
			return nil, false, err
		}
	}
	if err := d.envFromFiles(s); err != nil {
		return nil, false, err
	}
	return s, false, nil
}

// str expands a scalar.
func (d *composeDoc) str(n *yaml.Node, field string) (string, error) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		return "", d.errf(n, "%s: expected a single value", field)
	}
	if n.Tag == "!!null" {
		return "", nil
	}
	v, err := interpolate(n.Value, d.h.vars, d.unset)
	if err != nil {
		return "", d.errf(n, "%s: %v", field, err)
	}
	return v, nil
}

// mappingValue reads a value of a mapping of names (environment:, a
// build's args:) as Docker Compose v2 does: an unquoted number or boolean
// is YAML's first, then written as Go writes it (compose-go's
// mappingValue, fmt.Sprint), so `PY_VERSION: 3.10` is 3.1, `MODE: 010`
// is 8 and `N: 1e3` is 1000; a quoted or other value is its text,
// interpolated (str). Checked against compose-go v2.16.2's loader (the
// twentieth attacker's 6: headroom kept 3.10, which `docker compose` gives
// as 3.1).
func (d *composeDoc) mappingValue(n *yaml.Node, field string) (string, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Style == 0 && (n.Tag == "!!int" || n.Tag == "!!float" || n.Tag == "!!bool") {
		var v any
		if err := n.Decode(&v); err == nil {
			return fmt.Sprint(v), nil
		}
	}
	return d.str(n, field)
}

// capAdd reads cap_add: capability names, each at its line.
func (d *composeDoc) capAdd(s *composeService, n *yaml.Node, field string) error {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, "%s: expected a list", field)
	}
	for _, item := range n.Content {
		v, err := d.str(item, field)
		if err != nil {
			return err
		}
		c := model.CapabilityName(v)
		if !capName.MatchString(c) {
			return d.errf(item, "%s: %q is not a capability name (like \"SYS_PTRACE\")", field, v)
		}
		if slices.Contains(s.capAdd, c) {
			continue
		}
		if s.capAt == nil {
			s.capAt = map[string]string{}
		}
		s.capAdd = append(s.capAdd, c)
		s.capAt[c] = fmt.Sprintf("%s:%d (service %s cap_add)", d.path, resolve(item).Line, s.name)
	}
	return nil
}

func (d *composeDoc) strs(n *yaml.Node, field string) ([]string, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, "%s: expected a list", field)
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		v, err := d.str(c, field)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// words reads a command: a list as is, a string split as a shell would
// split its words (compose does not run it through a shell).
func (d *composeDoc) words(n *yaml.Node, field string) ([]string, error) {
	if resolve(n).Kind == yaml.SequenceNode {
		return d.strs(n, field)
	}
	s, err := d.str(n, field)
	if err != nil {
		return nil, err
	}
	w, err := splitWords(s)
	if err != nil {
		return nil, d.errf(n, "%s: %v", field, err)
	}
	return w, nil
}

// boolean reads a yes/no setting as compose does (true, false, and
// YAML 1.1's yes/no/on/off).
func (d *composeDoc) boolean(n *yaml.Node, field string) (bool, error) {
	s, err := d.str(n, field)
	if err != nil || s == "" {
		return false, err
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y":
		return true, nil
	case "false", "no", "off", "n":
		return false, nil
	}
	return false, d.errf(n, "%s: expected true or false (got %q)", field, s)
}

func (d *composeDoc) float(n *yaml.Node, field string) (float64, error) {
	s, err := d.str(n, field)
	if err != nil || s == "" {
		return 0, err
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f <= 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, d.errf(n, "%s: %q is not a positive number of CPUs", field, s)
	}
	if f < model.MinCPUs {
		// A service's quota of 0 nanoCPUs is no bound at all.
		return 0, d.errf(n, "%s: %q is under %v, the smallest CPU limit the engine takes (a smaller one is no limit at all): write at least %v", field, s, model.MinCPUs, model.MinCPUs)
	}
	return f, nil
}

func (d *composeDoc) bytes(n *yaml.Node, field string) (int64, error) {
	s, err := d.str(n, field)
	if err != nil || s == "" {
		return 0, err
	}
	b, err := model.ParseBytes(s)
	if err != nil {
		return 0, d.errf(n, "%s: %v", field, err)
	}
	return b, nil
}

func (d *composeDoc) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := d.str(n, field)
	if err != nil || s == "" {
		return 0, err
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || v < 0 {
		return 0, d.errf(n, "%s: %q is not a duration: write it like \"5s\" or \"1m30s\"", field, s)
	}
	return v, nil
}

// build reads build: a context path, or context, dockerfile, args, target.
func (d *composeDoc) build(s *composeService, n *yaml.Node, field string) (*model.Build, error) {
	b := &model.Build{Context: ".", Dockerfile: "Dockerfile", Timeout: defaultBuildTimeout}
	if n.Kind == yaml.ScalarNode {
		ctx, err := d.str(n, field)
		if err != nil {
			return nil, err
		}
		if ctx != "" {
			b.Context = ctx
		}
	} else if n.Kind == yaml.MappingNode {
		for _, kv := range pairs(n) {
			k, v := kv[0].Value, resolve(kv[1])
			f := field + "." + k
			var err error
			switch k {
			case "context":
				var ctx string
				if ctx, err = d.str(v, f); ctx != "" {
					b.Context = ctx
				}
			case "dockerfile":
				var df string
				if df, err = d.str(v, f); df != "" {
					b.Dockerfile = df
				}
			case "target":
				b.Target, err = d.str(v, f)
			case "args":
				env, pass, fromHost, e := d.envEntries(v, f)
				err = e
				for _, kv := range pass {
					k, _, _ := strings.Cut(kv, "=")
					fromHost = append(fromHost, k)
				}
				if len(fromHost) > 0 {
					// A bare NAME (or ${NAME} alone) is the harness's
					// environment's; here the build has no such argument,
					// and a secret is never baked into an image.
					s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " build.args not given", Detail: strings.Join(fromHost, ", ") + ": the harness takes them from its own environment; here the build runs without them"})
				}
				if len(env) > 0 {
					b.Args = map[string]string{}
				}
				for _, kv := range env {
					k, v, _ := strings.Cut(kv, "=")
					b.Args[k] = v
				}
			case "dockerfile_inline":
				b.Inline, err = d.str(v, f)
			case "labels", "cache_from", "cache_to", "pull", "no_cache", "platforms", "tags":
				// How the image is cached, named or labelled, not what it holds.
			default:
				s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " build." + k + " not honoured", Detail: ""})
			}
			if err != nil {
				return nil, err
			}
		}
	} else {
		return nil, d.errf(n, "%s: expected a context directory or a mapping", field)
	}
	if strings.Contains(b.Context, "://") {
		return nil, d.errf(n, "%s: a remote build context (%s) is not supported: build from a directory of the task", field, b.Context)
	}
	if !filepath.IsAbs(b.Context) {
		b.Context = filepath.Join(d.dir, b.Context)
	}
	if _, err := confine.Within(d.taskDir, b.Context); errors.Is(err, confine.ErrOutside) {
		return nil, d.errf(n, "%s: %v", field, outsideTask(b.Context, err))
	}
	if b.Inline == "" && !exists(filepath.Join(b.Context, b.Dockerfile)) {
		return nil, d.errf(n, "%s: %s does not exist: the build needs its Dockerfile", field, filepath.Join(b.Context, b.Dockerfile))
	}
	return b, nil
}

// environment reads a list of NAME=value (or NAME) or a map.
func (d *composeDoc) environment(s *composeService, n *yaml.Node, field string) error {
	env, pass, fromHost, err := d.envEntries(n, field)
	s.env = append(s.env, env...)
	s.passEnv = append(s.passEnv, pass...)
	s.fromHost = append(s.fromHost, fromHost...)
	return err
}

// hostOnly is a whole value naming one variable ("${OPENAI_API_KEY}").
var hostOnly = regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`)

// envEntries reads environment entries. A bare NAME, or a value that is
// only a variable the harness does not set, comes from the harness's own
// environment: one of the task's own pass-through secrets is passed on
// (pass, NAME=HOST), any other is left out (fromHost names it).
func (d *composeDoc) envEntries(n *yaml.Node, field string) (env, pass, fromHost []string, err error) {
	fromHarness := func(k, v string) {
		if host, ok := d.h.secrets[v]; ok {
			pass = append(pass, k+"="+host)
		} else {
			fromHost = append(fromHost, k)
		}
	}
	add := func(k string, vn *yaml.Node) error {
		if vn == nil || (vn.Kind == yaml.ScalarNode && vn.Tag == "!!null") {
			if v, ok := d.h.vars[k]; ok {
				env = append(env, k+"="+v)
			} else {
				fromHarness(k, k)
			}
			return nil
		}
		if m := hostOnly.FindStringSubmatch(vn.Value); m != nil && vn.Kind == yaml.ScalarNode {
			if _, ok := d.h.vars[m[1]]; !ok {
				fromHarness(k, m[1])
				return nil
			}
		}
		v, err := d.mappingValue(vn, field+"."+k)
		env = append(env, k+"="+v)
		return err
	}
	switch n.Kind {
	case yaml.MappingNode:
		for _, kv := range pairs(n) {
			if err := add(kv[0].Value, resolve(kv[1])); err != nil {
				return nil, nil, nil, err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			c = resolve(c)
			if c.Kind != yaml.ScalarNode {
				return nil, nil, nil, d.errf(c, "%s: expected NAME=value entries", field)
			}
			k, v, ok := strings.Cut(c.Value, "=")
			if !ok {
				if err := add(k, nil); err != nil {
					return nil, nil, nil, err
				}
				continue
			}
			if err := add(k, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: c.Line}); err != nil {
				return nil, nil, nil, err
			}
		}
	default:
		return nil, nil, nil, d.errf(n, "%s: expected a list of NAME=value or a mapping", field)
	}
	return env, pass, fromHost, nil
}

// envFile reads env_file entries: files beside the compose file, read
// once the service's environment is known (envFromFiles).
func (d *composeDoc) envFile(s *composeService, n *yaml.Node, field string) error {
	add := func(c *yaml.Node, required bool) error {
		f, err := d.str(c, field)
		if err == nil {
			s.envFiles = append(s.envFiles, envFileRef{path: f, required: required, node: c})
		}
		return err
	}
	if n.Kind == yaml.ScalarNode {
		return add(n, true)
	}
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, "%s: expected a file or a list of files", field)
	}
	for _, c := range n.Content {
		c = resolve(c)
		required := true
		if c.Kind == yaml.MappingNode {
			m := mapping(c)
			if r := m["required"]; r != nil {
				required = resolve(r).Value != "false"
			}
			if c = m["path"]; c == nil {
				return d.errf(n, "%s: an entry has no path", field)
			}
		}
		if err := add(resolve(c), required); err != nil {
			return err
		}
	}
	return nil
}

// envFileRef is one env_file entry.
type envFileRef struct {
	path     string
	required bool // compose's required (true unless said): a missing file is an error
	node     *yaml.Node
}

// envFromFiles reads the service's env_files as Docker Compose does
// (compose-go's resolveEnvironment): each file in compose's dotenv format
// (comments after a value, quotes, escapes in double quotes, a bare NAME
// taken from the harness's variables or else left out, ${VAR} from the
// harness's variables, then the service's environment, then the file's
// own earlier lines), later files over earlier ones, and every one of
// them under the service's environment, which Compose's documentation
// gives the higher precedence whatever the order of the keys. Before,
// each line was split at its first = and its quotes trimmed, and an
// env_file after environment: overrode it: a task whose environment set
// MODE=override over its file's MODE=default ran with default, and
// `MODE=fast # comment` was the whole text (the nineteenth attacker's 1).
func (d *composeDoc) envFromFiles(s *composeService) error {
	if len(s.envFiles) == 0 {
		return nil
	}
	explicit := map[string]string{}
	addEnvVars(explicit, s.env)
	set := map[string]bool{}
	for k := range explicit {
		set[k] = true
	}
	for _, e := range s.passEnv {
		k, _, _ := strings.Cut(e, "=")
		set[k] = true
	}
	for _, k := range s.fromHost {
		set[k] = true
	}
	var text []byte // the file being read, for lookup's notes
	lookup := func(k string) (string, bool) {
		if v, ok := d.h.vars[k]; ok {
			return v, true
		}
		v, ok := explicit[k]
		if !ok && regexp.MustCompile(`(?m)^[ \t]*(export[ \t]+)?`+regexp.QuoteMeta(k)+`[ \t]*(#.*)?\r?$`).Match(text) {
			// A bare NAME line: the harness's environment gives it, or
			// it is left out (as here).
			if !slices.Contains(s.fromHost, k) {
				s.fromHost = append(s.fromHost, k)
			}
		} else if !ok {
			// The harness's environment would be asked: noted as an
			// unset variable of the file is (the audit named none).
			defaulted := regexp.MustCompile(`\$\{` + regexp.QuoteMeta(k) + `:?[-+]`).Match(text)
			if _, said := d.unset[k]; !said || !defaulted {
				d.unset[k] = !defaulted
			}
		}
		return v, ok
	}
	vars := maps.Clone(explicit)
	for _, ref := range s.envFiles {
		p := ref.path
		if !filepath.IsAbs(p) {
			p = filepath.Join(d.dir, p)
		}
		if _, err := confine.Within(d.taskDir, p); errors.Is(err, confine.ErrOutside) {
			s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " env_file not read", Detail: outsideTask(ref.path, err).Error()})
			continue
		}
		data, err := readTaskFile(d.taskDir, p)
		if errors.Is(err, fs.ErrNotExist) && !ref.required {
			continue // required: false, as compose skips it
		}
		if err != nil {
			return d.errf(ref.node, "service %s env_file: %v", s.name, err)
		}
		text = data
		if err := dotenv.ParseWithFormat(bytes.NewReader(data), p, vars, lookup, ""); err != nil {
			return d.errf(ref.node, "service %s env_file %s: %v", s.name, ref.path, err)
		}
	}
	var fromFiles []string
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if !set[k] {
			fromFiles = append(fromFiles, k+"="+vars[k])
		}
	}
	s.env = append(fromFiles, s.env...)
	return nil
}

// deploy reads deploy.resources.limits (cpus, memory); reservations are
// what the limit-free host gives anyway, and GPU devices are noted.
func (d *composeDoc) deploy(s *composeService, n *yaml.Node, field string) error {
	for _, kv := range pairs(n) {
		// replicas: 12 started one container, and the audit said
		// nothing (the twenty-fifth attacker's 6).
		if k := kv[0].Value; k != "resources" && k != "labels" {
			s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " deploy." + k + " not honoured", Detail: "here one container of the service runs, and of its deploy settings only resources.limits apply"})
		}
	}
	res := mapping(n)["resources"]
	if res == nil {
		return nil
	}
	m := mapping(res)
	if lim := m["limits"]; lim != nil {
		lm := mapping(lim)
		var err error
		if v := lm["memory"]; v != nil {
			if s.memLimit, err = d.bytes(v, field+".resources.limits.memory"); err != nil {
				return err
			}
		}
		if v := lm["cpus"]; v != nil {
			if s.cpus, err = d.float(v, field+".resources.limits.cpus"); err != nil {
				return err
			}
		}
	}
	if r := m["reservations"]; r != nil && mapping(r)["devices"] != nil {
		s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " device reservation not honoured", Detail: "the compose file's devices (GPUs) are not given"})
	}
	return nil
}

// dependsOn reads a list of services (started) or a map with conditions.
func (d *composeDoc) dependsOn(n *yaml.Node, field string) ([]model.Dependency, error) {
	var out []model.Dependency
	switch n.Kind {
	case yaml.SequenceNode:
		names, err := d.strs(n, field)
		if err != nil {
			return nil, err
		}
		for _, s := range names {
			out = append(out, model.Dependency{Service: s, Condition: model.ServiceStarted})
		}
	case yaml.MappingNode:
		for _, kv := range pairs(n) {
			dep := model.Dependency{Service: kv[0].Value, Condition: model.ServiceStarted}
			if c := mapping(kv[1])["condition"]; c != nil {
				cond, err := d.str(c, field+"."+dep.Service+".condition")
				if err != nil {
					return nil, err
				}
				switch cond {
				case model.ServiceStarted, model.ServiceHealthy, model.ServiceCompleted:
					dep.Condition = cond
				default:
					return nil, d.errf(c, "%s.%s.condition: %q is not one of service_started, service_healthy, service_completed_successfully", field, dep.Service, cond)
				}
			}
			out = append(out, dep)
		}
	default:
		return nil, d.errf(n, "%s: expected a list of services or a mapping", field)
	}
	return out, nil
}

// healthcheck reads a health test; disable (or test NONE) removes it.
func (d *composeDoc) healthcheck(n *yaml.Node, field string) (*model.Healthcheck, error) {
	m := mapping(n)
	if v := m["disable"]; v != nil && resolve(v).Value == "true" {
		return nil, nil
	}
	hc := &model.Healthcheck{}
	var err error
	if t := m["test"]; t != nil {
		t = resolve(t)
		if t.Kind == yaml.SequenceNode {
			if hc.Test, err = d.strs(t, field+".test"); err != nil {
				return nil, err
			}
		} else {
			s, err := d.str(t, field+".test")
			if err != nil {
				return nil, err
			}
			hc.Test = []string{"CMD-SHELL", s}
		}
	}
	if len(hc.Test) == 0 || hc.Test[0] == "NONE" {
		return nil, nil
	}
	if hc.Test[0] != "CMD" && hc.Test[0] != "CMD-SHELL" {
		return nil, d.errf(n, "%s.test: starts with %q: a test list starts with CMD or CMD-SHELL", field, hc.Test[0])
	}
	for key, dst := range map[string]*time.Duration{"interval": &hc.Interval, "timeout": &hc.Timeout, "start_period": &hc.StartPeriod} {
		if v := m[key]; v != nil {
			if *dst, err = d.duration(v, field+"."+key); err != nil {
				return nil, err
			}
		}
	}
	if v := m["retries"]; v != nil {
		s, err := d.str(v, field+".retries")
		if err != nil {
			return nil, err
		}
		if hc.Retries, err = strconv.Atoi(s); err != nil || hc.Retries < 0 {
			return nil, d.errf(v, "%s.retries: %q is not a count", field, s)
		}
	}
	return hc, nil
}

// composeVolumeName is a volume name compose's schema takes.
var composeVolumeName = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// volumes reads mounts. A bind of the task's own files is copied in at
// the start (a copy, not a mount); a named volume is the container's own
// files; a host path outside the task is not mounted.
func (d *composeDoc) volumes(s *composeService, n *yaml.Node, field string) error {
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, "%s: expected a list of mounts", field)
	}
	for _, c := range n.Content {
		c = resolve(c)
		var src, dst, typ, ro string
		if c.Kind == yaml.MappingNode {
			m := mapping(c)
			for key, p := range map[string]*string{"source": &src, "target": &dst, "type": &typ, "read_only": &ro} {
				if v := m[key]; v != nil {
					var err error
					if *p, err = d.str(v, field); err != nil {
						return err
					}
				}
			}
		} else {
			spec, err := d.str(c, field)
			if err != nil {
				return err
			}
			parts := strings.Split(spec, ":")
			switch len(parts) {
			case 1:
				dst = parts[0]
			default:
				src, dst = parts[0], parts[1]
			}
			if len(parts) > 2 && slices.Contains(strings.Split(parts[2], ","), "ro") {
				ro = "true"
			}
		}
		switch {
		case d.h.ownMounts[path.Clean(dst)]:
			// The harness's own log mounts: a volume of the trial's each.
			s.harnessMounts = append(s.harnessMounts, path.Clean(dst))
		case typ == "tmpfs":
			s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " tmpfs not mounted", Detail: dst + " is an ordinary directory"})
		case src == "":
			// An anonymous volume: the container's own files.
		case !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, "~"):
			if !composeVolumeName.MatchString(src) {
				// Compose refuses the file (its schema's volume names);
				// taken, every trial was an infra error at the engine.
				return d.errf(c, "%s: volume %q: a compose volume's name is letters, digits, '.', '_' and '-' only (Docker Compose refuses the file)", field, src)
			}
			s.volumes = append(s.volumes, model.VolumeMount{Volume: src, Target: dst, ReadOnly: ro == "true"})
		default:
			host := src
			if !filepath.IsAbs(host) {
				host = filepath.Join(d.dir, host)
			}
			real, err := confine.Within(d.taskDir, host)
			if err != nil {
				why := "headroom mounts nothing from the host"
				if errors.Is(err, confine.ErrOutside) {
					why = outsideTask(src, err).Error()
				}
				s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " host mount not mounted", Detail: src + ":" + dst + ": " + why})
				continue
			}
			host = real
			up := model.Upload{From: host, To: dst}
			if st, err := os.Stat(host); err == nil && !st.IsDir() {
				up = model.Upload{From: host, To: filepath.Dir(dst), Name: filepath.Base(dst)}
			}
			s.files = append(s.files, up)
			s.notes = append(s.notes, model.Deviation{What: "service " + s.name + " bind mount copied in", Detail: src + ":" + dst + " is copied in at the start, not mounted: changes are not seen on the host"})
		}
	}
	return nil
}

// networks reads the aliases a service has on its networks.
func (d *composeDoc) networks(s *composeService, n *yaml.Node, field string) error {
	if n.Kind != yaml.MappingNode {
		// A list of network names: all are one network here
		// (segmented says where that lets services meet).
		names, err := d.strs(n, field)
		s.networks = append(s.networks, names...)
		return err
	}
	for _, kv := range pairs(n) {
		s.networks = append(s.networks, kv[0].Value)
		if a := mapping(kv[1])["aliases"]; a != nil {
			al, err := d.strs(a, field+"."+kv[0].Value+".aliases")
			if err != nil {
				return err
			}
			s.aliases = append(s.aliases, al...)
		}
	}
	return nil
}

// segmented is the deviation of a file whose networks keep two services
// apart (they share none of them), or nil: every service of a trial is
// on its one network here, so each reaches every other (a sidecar the
// file kept off main's network answered it, and the task's check that it
// could not failed: the twenty-eighth attacker's 1). A service with a
// network_mode of its own is left out; one naming no network is on
// compose's default, as is main where the harness defines it.
func segmented(services []*composeService, h composeHarness) *model.Deviation {
	type member struct {
		name string
		nets []string
	}
	var all []member
	if h.baseMain && !slices.ContainsFunc(services, func(s *composeService) bool { return s.name == h.main }) {
		all = append(all, member{h.main, []string{"default"}})
	}
	for _, s := range services {
		if s.networkMode != "" {
			continue
		}
		nets := s.networks
		if len(nets) == 0 {
			nets = []string{"default"}
		}
		all = append(all, member{s.name, nets})
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			if !slices.ContainsFunc(a.nets, func(n string) bool { return slices.Contains(b.nets, n) }) {
				return &model.Deviation{What: "compose networks not kept apart",
					Detail: fmt.Sprintf("services %s (%s) and %s (%s) share no network under compose; here every service is on one private network per trial and reaches every other", a.name, strings.Join(a.nets, ", "), b.name, strings.Join(b.nets, ", "))}
			}
		}
	}
	return nil
}

// maxPortRange bounds the ports one range entry ("8000-8100") names.
const maxPortRange = 1024

// ports reads ports: and expose: for the container's own ports: a short
// entry's last part ("8080", "127.0.0.1:8080:80/udp", "9000-9001:80-81"),
// a long one's target and protocol.
func (d *composeDoc) ports(s *composeService, n *yaml.Node, field string) error {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, "%s: expected a list", field)
	}
	for _, e := range n.Content {
		e = resolve(e)
		var spec string
		if e.Kind == yaml.MappingNode {
			target, proto := "", "tcp"
			for _, kv := range pairs(e) {
				v, err := d.str(kv[1], field)
				if err != nil {
					return err
				}
				switch kv[0].Value {
				case "target":
					target = v
				case "protocol":
					proto = v
				}
			}
			if target == "" {
				return d.errf(e, "%s: an entry without a target", field)
			}
			spec = target + "/" + proto
		} else {
			v, err := d.str(e, field)
			if err != nil {
				return err
			}
			spec = v
		}
		ports, err := containerPorts(spec)
		if err != nil {
			return d.errf(e, "%s: %v", field, err)
		}
		for _, p := range ports {
			if !slices.Contains(s.ports, p) {
				s.ports = append(s.ports, p)
			}
		}
	}
	return nil
}

// containerPorts are the container ports of one short ports:/expose:
// entry, as "80/tcp".
func containerPorts(spec string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	proto := "tcp"
	if i := strings.LastIndexByte(spec, '/'); i >= 0 {
		spec, proto = spec[:i], strings.ToLower(spec[i+1:])
	}
	if i := strings.LastIndexByte(spec, ':'); i >= 0 {
		spec = spec[i+1:]
	}
	lo, hi, isRange := strings.Cut(spec, "-")
	from, err := strconv.Atoi(lo)
	to := from
	if err == nil && isRange {
		to, err = strconv.Atoi(hi)
	}
	if err != nil || from < 1 || to > 65535 || to < from || to-from >= maxPortRange {
		return nil, fmt.Errorf("%q is not a port or a range of ports", spec)
	}
	var out []string
	for p := from; p <= to; p++ {
		out = append(out, strconv.Itoa(p)+"/"+proto)
	}
	return out, nil
}
