package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/headroom-eval/headroom/buildignore"
	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// TaskRepo is the repository of images headroom builds from tasks'
// Dockerfiles; the tag is a digest of the build context.
const TaskRepo = "headroom-task"

const taskRecipe = "task-image-v1\n"

// ContextDigest hashes a build context: every file's path, mode and
// content, and the Dockerfile's name. An unchanged context reuses its
// image; any change builds a new one.
func ContextDigest(ctx context.Context, b model.Build) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%sdockerfile %s\n", taskRecipe, b.Dockerfile)
	if b.Inline != "" {
		fmt.Fprintf(h, "inline %q\n", b.Inline)
	}
	if b.Network != "" {
		// How its RUN steps reached a network is part of what the image
		// is: one built with a network is never reused as one built
		// without (nor the other way round).
		fmt.Fprintf(h, "network %s\n", b.Network)
	}
	if b.Target != "" || len(b.Args) > 0 {
		args := make([]string, 0, len(b.Args))
		for k, v := range b.Args {
			args = append(args, k+"="+v)
		}
		sort.Strings(args)
		fmt.Fprintf(h, "target %s args %q\n", b.Target, args)
	}
	// What the build is sent, no more: a file its .dockerignore leaves
	// out (a 100 GB sparse file, say) is never read.
	var paths []string
	err := walkContext(b.Context, b.Dockerfile, func(p, _ string, _ fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(b.Context, p)
		fmt.Fprintf(h, "%s %o\n", filepath.ToSlash(rel), info.Mode())
		switch {
		case info.Mode().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return "", err
			}
			_, err = io.Copy(h, ctxReader{ctx, f})
			f.Close()
			if err != nil {
				return "", err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, "-> %s\n", target)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ctxReader reads r until ctx ends: hashing a large context gives way to
// a stop signal or the build's time limit.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

var unsafeRepo = regexp.MustCompile(`[^a-z0-9._-]+`)

// repoSeparators are runs of separators a repository name may not hold
// (it takes one '.', one or two '_', or dashes): a task named with `___`
// made a tag the engine refused ("invalid reference format"), so every
// run of it failed to build.
var repoSeparators = regexp.MustCompile(`[._-]{2,}`)

// TaskImageTag is the tag a task's built image gets.
func TaskImageTag(ctx context.Context, taskName string, b model.Build) (string, error) {
	return taskImageTag(ctx, taskName, b, "")
}

// taskImageTag is TaskImageTag with bases (baseImages: the images its
// FROM lines name, as the engine holds them now) in the digest.
func taskImageTag(ctx context.Context, taskName string, b model.Build, bases string) (string, error) {
	d, err := ContextDigest(ctx, b)
	if err != nil {
		return "", fmt.Errorf("reading the build context %s: %w", b.Context, err)
	}
	if bases != "" {
		h := sha256.Sum256([]byte(d + "\n" + bases))
		d = hex.EncodeToString(h[:])[:16]
	}
	slug := unsafeRepo.ReplaceAllString(strings.ToLower(taskName), "-")
	slug = repoSeparators.ReplaceAllStringFunc(slug, func(run string) string {
		if run == "__" || strings.Trim(run, "-") == "" {
			return run // a separator the engine takes, kept: the tag is as before
		}
		return "-"
	})
	slug = strings.Trim(slug, "-._")
	if slug == "" {
		slug = "task"
	}
	return TaskRepo + "/" + shortSlug(slug, taskName) + ":" + d, nil
}

// maxSlug is the longest slug a tag keeps whole: the engine refuses a
// repository name over 255 characters ("repository name must not be more
// than 255 characters"), and engines before distribution/reference
// v0.6 count the "docker.io/" they put in front: 255 − len("docker.io/")
// − len("headroom-task/") = 231.
const maxSlug = 255 - len("docker.io/") - len(TaskRepo+"/")

// shortSlug is slug whole when it fits, else its first characters and a
// digest of the task's whole name (so two long names alike for their
// first 218 characters keep two images). A task named with 242
// characters passed `tasks validate` and then failed at its build; the
// image's name is headroom's own, so the task keeps its name, which may
// be a benchmark's directory its user cannot rename. Sidecars' and
// verifiers' images (task/service) go through here too.
func shortSlug(slug, taskName string) string {
	if len(slug) <= maxSlug {
		return slug
	}
	sum := sha256.Sum256([]byte(taskName))
	suffix := "-" + hex.EncodeToString(sum[:6])
	return strings.TrimRight(slug[:maxSlug-len(suffix)], "-._") + suffix
}

// EnsureTaskImage makes sure a task's image is on the engine and returns
// its name. A task that names an image runs that image, as Harbor runs a
// pinned docker_image even beside a Dockerfile: the engine's copy, else
// pulled. Only when it cannot be pulled is the task's Dockerfile built
// instead (cached by the context's digest), and progress says so, its
// output bounded (buildOutput). A pull or a base image that cannot be
// fetched fails with what to do.
func EnsureTaskImage(ctx context.Context, cli *client.Client, t model.Task, progress func(string)) (string, error) {
	if progress == nil {
		progress = func(string) {}
	}
	// What the task's build prints is bounded (buildOutput); its last
	// lines come before the error that ends it.
	out := newBuildOutput(progress)
	defer out.end()
	progress = out.line
	if t.Image != "" {
		if ok, err := imageExists(ctx, cli, t.Image); err != nil {
			return "", fmt.Errorf("task %s: %w", t.Name, err)
		} else if ok {
			return t.Image, nil
		}
		progress(fmt.Sprintf("pulling %s for %s", t.Image, t.Name))
		err := pull(ctx, cli, t.Image, progress)
		if err == nil {
			return t.Image, nil
		}
		if t.Build == nil {
			return "", fmt.Errorf("task %s: image %s is not on this engine and could not be pulled: %v; load it (`docker load`) or give the task an environment/Dockerfile", t.Name, t.Image, err)
		}
		progress(fmt.Sprintf("%s: the pinned image %s could not be pulled (%v); building %s instead, which Harbor would not do", t.Name, t.Image, err, filepath.Join(t.Build.Context, t.Build.Dockerfile)))
	}
	engine, err := chooseEngineBuilder(ctx, cli)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", t.Name, err)
	}
	b := *t.Build
	plan := planBuild(engine, t, b)
	b.Network = plan.Network
	// Reading the context is the build's time too.
	dctx, cancel := context.WithCancel(ctx)
	if b.Timeout > 0 {
		dctx, cancel = context.WithTimeout(ctx, b.Timeout)
	}
	tag, err := taskImageTag(dctx, t.Name, b, baseImages(ctx, cli, b))
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("reading the build context %s ran past the build's time limit (%s, [environment] build_timeout_sec): %w", b.Context, b.Timeout, err)
		}
		return "", fmt.Errorf("task %s: %w", t.Name, err)
	}
	// The image cached under the tag is used only when headroom built it
	// (cachedImage): anyone on the engine can tag another there.
	if ok, _ := cachedImage(ctx, cli, tag, progress); ok {
		return tag, nil
	}
	unlock, err := lockBuild(ctx, tag, progress)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", t.Name, err)
	}
	defer unlock()
	if ok, _ := cachedImage(ctx, cli, tag, func(string) {}); ok {
		return tag, nil // built by the run it waited for
	}
	progress(fmt.Sprintf("building %s from %s (cached as %s)", t.Name, filepath.Join(t.Build.Context, t.Build.Dockerfile), tag))
	built, err := buildPlanned(ctx, cli, tag, b, plan, t, progress)
	if err != nil {
		return "", fmt.Errorf("task %s: building %s: %w", t.Name, filepath.Join(t.Build.Context, t.Build.Dockerfile), err)
	}
	dropLostBuild(ctx, cli, tag, built, progress)
	recordTagBuilt(ctx, cli, tag, progress)
	return tag, nil
}

