package taskfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

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
	notes := append([]model.Deviation(nil), c.notes...)
	var files []model.Upload
	for _, s := range c.services {
		if len(s.fromHost) > 0 {
			notes = append(notes, model.Deviation{What: "service " + s.name + " environment not given", Detail: strings.Join(s.fromHost, ", ") + ": the harness takes them from its own environment"})
		}
	}
	if main != nil {
		notes = append(notes, main.notes...)
		files = main.files
		notes = append(notes, applyMain(t, main, h)...)
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
			Env: s.env, WorkDir: s.workDir, User: s.user, Aliases: s.aliases, Hostname: s.hostname,
			MemoryLimitBytes: s.memLimit, CPUs: s.cpus, Healthcheck: s.healthcheck, Files: s.files, Volumes: s.volumes,
			Ports:        s.ports,
			Capabilities: s.capAdd,
		}
		addCapabilitiesAt(t, s)
		if s.memLimit <= 0 {
			// Harbor's compose bounds the main service alone; headroom
			// bounds every service of a trial (#40's second item), which
			// a service that needs more than the bound does not survive:
			// said here, where the audit shows it, not first as an infra
			// error (the thirteenth attacker's 6).
			notes = append(notes, model.Deviation{What: "service " + s.name + " memory bounded at " + model.FormatBytes(model.DefaultSidecarMemoryBytes),
				Detail: "the compose file gives it no memory limit (mem_limit, deploy.resources.limits.memory) and Harbor sets none; headroom bounds every service, and one killed at the bound is an infra error of that bound's, not the task's: give the service a mem_limit to set its own"})
		}
		if s.networkMode != "" && s.networkMode != "bridge" && s.networkMode != "default" {
			notes = append(notes, model.Deviation{What: "service " + s.name + " network_mode not used", Detail: s.networkMode + " is replaced by the trial's private network"})
		}
		if s.containerName != "" && s.containerName != s.name {
			// Docker's DNS answers to a container's name too.
			sc.Aliases = append(sc.Aliases, s.containerName)
		}
		for _, dep := range s.dependsOn {
			if main != nil && dep.Service == main.name || dep.Service == h.main {
				notes = append(notes, model.Deviation{What: "service " + s.name + " depends on " + dep.Service, Detail: "headroom starts the task's container last"})
				continue
			}
			sc.DependsOn = append(sc.DependsOn, dep)
		}
		if len(s.passEnv) > 0 {
			notes = append(notes, model.Deviation{What: "service " + s.name + " secrets not given", Detail: strings.Join(s.passEnv, ", ") + ": a sidecar gets no pass-through variables"})
		}
		notes = append(notes, s.notes...)
		t.Sidecars = append(t.Sidecars, sc)
	}
	t.Deviations = append(t.Deviations, notes...)
	return files, nil
}

// applyMain amends the task's container with its compose service.
func applyMain(t *model.Task, s *composeService, h composeHarness) (devs []model.Deviation) {
	// cap_add adds to the main container's capabilities, as compose does.
	for _, c := range s.capAdd {
		if !slices.Contains(t.Capabilities, c) {
			t.Capabilities = append(t.Capabilities, c)
		}
	}
	addCapabilitiesAt(t, s)
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
	if len(s.entrypoint) > 0 {
		devs = append(devs, model.Deviation{What: "service " + s.name + " entrypoint not set as the entrypoint", Detail: "it runs as the first words of the container's command"})
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
	if s.hostname != "" {
		t.Hostname = s.hostname
	}
	if s.user != "" {
		t.User = s.user
	}
	t.Ports = s.ports
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
	switch s.networkMode {
	case "", "bridge", "default":
	case "none":
		t.Network = "none" // no network at all, sidecars unreachable, as in the harness
	default:
		devs = append(devs, model.Deviation{What: "service " + s.name + " network_mode not used", Detail: s.networkMode + " is replaced by the task's own network"})
	}
	t.DependsOn = append(t.DependsOn, s.dependsOn...)
	t.Volumes = append(t.Volumes, s.volumes...)
	for _, m := range s.harnessMounts {
		if !slices.Contains(t.HarnessMounts, m) {
			t.HarnessMounts = append(t.HarnessMounts, m)
		}
	}
	if s.healthcheck != nil && t.Healthcheck == nil {
		t.Healthcheck = s.healthcheck
	}
	return devs
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

// addCapabilitiesAt records where service s asks for its host-reaching
// capabilities.
func addCapabilitiesAt(t *model.Task, s *composeService) {
	for _, c := range s.capAdd {
		if !model.HostReaching(c) {
			continue
		}
		if t.CapabilitiesAt == nil {
			t.CapabilitiesAt = map[string]string{}
		}
		if t.CapabilitiesAt[c] == "" {
			t.CapabilitiesAt[c] = s.capAt[c]
		}
	}
}
