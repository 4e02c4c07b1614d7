package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/versions"
	"github.com/docker/docker/client"
	controlapi "github.com/moby/buildkit/api/services/control"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/filesync"
	"github.com/tonistiigi/fsutil"
)

// The builders a task image can be built with: the engine's BuildKit, as
// Harbor's `docker compose build` builds on current engines, or the
// engine's classic builder, which knows no BuildKit-only Dockerfile syntax
// (heredocs: `RUN cat > f <<'EOF'`).
const (
	BuilderBuildKit = "buildkit"
	BuilderClassic  = "classic"
)

// LabelBuilder is the label a task image carries naming the builder that
// made it; LabelFrontend names the Dockerfile frontend image BuildKit ran
// when it was not the engine's own.
const (
	LabelBuilder  = "headroom.image.builder"
	LabelFrontend = "headroom.image.frontend"
)

// buildKitMinAPI is the first engine API with BuildKit's session endpoint
// outside experimental mode (Docker 18.09).
const buildKitMinAPI = "1.39"

// Builder is the builder a build uses and, for the classic one, why.
type Builder struct {
	Name string
	// Reason says why the classic builder is used ("" with BuildKit).
	Reason string
	// Frontend, with BuildKit, is headroom's Dockerfile frontend, run in
	// place of an engine's own that is too old (nil: the engine's own).
	Frontend *Frontend
	// Note says what a BuildKit build lacks (an old built-in frontend
	// and no hr-dockerfile to replace it).
	Note string
}

// Frontend is headroom's Dockerfile frontend program and why it runs.
type Frontend struct {
	Binary string
	Why    string
}

func (b Builder) String() string {
	s := b.Name
	switch {
	case b.Reason != "":
		s += " (" + b.Reason + ")"
	case b.Frontend != nil:
		s += ", Dockerfile frontend " + FrontendProgram + " (" + b.Frontend.Why + ")"
	case b.Note != "":
		s += " (" + b.Note + ")"
	}
	return s
}

// chooseBuilder picks BuildKit where the engine offers it, from what its
// ping and version say: an API new enough for BuildKit's session, a Linux
// engine. An engine that declares the classic builder its default
// (daemon.json "features": {"buildkit": false}) is still asked for
// BuildKit, as `docker compose build` asks it; an engine without BuildKit
// refuses the request and the build falls back then (buildKitRefused).
// On an engine whose own Dockerfile frontend predates heredocs (before
// Docker 23), BuildKit runs headroom's frontend (frontendBin) when there
// is one.
func chooseBuilder(ping types.Ping, engineVersion, frontendBin string) Builder {
	switch {
	case ping.APIVersion != "" && versions.LessThan(ping.APIVersion, buildKitMinAPI):
		return Builder{Name: BuilderClassic, Reason: fmt.Sprintf("the engine's API %s is older than %s, the first with BuildKit", ping.APIVersion, buildKitMinAPI)}
	case ping.OSType != "" && ping.OSType != "linux":
		return Builder{Name: BuilderClassic, Reason: fmt.Sprintf("the engine runs %s containers, where it has no BuildKit", ping.OSType)}
	}
	b := Builder{Name: BuilderBuildKit}
	if builtinFrontendCurrent(engineVersion) {
		return b
	}
	why := fmt.Sprintf("the engine's own, Docker %s, predates heredocs", engineVersion)
	if frontendBin == "" {
		b.Note = why + ", and " + FrontendProgram + " is not beside headroom (`make build` puts it there): Dockerfiles with heredocs will not parse"
		return b
	}
	b.Frontend = &Frontend{Binary: frontendBin, Why: why}
	return b
}

// builtinFrontendCurrent says whether an engine's own Dockerfile frontend
// reads heredocs: Docker 23.0 (BuildKit 0.11, Dockerfile 1.5) and later.
// An unreadable version is taken as current.
func builtinFrontendCurrent(engineVersion string) bool {
	major, _, _ := strings.Cut(engineVersion, ".")
	n, err := strconv.Atoi(major)
	return err != nil || n >= 23
}