// dropLostBuild removes the image this process just built (built, the
// id its build said) when the tag it was built under names another now:
// a headroom on another host of the same engine (lockBuild holds this
// host's) built the same task at once and tagged its own after it, and
// this one would stay untagged on the engine for good, the size of a
// task's environment (the sixteenth attacker's 9). Only the id this
// build made is removed (and the untagged layers only it held); an image
// in use stays. (A build that tags after the other looked is not seen:
// the lock is what holds.)
func dropLostBuild(ctx context.Context, cli *client.Client, tag, built string, progress func(string)) {
	if built == "" {
		return
	}
	now, err := imageID(ctx, cli, tag)
	if err != nil || now == "" || now == built {
		return
	}
	if _, err := cli.ImageRemove(ctx, built, image.RemoveOptions{PruneChildren: true}); err != nil {
		progress(fmt.Sprintf("another build took the tag %s; removing this build's image %s: %v", tag, shortID(built), err))
		return
	}
	progress(fmt.Sprintf("another build took the tag %s: this build's image %s removed", tag, shortID(built)))
}

func pull(ctx context.Context, cli *client.Client, ref string, progress func(string)) error {
	if err := checkPull(ctx, ref); err != nil {
		return err
	}
	rc, err := cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	return readBuildStream(rc, progress)
}

