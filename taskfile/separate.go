package taskfile

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Harbor's single-step trial, after the agent: its [[verifier.collect]]
// hooks run in the task's container, its artifacts are collected, and
// the verifier runs there (shared) or in a container of its own built
// from tests/ with the artifacts copied in (separate).

// mainService is the compose service of the task's own container.
const mainService = "main"

// collectTimeout is a collect hook's time limit when it sets none.
const collectTimeout = 60 * time.Second

// fileCollect is one [[verifier.collect]] hook.
type fileCollect struct {
	Command    string   `toml:"command"`
	Service    string   `toml:"service"`
	TimeoutSec *float64 `toml:"timeout_sec"`
	User       any      `toml:"user"`
}

// collectSteps turns the hooks into steps run in the task's container;
// hooks for another compose service are listed as deviations.
func collectSteps(section string, hooks []fileCollect) ([]model.Step, []model.Deviation, error) {
	var steps []model.Step
	var devs []model.Deviation
	for i, h := range hooks {
		where := fmt.Sprintf("%s #%d", section, i+1)
		cmd := strings.TrimSpace(h.Command)
		if cmd == "" {
			return nil, nil, fmt.Errorf("%s has no command: the shell command that writes the files to collect", where)
		}
		if s := strings.TrimSpace(h.Service); s != "" && s != mainService {
			devs = append(devs, model.Deviation{What: "collect hook in a sidecar not run",
				Detail: fmt.Sprintf("%s runs in service %s; headroom runs hooks in the task's own container only", where, s)})
			continue
		}
		timeout, err := seconds(where+" timeout_sec", h.TimeoutSec, collectTimeout)
		if err != nil {
			return nil, nil, err
		}
		user, err := userName(where+" user", h.User)
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, model.Step{
			Name: fmt.Sprintf("collect-%d", i+1), Show: cmd,
			// Harbor's exec in the main service runs the command with bash.
			Argv: []string{"bash", "-c", cmd}, User: user, Timeout: timeout,
		})
	}
	return steps, devs, nil
}

// artifactPaths reads Harbor's artifacts: container paths, or tables
// with a source (and a destination on the host, which headroom does not
// keep). Paths from another compose service are deviations.
func artifactPaths(entries []any) ([]string, []model.Deviation, error) {
	var out []string
	var devs []model.Deviation
	for i, e := range entries {
		var src, service string
		switch a := e.(type) {
		case string:
			src = a
		case map[string]any:
			src, _ = a["source"].(string)
			service, _ = a["service"].(string)
		default:
			return nil, nil, fmt.Errorf("artifacts #%d must be a path or a table with source (got %v)", i+1, e)
		}
		src = strings.TrimSpace(src)
		if src == "" {
			return nil, nil, fmt.Errorf("artifacts #%d has no source path", i+1)
		}
		if strings.Contains("/"+src+"/", "/../") {
			return nil, nil, fmt.Errorf("artifacts #%d: source %q must not contain '..'", i+1, src)
		}
		if service != "" && service != mainService {
			devs = append(devs, model.Deviation{What: "artifact from a sidecar not collected",
				Detail: fmt.Sprintf("%s in service %s: headroom collects from the task's own container only", src, service)})
			continue
		}
		if !path.IsAbs(src) {
			return nil, nil, fmt.Errorf("artifacts #%d: source %q must be an absolute path in the container", i+1, src)
		}
		out = append(out, path.Clean(src))
	}
	return out, devs, nil
}

// separateMode says whether a [verifier] asks for its own container:
// environment_mode = "separate", or a [verifier.environment] without a
// mode (Harbor's rule); "shared" with an environment is an error.
func separateMode(mode string, env *fileEnvironment) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "separate":
		return true, nil
	case "shared":
		if env != nil {
			return false, fmt.Errorf("[verifier] environment_mode = \"shared\" cannot have a [verifier.environment]: drop the table or use \"separate\"")
		}
		return false, nil
	case "":
		return env != nil, nil
	}
	return false, fmt.Errorf("[verifier] environment_mode must be \"shared\" or \"separate\" (got %q)", mode)
}

// separateVerifier reads the verifier's own environment, as Harbor
// resolves it: [verifier.environment], else a fresh copy of
// [environment]; built from tests/Dockerfile (the tests are in the
// image) unless it names a docker_image; its network the [verifier]
// phase's own policy, else its environment's.
func (f *fileTask) separateVerifier(dir, file string) (*model.SeparateVerifier, error) {
	env := f.Environment
	if f.Verifier.Environment != nil {
		env = *f.Verifier.Environment
	}
	vf := fileTask{Environment: env}
	vf.Task.Name = "verifier"
	vt, err := vf.common(file, "bridge")
	if err != nil {
		return nil, fmt.Errorf("[verifier.environment]: %w", err)
	}
	sv := &model.SeparateVerifier{Image: vt.Image, Resources: vt.Resources, Network: vt.Network,
		AllowedHosts: vt.AllowedHosts, Env: vt.Env, WorkDir: vt.WorkDir, GPUs: vt.GPUs}
	for _, d := range vt.Deviations {
		d.What = "separate verifier: " + d.What
		f.verifierDevs = append(f.verifierDevs, d)
	}
	tests := filepath.Join(dir, "tests")
	if exists(filepath.Join(tests, "Dockerfile")) {
		build, err := seconds("[verifier.environment] build_timeout_sec", env.BuildTimeoutSec, defaultBuildTimeout)
		if err != nil {
			return nil, err
		}
		sv.Build = &model.Build{Context: tests, Dockerfile: "Dockerfile", Timeout: build}
	}
	if sv.Image == "" && sv.Build == nil {
		return nil, fmt.Errorf("the separate verifier has no image: add tests/Dockerfile (its image carries /tests/test.sh) or set [verifier.environment] docker_image")
	}
	mode, err := f.Verifier.fileNetwork.mode("verifier")
	if err != nil {
		return nil, err
	}
	if mode != "" {
		sv.Network, sv.AllowedHosts = engineNetwork(mode), nil
		if mode == netAllowlist {
			sv.AllowedHosts = f.Verifier.AllowedHosts
		}
	}
	return sv, nil
}