// chooseEngineBuilder asks the engine what chooseBuilder needs.
func chooseEngineBuilder(ctx context.Context, cli *client.Client) (Builder, error) {
	ping, err := cli.Ping(ctx)
	if err != nil {
		return Builder{}, err
	}
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		return Builder{}, err
	}
	return chooseBuilder(ping, v.Version, frontendBinary()), nil
}

// buildKitRefused says whether a build request's error is the engine
// saying it has no BuildKit (built without it, or an API that knows no
// builder version 2), before anything was built.
func buildKitRefused(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "buildkit not supported") || strings.Contains(msg, "buildkit is not supported") ||
		strings.Contains(msg, "invalid version \"2\"")
}

// buildKitBuild builds with the engine's BuildKit, as the docker CLI asks
// it: a session of moby/buildkit's session package over the engine's
// /session endpoint, which serves the context directory and the
// Dockerfile's directory to the engine (filesync; the request has no
// body). frontend, when set, is the local image of a Dockerfile frontend
// to run instead of the engine's own.
func buildKitBuild(ctx context.Context, cli *client.Client, contextDir, dockerfileDir, frontend string, opts build.ImageBuildOptions, progress func(string), built *string) error {
	contextFS, err := fsutil.NewFS(contextDir)
	if err != nil {
		return err
	}
	dockerfileFS, err := fsutil.NewFS(dockerfileDir)
	if err != nil {
		return err
	}
	sess, err := session.NewSession(ctx, "headroom")
	if err != nil {
		return fmt.Errorf("opening a BuildKit session: %w", err)
	}
	sess.Allow(filesync.NewFSSyncProvider(filesync.StaticDirSource{"context": contextFS, "dockerfile": dockerfileFS}))
	done := make(chan error, 1)
	go func() {
		done <- sess.Run(ctx, func(ctx context.Context, proto string, meta map[string][]string) (net.Conn, error) {
			return cli.DialHijack(ctx, "/session", proto, meta)
		})
	}()
	defer func() {
		sess.Close()
		<-done
	}()
	opts.Version = build.BuilderBuildKit
	opts.SessionID = sess.ID()
	opts.RemoteContext = "client-session"
	opts.Labels[LabelBuilder] = BuilderBuildKit
	if frontend != "" {
		args := map[string]*string{frontendArg: &frontend}
		for k, v := range opts.BuildArgs {
			args[k] = v
		}
		opts.BuildArgs = args
		opts.Labels[LabelFrontend] = frontend
	}
	resp, err := cli.ImageBuild(ctx, nil, opts)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return readBuildStreamID(resp.Body, progress, built)
}

// frontendArg is the build argument by which BuildKit's built-in
// Dockerfile frontend hands the build to another frontend's image (as a
// `# syntax=` line would, without editing the task's Dockerfile).
const frontendArg = "BUILDKIT_SYNTAX"

// buildKitTrace is the id of the engine's build stream messages that hold
// BuildKit's progress (a StatusResponse, protobuf, base64 in JSON).
const buildKitTrace = "moby.buildkit.trace"

// buildKitStatus turns one BuildKit progress message into lines: a step's
// name when it starts ("[2/3] RUN make"), what it prints, and its error.
type buildKitStatus struct {
	started map[string]bool
}

func (s *buildKitStatus) lines(aux json.RawMessage, progress func(string)) error {
	var raw []byte
	if err := json.Unmarshal(aux, &raw); err != nil {
		return fmt.Errorf("reading BuildKit's progress: %w", err)
	}
	var st controlapi.StatusResponse
	if err := st.UnmarshalVT(raw); err != nil {
		return fmt.Errorf("reading BuildKit's progress: %w", err)
	}
	if s.started == nil {
		s.started = map[string]bool{}
	}
	for _, v := range st.Vertexes {
		if v.Started != nil && !s.started[v.Digest] && v.Name != "" {
			s.started[v.Digest] = true
			if v.Cached {
				progress(v.Name + " (cached)")
			} else {
				progress(v.Name)
			}
		}
		if v.Error != "" {
			progress(v.Name + ": " + v.Error)
		}
	}
	for _, l := range st.Logs {
		for _, line := range strings.Split(strings.TrimRight(string(l.Msg), "\n"), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				progress(line)
			}
		}
	}
	return nil
}