// buildContext sends the context to the engine and builds it, within the
// task's build time limit, with the classic builder where the Dockerfile
// parses for it (it alone bounds a build's network and memory here) and
// BuildKit where it needs BuildKit and the engine offers it (as Harbor's
// `docker compose build` builds every Dockerfile); the progress names the
// builder, and the image carries it (LabelBuilder). It is bounded as for
// a task with a network (planBuild).
func buildContext(ctx context.Context, cli *client.Client, tag string, b model.Build, progress func(string)) error {
	engine, err := chooseEngineBuilder(ctx, cli)
	if err != nil {
		return err
	}
	t := model.Task{Name: tag, Build: &b}
	_, err = buildPlanned(ctx, cli, tag, b, planBuild(engine, t, b), t, progress)
	return err
}

// buildPlanned is buildContext bounded as plan says (planBuild): its
// builder, network and memory. It returns the id of the image built, as
// the build said it ("" if it did not).
func buildPlanned(ctx context.Context, cli *client.Client, tag string, b model.Build, plan buildPlan, t model.Task, progress func(string)) (string, error) {
	if b.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.Timeout)
		defer cancel()
	}
	if err := checkFetches(ctx, cli, b, plan); err != nil {
		return "", err
	}
	var built string
	err := buildBounded(ctx, cli, plan, tag, b, progress, &built)
	if plan.Builder.Name == BuilderBuildKit && buildKitRefused(err) {
		plan = planBuild(Builder{Name: BuilderClassic, Reason: "the engine refused BuildKit: " + err.Error()}, t, b)
		err = buildBounded(ctx, cli, plan, tag, b, progress, &built)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			held := ""
			if plan.CPUs > 0 {
				// Its CPU bound slowed it: say which, and what lifts it.
				held = fmt.Sprintf("; its RUN steps had at most %g CPU: give it more with --build-cpus", plan.CPUs)
			}
			return "", fmt.Errorf("the build ran past its time limit (%s, [environment] build_timeout_sec)%s", b.Timeout, held)
		}
		return "", explainBuildError(err)
	}
	return built, nil
}

// buildWith builds the context with one builder, with no network and no
// memory bound.
func buildWith(ctx context.Context, cli *client.Client, builder Builder, tag string, b model.Build, progress func(string)) error {
	return buildBounded(ctx, cli, buildPlan{Builder: builder, Network: model.BuildNetworkNone, Task: tag}, tag, b, progress, nil)
}

