package taskfile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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
	memLimit      int64
	cpus          float64
	dependsOn     []model.Dependency
	healthcheck   *model.Healthcheck
	files         []model.Upload
	namedVolumes  []string
	aliases       []string
	// notes are what headroom does not honour, one sentence each.
	notes []string
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
	notes    []string
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
	data, err := os.ReadFile(path)
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
			}
		case k == "networks":
			for _, nv := range pairs(v) {
				if m := mapping(nv[1]); m["external"] != nil || m["ipam"] != nil || m["internal"] != nil {
					c.notes = append(c.notes, fmt.Sprintf("compose network %s's settings (external, internal, ipam) are not used: every service is on one private network per trial", nv[0].Value))
				}
			}
		case k == "version", k == "name", k == "volumes", strings.HasPrefix(k, "x-"):
		default:
			c.notes = append(c.notes, fmt.Sprintf("compose top-level key %s is not used", k))
		}
	}
	if len(c.services) == 0 {
		return nil, fmt.Errorf("%s: no services: a compose environment needs at least the service the task runs in", path)
	}
	shared := map[string][]string{}
	for _, s := range c.services {
		for _, v := range s.namedVolumes {
			shared[v] = append(shared[v], s.name)
		}
		for _, dep := range s.dependsOn {
			if c.service(dep.Service) == nil && !(h.baseMain && dep.Service == h.main) {
				return nil, fmt.Errorf("%s:%d: service %s depends on %s, which the file does not define", path, s.line, s.name, dep.Service)
			}
		}
	}
	vols := make([]string, 0, len(shared))
	for v := range shared {
		vols = append(vols, v)
	}
	sort.Strings(vols)
	for _, v := range vols {
		if len(shared[v]) > 1 {
			c.notes = append(c.notes, fmt.Sprintf("compose volume %s is not shared between %s: each container has its own files", v, strings.Join(shared[v], " and ")))
		}
	}
	unset := make([]string, 0, len(d.unset))
	for v := range d.unset {
		unset = append(unset, v)
	}
	sort.Strings(unset)
	for _, v := range unset {
		c.notes = append(c.notes, fmt.Sprintf("compose variable %s is unset (the harness takes it from its own environment): it expands to \"\"", v))
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

// Service keys that change nothing a trial can observe (publishing ports
// to the host, restart policy, labels, logging).
var composeInert = map[string]bool{
	"ports": true, "expose": true, "restart": true, "pull_policy": true, "stop_grace_period": true,
	"stop_signal": true, "labels": true, "logging": true, "tty": true, "stdin_open": true,
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
			s.build, err = d.build(v, field)
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
			s.user, err = d.str(v, field)
		case "container_name":
			s.containerName, err = d.str(v, field)
		case "hostname":
			var h string
			if h, err = d.str(v, field); h != "" {
				s.aliases = append(s.aliases, h)
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
			var m string
			if m, err = d.str(v, field); m != "" {
				s.notes = append(s.notes, fmt.Sprintf("service %s's network_mode %s is not used: it is on the trial's private network", name, m))
			}
		case "extends":
			return nil, false, d.errf(v, "service %s: extends is not supported: write the service out in full", name)
		default:
			if !composeInert[k] {
				s.notes = append(s.notes, fmt.Sprintf("service %s's compose key %s is not honoured", name, k))
			}
		}
		if err != nil {
			return nil, false, err
		}
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

func (d *composeDoc) float(n *yaml.Node, field string) (float64, error) {
	s, err := d.str(n, field)
	if err != nil || s == "" {
		return 0, err
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f <= 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, d.errf(n, "%s: %q is not a positive number of CPUs", field, s)
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
func (d *composeDoc) build(n *yaml.Node, field string) (*model.Build, error) {
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
				env, _, _, e := d.envEntries(v, f)
				err = e
				if len(env) > 0 {
					b.Args = map[string]string{}
				}
				for _, kv := range env {
					k, v, _ := strings.Cut(kv, "=")
					b.Args[k] = v
				}
			case "dockerfile_inline":
				return nil, d.errf(v, "%s: an inline Dockerfile is not supported: put it in a file and name it with dockerfile:", f)
			case "ulimits", "network", "labels", "cache_from", "cache_to", "pull", "no_cache", "platforms", "tags", "shm_size", "extra_hosts":
			default:
				return nil, d.errf(v, "%s is not supported: a build takes context, dockerfile, args and target", f)
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
	if !exists(filepath.Join(b.Context, b.Dockerfile)) {
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
		v, err := d.str(vn, field+"."+k)
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

// envFile reads env_file entries: NAME=value lines of files beside the
// compose file.
func (d *composeDoc) envFile(s *composeService, n *yaml.Node, field string) error {
	var files []string
	if n.Kind == yaml.ScalarNode {
		f, err := d.str(n, field)
		if err != nil {
			return err
		}
		files = []string{f}
	} else if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			c = resolve(c)
			if c.Kind == yaml.MappingNode {
				c = mapping(c)["path"]
				if c == nil {
					return d.errf(n, "%s: an entry has no path", field)
				}
			}
			f, err := d.str(c, field)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
	}
	for _, f := range files {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(d.dir, f)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return d.errf(n, "%s: %v", field, err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
			s.env = append(s.env, strings.TrimSpace(k)+"="+strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
	return nil
}

// deploy reads deploy.resources.limits (cpus, memory); reservations are
// what the limit-free host gives anyway, and GPU devices are noted.
func (d *composeDoc) deploy(s *composeService, n *yaml.Node, field string) error {
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
		s.notes = append(s.notes, fmt.Sprintf("service %s reserves devices (GPUs): headroom gives none", s.name))
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

// volumes reads mounts. A bind of the task's own files is copied in at
// the start (a copy, not a mount); a named volume is the container's own
// files; a host path outside the task is not mounted.
func (d *composeDoc) volumes(s *composeService, n *yaml.Node, field string) error {
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, "%s: expected a list of mounts", field)
	}
	for _, c := range n.Content {
		c = resolve(c)
		var src, dst, typ string
		if c.Kind == yaml.MappingNode {
			m := mapping(c)
			for key, p := range map[string]*string{"source": &src, "target": &dst, "type": &typ} {
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
		}
		switch {
		case d.h.ownMounts[strings.TrimSuffix(dst, "/")]:
			// The harness's own log mounts: headroom makes the directories.
		case typ == "tmpfs":
			s.notes = append(s.notes, fmt.Sprintf("service %s's tmpfs at %s is an ordinary directory", s.name, dst))
		case src == "":
			// An anonymous volume: the container's own files.
		case !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, "~"):
			s.namedVolumes = append(s.namedVolumes, src)
		default:
			host := src
			if !filepath.IsAbs(host) {
				host = filepath.Join(d.dir, host)
			}
			rel, err := filepath.Rel(d.taskDir, host)
			if err != nil || strings.HasPrefix(rel, "..") || !exists(host) {
				s.notes = append(s.notes, fmt.Sprintf("service %s's host mount %s:%s is not mounted (headroom mounts nothing from the host)", s.name, src, dst))
				continue
			}
			up := model.Upload{From: host, To: dst}
			if st, err := os.Stat(host); err == nil && !st.IsDir() {
				up = model.Upload{From: host, To: filepath.Dir(dst), Name: filepath.Base(dst)}
			}
			s.files = append(s.files, up)
			s.notes = append(s.notes, fmt.Sprintf("service %s's bind mount %s:%s is copied in at the start, not mounted: changes are not seen on the host", s.name, src, dst))
		}
	}
	return nil
}

// networks reads the aliases a service has on its networks.
func (d *composeDoc) networks(s *composeService, n *yaml.Node, field string) error {
	if n.Kind != yaml.MappingNode {
		return nil // a list of network names: all are one network here
	}
	for _, kv := range pairs(n) {
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

// resolve follows an alias (a YAML anchor's use) to its node.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// pairs lists a mapping's key and value nodes, with YAML merge keys
// ("<<: *base") merged in under the mapping's own keys.
func pairs(n *yaml.Node) [][2]*yaml.Node { return mergedPairs(n, map[*yaml.Node]bool{}) }

// mergedPairs is pairs, minding the mappings being merged: a merge of a
// mapping into itself is left out rather than followed forever.
func mergedPairs(n *yaml.Node, merging map[*yaml.Node]bool) [][2]*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode || merging[n] {
		return nil
	}
	merging[n] = true
	defer delete(merging, n)
	var own, merged [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			srcs := []*yaml.Node{resolve(v)}
			if srcs[0].Kind == yaml.SequenceNode {
				srcs = srcs[0].Content
			}
			for _, src := range srcs {
				merged = append(merged, mergedPairs(src, merging)...)
			}
			continue
		}
		seen[k.Value] = true
		own = append(own, [2]*yaml.Node{k, v})
	}
	for _, kv := range merged {
		if !seen[kv[0].Value] {
			seen[kv[0].Value] = true
			own = append(own, kv)
		}
	}
	return own
}

// mapping indexes a mapping's values by key (nil for anything else).
func mapping(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	for _, kv := range pairs(n) {
		m[kv[0].Value] = resolve(kv[1])
	}
	return m
}

// interpolate expands compose's variable syntax: $NAME, ${NAME},
// ${NAME:-default} and ${NAME-default}, ${NAME:?error} and ${NAME?error},
// ${NAME:+alternative} and ${NAME+alternative}, nested in defaults, and
// $$ for a literal $. A name neither set nor defaulted is recorded in
// unset and expands to "".
func interpolate(s string, vars map[string]string, unset map[string]bool) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '{':
			end := closingBrace(s, i+2)
			if end < 0 {
				return "", fmt.Errorf("unclosed ${ in %q", s)
			}
			v, err := expandBraced(s[i+2:end], vars, unset)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i = end
		case isNameStart(next):
			j := i + 1
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			name := s[i+1 : j]
			v, ok := vars[name]
			if !ok {
				unset[name] = true
			}
			b.WriteString(v)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func closingBrace(s string, from int) int {
	depth := 1
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

func expandBraced(expr string, vars map[string]string, unset map[string]bool) (string, error) {
	j := 0
	for j < len(expr) && isNameChar(expr[j]) {
		j++
	}
	name, rest := expr[:j], expr[j:]
	if name == "" || !isNameStart(name[0]) {
		return "", fmt.Errorf("${%s}: not a variable name", expr)
	}
	v, set := vars[name]
	if rest == "" {
		if !set {
			unset[name] = true
		}
		return v, nil
	}
	op, arg := rest[:1], rest[1:]
	colon := op == ":"
	if colon {
		if len(arg) == 0 {
			return "", fmt.Errorf("${%s}: expected -, ?, or + after the colon", expr)
		}
		op, arg = arg[:1], arg[1:]
	}
	empty := !set || (colon && v == "")
	switch op {
	case "-":
		if empty {
			return interpolate(arg, vars, unset)
		}
		return v, nil
	case "+":
		if empty {
			return "", nil
		}
		return interpolate(arg, vars, unset)
	case "?":
		if empty {
			msg, _ := interpolate(arg, vars, unset)
			return "", fmt.Errorf("required variable %s is not set: %s", name, msg)
		}
		return v, nil
	}
	return "", fmt.Errorf("${%s}: unknown operator %q", expr, op)
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// splitWords splits a command line into words as a POSIX shell would
// (quotes and backslashes), without expanding anything.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unclosed \" in %q", s)
			}
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// applyCompose makes a task's environment what its harness makes of the
// compose file at path: the main service's settings amend the task's
// container, every other service becomes a sidecar, and what headroom
// cannot honour is listed in the task's deviations. It returns the files
// main's bind mounts copy in at the start.
//
// A main service's command (with its entrypoint) becomes the container's
// idle command, which replaces the image's entrypoint.
func applyCompose(t *model.Task, path, taskDir string, h composeHarness) ([]model.Upload, error) {
	c, err := readCompose(path, taskDir, h)
	if err != nil {
		return nil, err
	}
	main := c.service(h.main)
	if !h.baseMain {
		for _, s := range c.services {
			if s.containerName != "" && s.containerName == h.vars[tbContainerVar] {
				main = s
			}
		}
		if main == nil {
			return nil, fmt.Errorf("%s: no service runs the task: terminal-bench runs it in the service whose container_name is ${%s} (by convention %q)", path, tbContainerVar, tbMainService)
		}
	}
	notes := append([]string(nil), c.notes...)
	var files []model.Upload
	for _, s := range c.services {
		if len(s.fromHost) > 0 {
			notes = append(notes, fmt.Sprintf("service %s's environment %s comes from the harness's own environment: headroom gives it none", s.name, strings.Join(s.fromHost, ", ")))
		}
	}
	if main != nil {
		notes = append(notes, main.notes...)
		files = main.files
		applyMain(t, main, h)
	}
	for _, s := range c.services {
		if s == main {
			continue
		}
		if s.image == "" && s.build == nil {
			return nil, fmt.Errorf("%s:%d: service %s has neither image: nor build:: give it one", path, s.line, s.name)
		}
		sc := model.Sidecar{
			Name: s.name, Image: s.image, Build: s.build, Entrypoint: s.entrypoint, Command: s.command,
			Env: s.env, WorkDir: s.workDir, User: s.user, Aliases: s.aliases,
			MemoryLimitBytes: s.memLimit, CPUs: s.cpus, Healthcheck: s.healthcheck, Files: s.files,
		}
		if s.containerName != "" && s.containerName != s.name {
			// Docker's DNS answers to a container's name too.
			sc.Aliases = append(sc.Aliases, s.containerName)
		}
		for _, dep := range s.dependsOn {
			if main != nil && dep.Service == main.name || dep.Service == h.main {
				notes = append(notes, fmt.Sprintf("service %s depends on %s: headroom starts the task's container last", s.name, dep.Service))
				continue
			}
			sc.DependsOn = append(sc.DependsOn, dep)
		}
		if len(s.passEnv) > 0 {
			notes = append(notes, fmt.Sprintf("service %s's secrets %s are not given to a sidecar", s.name, strings.Join(s.passEnv, ", ")))
		}
		notes = append(notes, s.notes...)
		t.Sidecars = append(t.Sidecars, sc)
	}
	t.Deviations = append(t.Deviations, notes...)
	return files, nil
}

// applyMain amends the task's container with its compose service.
func applyMain(t *model.Task, s *composeService, h composeHarness) {
	if s.build != nil {
		if t.Build != nil {
			s.build.Timeout = t.Build.Timeout
		}
		t.Build, t.Image = s.build, ""
	}
	harnessNames := s.image == "" || s.image == h.vars["MAIN_IMAGE_NAME"] ||
		s.image == h.vars["T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME"] || s.image == h.vars["PREBUILT_IMAGE_NAME"]
	// Harbor builds main from the Dockerfile unless the task names a
	// prebuilt image; terminal-bench builds only what the compose file says.
	baseBuild := h.baseMain && t.Build != nil && t.Image == ""
	if !harnessNames && s.build == nil && !baseBuild {
		// No build of main: the compose file's image is what runs.
		t.Image, t.Build = s.image, nil
	}
	if len(s.entrypoint)+len(s.command) > 0 {
		t.IdleCommand = append(append([]string(nil), s.entrypoint...), s.command...)
	}
	t.Env = append(t.Env, s.env...)
	for _, p := range s.passEnv {
		if !slices.Contains(t.PassEnv, p) {
			t.PassEnv = append(t.PassEnv, p)
		}
	}
	if s.workDir != "" {
		t.WorkDir = s.workDir
	}
	if s.user != "" {
		t.User = s.user
	}
	undefault := func(field string) {
		out := t.Resources.Defaulted[:0:0]
		for _, d := range t.Resources.Defaulted {
			if d != field {
				out = append(out, d)
			}
		}
		t.Resources.Defaulted = out
	}
	if s.memLimit > 0 {
		t.Resources.MemoryBytes = s.memLimit
		undefault("memory")
	}
	if s.cpus > 0 {
		t.Resources.CPUs = s.cpus
		undefault("cpus")
	}
	t.DependsOn = append(t.DependsOn, s.dependsOn...)
	if s.healthcheck != nil && t.Healthcheck == nil {
		t.Healthcheck = s.healthcheck
	}
}

// withStartFiles copies files in before every agent's first step: what
// a compose bind mount of the task's own files makes visible at the start.
func withStartFiles(t *model.Task, files []model.Upload) {
	if len(files) == 0 {
		return
	}
	for i := range t.Agents {
		if len(t.Agents[i].Steps) == 0 {
			continue
		}
		st := &t.Agents[i].Steps[0]
		st.Files = append(append([]model.Upload(nil), files...), st.Files...)
	}
}