// buildBounded builds the context as plan says: the classic builder gets
// the context as a tar stream, its RUN steps the plan's network and
// memory bound; BuildKit reads it through its session, with no network or
// the engine's default one. The image carries the network it was built
// with (LabelBuildNetwork).
func buildBounded(ctx context.Context, cli *client.Client, plan buildPlan, tag string, b model.Build, progress func(string), built *string) error {
	builder := plan.Builder
	progress("builder: " + builder.String())
	progress(plan.says())
	opts := build.ImageBuildOptions{
		Tags: []string{tag}, Dockerfile: b.Dockerfile, Remove: true, ForceRemove: true,
		Labels:    map[string]string{runner.LabelHeadroom + ".image": "task", LabelBuildNetwork: plan.Network},
		BuildArgs: buildArgs(b.Args), Target: b.Target,
	}
	if builder.Name == BuilderBuildKit {
		opts.NetworkMode = plan.networkMode("")
		frontend := ""
		if builder.Frontend != nil && b.NewerBuildKit != "" {
			return fmt.Errorf("%s needs the BuildKit of Docker 23 or later: here headroom's Dockerfile frontend runs in place of the engine's (%s), and the engine's BuildKit builds that otherwise than written without a word, so headroom does not build it; build it on a current engine, or write it without that", b.NewerBuildKit, builder.Frontend.Why)
		}
		if builder.Frontend != nil {
			ref, err := ensureFrontendImage(ctx, cli, builder.Frontend.Binary, progress)
			if err != nil {
				return err
			}
			frontend = ref
		}
		dockerfileDir := filepath.Dir(filepath.Join(b.Context, b.Dockerfile))
		opts.Dockerfile = filepath.Base(b.Dockerfile)
		if b.Inline != "" {
			dir, err := os.MkdirTemp("", "headroom-dockerfile-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(b.Inline), 0o600); err != nil {
				return err
			}
			dockerfileDir, opts.Dockerfile = dir, "Dockerfile"
		}
		err := buildKitBuild(ctx, cli, b.Context, dockerfileDir, frontend, opts, progress, built)
		if err != nil && !buildKitRefused(err) {
			err = plan.explainBounds(err, false)
		}
		return err
	}
	opts.Labels[LabelBuilder] = BuilderClassic
	opts.BuildArgs = platformArgs(ctx, cli, opts.BuildArgs, declaredArgs(b))
	if plan.Memory > 0 {
		opts.Memory, opts.MemorySwap = plan.Memory, plan.Memory
	}
	opts.CPUPeriod, opts.CPUQuota = plan.cpuQuota()
	opts.NetworkMode = plan.networkMode("")
	if plan.Network == model.BuildNetworkOwn {
		name, remove, err := ownBuildNetwork(ctx, cli, tag)
		if err != nil {
			return err
		}
		defer remove()
		opts.NetworkMode = name
	}
	var steps stepTracker
	tracked := func(l string) {
		steps.line(l)
		progress(l)
	}
	var oom *oomWatch
	if plan.Memory > 0 {
		oom = watchOOM(ctx, cli)
		defer oom.stop()
	}
	if b.Inline != "" {
		opts.Dockerfile = inlineDockerfile
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(tarContext(pw, b.Context, b.Inline, b.Dockerfile)) }()
	resp, err := cli.ImageBuild(ctx, pr, opts)
	pr.CloseWithError(errors.New("build request ended"))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = readBuildStreamID(resp.Body, tracked, built)
	if err != nil {
		// The OOM event comes before the step's exit that ends the build:
		// it is waited for a moment only when the step was SIGKILLed.
		killed := oom != nil && killedBy137(err) && oom.killed(steps.ids, 5*time.Second)
		err = plan.explainBounds(err, killed)
	}
	return err
}

// LabelBuildNetwork is the label of a built task image naming the network
// its RUN steps had (model.BuildNetwork*).
const LabelBuildNetwork = "headroom.image.build-network"

// platformArgs gives a classic build the platform arguments BuildKit
// gives every build (TARGETARCH, BUILDPLATFORM, …: a Dockerfile that
// declares `ARG TARGETARCH` reads the engine's architecture under either
// builder), those the Dockerfile declares (declared) only: the classic
// builder warned of every other one, "[Warning] One or more build-args
// [TARGETVARIANT …] were not consumed", on every build, and a new user
// read it as the task's problem. The task's own arguments win.
func platformArgs(ctx context.Context, cli *client.Client, args map[string]*string, declared map[string]bool) map[string]*string {
	v, err := cli.ServerVersion(ctx)
	if err != nil || v.Os == "" || v.Arch == "" {
		return args
	}
	out := map[string]*string{}
	plat := v.Os + "/" + v.Arch
	for _, prefix := range []string{"TARGET", "BUILD"} {
		for k, val := range map[string]string{"PLATFORM": plat, "OS": v.Os, "ARCH": v.Arch, "VARIANT": ""} {
			if declared[prefix+k] {
				val := val
				out[prefix+k] = &val
			}
		}
	}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// argLine is an ARG instruction (instructions are read in any case).
var argLine = regexp.MustCompile(`(?im)^[ \t]*ARG[ \t]+([^\r\n]*)`)

// declaredArgs are the names a build's Dockerfile declares with ARG,
// read bounded and confined to the context, as the loader read it;
// nil where it cannot be read (the build then fails on its own words).
func declaredArgs(b model.Build) map[string]bool {
	text := b.Inline
	if text == "" {
		data, err := confine.ReadFile(b.Context, filepath.Join(b.Context, b.Dockerfile), 1<<20)
		if err != nil {
			return nil
		}
		text = string(data)
	}
	out := map[string]bool{}
	for _, m := range argLine.FindAllStringSubmatch(text, -1) {
		for _, f := range strings.Fields(m[1]) {
			name, _, _ := strings.Cut(f, "=")
			out[name] = true
		}
	}
	return out
}

func buildArgs(args map[string]string) map[string]*string {
	if len(args) == 0 {
		return nil
	}
	out := make(map[string]*string, len(args))
	for k, v := range args {
		out[k] = &v
	}
	return out
}

// explainBuildError adds what to do when the build's failing step is its
// FROM and the base image could not be fetched: the usual cause where no
// registry is reachable. A failing ADD of a URL is said to be that, not
// the base image; a failing RUN is left as it is, whatever its command's
// own text says (the words below may be in it).
func explainBuildError(err error) error {
	msg := err.Error()
	fetch := false
	for _, s := range []string{"pull access denied", "failed to resolve", "no such host", "dial tcp", "i/o timeout", "manifest unknown", "connection refused", "TLS handshake"} {
		if strings.Contains(msg, s) {
			fetch = true
			break
		}
	}
	if !fetch {
		return err
	}
	switch failedStep(msg) {
	case "FROM":
		return fmt.Errorf("%v: the Dockerfile's base image could not be fetched from its registry; where no registry is reachable, build or load the base image locally first (`headroom images build --real` makes %s)", err, DebianImage)
	case "ADD":
		return fmt.Errorf("%v: the Dockerfile's ADD could not fetch its URL (the base image was not the cause); where the URL is not reachable from the engine, put the file in the build context and COPY it", err)
	}
	return err
}

// failedStep names the kind of build step an engine's build error comes
// from: "RUN", "ADD", "FROM", or "" when the error does not say. The
// classic builder's ADD error starts "ADD failed", a RUN's names its
// command ("The command '…' returned a non-zero code"); BuildKit's names
// the failing instruction ("[2/3] ADD …", "process \"…\" did not complete
// successfully"). A FROM's is a pull's: the registry's API (/v2/),
// "pull access denied", a manifest or source metadata not resolved.
func failedStep(msg string) string {
	switch {
	case strings.Contains(msg, "returned a non-zero code") || strings.Contains(msg, "did not complete successfully"):
		return "RUN"
	case strings.HasPrefix(msg, "ADD failed") || strings.Contains(msg, ": ADD failed") || buildKitStep.MatchString(msg) && buildKitStep.FindStringSubmatch(msg)[1] == "ADD":
		return "ADD"
	case buildKitStep.MatchString(msg):
		return buildKitStep.FindStringSubmatch(msg)[1]
	case (strings.Contains(msg, "failed to load cache key") || strings.Contains(msg, "failed to compute cache key")) && strings.Contains(msg, `Get "http`) && !strings.Contains(msg, "/v2/"):
		return "ADD" // BuildKit's fetch of an ADD's URL, unnamed
	case strings.Contains(msg, "pull access denied") || strings.Contains(msg, "manifest unknown") || strings.Contains(msg, "failed to resolve source metadata") ||
		strings.Contains(msg, "/v2/") || strings.Contains(msg, "failed to resolve reference") || strings.Contains(msg, "failed to do request: Head"):
		return "FROM"
	}
	return ""
}

// buildKitStep is BuildKit's naming of a failing instruction: "[stage
// 2/3] ADD …" or "[2/3] RUN …".
var buildKitStep = regexp.MustCompile(`\[(?:[^\]]*\s)?\d+/\d+\]\s+([A-Z]+)\b`)

// readBuildStream relays an engine build or pull stream's lines and
// returns the error it reports.
func readBuildStream(r io.Reader, progress func(string)) error {
	return readBuildStreamID(r, progress, nil)
}

// readBuildStreamID is readBuildStream, which also puts in built (when
// not nil) the id of the image the build made, as its stream says it
// (an aux message's ID, the classic builder's and BuildKit's
// moby.image.id).
func readBuildStreamID(r io.Reader, progress func(string), built *string) error {
	dec := json.NewDecoder(r)
	var trace buildKitStatus
	for {
		var msg struct {
			Stream   string          `json:"stream"`
			Status   string          `json:"status"`
			Progress string          `json:"progress"`
			Error    string          `json:"error"`
			ID       string          `json:"id"`
			Aux      json.RawMessage `json:"aux"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if msg.Error != "" {
			return errors.New(strings.TrimSpace(msg.Error))
		}
		if msg.ID == buildKitTrace && msg.Aux != nil {
			if err := trace.lines(msg.Aux, progress); err != nil {
				return err
			}
			continue
		}
		if msg.Aux != nil && built != nil {
			var aux struct{ ID string }
			if json.Unmarshal(msg.Aux, &aux) == nil && strings.HasPrefix(aux.ID, "sha256:") {
				*built = aux.ID
			}
		}
		// The classic builder colours a RUN's stderr (ESC[91m … ESC[0m):
		// the colour codes go, the text stays.
		for _, s := range strings.Split(strings.TrimRight(ansiColour.ReplaceAllString(msg.Stream, ""), "\n"), "\n") {
			if s = strings.TrimSpace(s); s != "" {
				progress(s)
			}
		}
		if msg.Status != "" && msg.Progress == "" {
			progress(msg.Status)
		}
	}
}

// ansiColour is a terminal colour code (SGR), as the classic builder's
// stream wraps a RUN's stderr in.
var ansiColour = regexp.MustCompile("\x1b\\[[0-9;]*m")

// inlineDockerfile is where an inline Dockerfile goes in the context sent.
const inlineDockerfile = ".headroom-inline.Dockerfile"

// tarDir writes dir as a tar stream, paths relative to it, with an
// inline Dockerfile's text as inlineDockerfile when there is one
// (tarContext of a context whose Dockerfile is "Dockerfile").
func tarDir(w io.Writer, dir, inline string) error {
	return tarContext(w, dir, inline, "Dockerfile")
}

// tarContext is tarDir of a build context whose Dockerfile is dockerfile:
// what its .dockerignore excludes is left out, as the docker CLI leaves
// it out for the classic builder and BuildKit's Dockerfile frontend does
// itself (the Dockerfile and .dockerignore always go).
func tarContext(w io.Writer, dir, inline, dockerfile string) error {
	tw := tar.NewWriter(w)
	if inline != "" {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: inlineDockerfile, Mode: 0o644, Size: int64(len(inline))}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, inline); err != nil {
			return err
		}
	}
	err := walkContext(dir, dockerfile, func(p, name string, d fs.DirEntry) error {
		info, err := d.Info()
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return runner.TarEntry(tw, "", name, info)
		case info.Mode().IsRegular(), info.Mode()&fs.ModeSymlink != 0:
			return runner.TarEntry(tw, p, name, info)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// walkContext calls fn on each entry of the build context dir that the
// build is sent (its path, its name in the context, the entry): what its
// .dockerignore excludes is left out, as the docker CLI leaves it out for
// the classic builder and BuildKit's Dockerfile frontend does itself (the
// Dockerfile and .dockerignore always go). The context's digest reads the
// same entries as its tar.
func walkContext(dir, dockerfile string, fn func(p, name string, d fs.DirEntry) error) error {
	ignore, err := buildignore.Read(dir)
	if err != nil {
		return err
	}
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	keep := map[string]bool{".dockerignore": true, filepath.ToSlash(filepath.Clean(dockerfile)): true}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(rel)
		if name == "." {
			return nil
		}
		if ignore != nil && !keep[name] {
			skip, err := ignore.MatchesOrParentMatches(name)
			if err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, ".dockerignore"), err)
			}
			if skip {
				if d.IsDir() && !ignore.Exclusions() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		return fn(p, name, d)
	})
}

// baseImages names each image the Dockerfile builds on (its FROM lines
// and COPY --from images, model.Build.Fetches) with the id the engine
// holds under that name now, "not here" where it holds none: the cache
// key of the image built on them. Keyed by the context alone, an image
// built FROM atk15-base:1 was reused after atk15-base:1 was rebuilt, and
// every trial graded the old environment, where Harbor's `docker compose
// build` builds on the new one (the fifteenth attacker's 2; rebuilding
// headroom-debian:bookworm left every real task's image stale the same
// way). A name whose variables only the engine knows is left out.
func baseImages(ctx context.Context, cli *client.Client, b model.Build) string {
	var lines []string
	for _, f := range b.Fetches {
		if !f.Image || f.Unread != "" || strings.EqualFold(f.Source, "scratch") {
			continue
		}
		id := "not here"
		if ins, err := cli.ImageInspect(ctx, f.Source); err == nil {
			id = ins.ID
		}
		lines = append(lines, f.Source+" "+id)
	}
	sort.Strings(lines)
	return strings.Join(slices.Compact(lines), "\n")
}
