package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// WorkloadProgram is the name of the program that runs inside trials'
// containers: the step driver, the built-in tasks' synthetic agent and the
// in-pod probe (cmd/hr-workload). It is a small binary of its own (4 MB,
// ~3 ms from exec to main) rather than the console (88 MB with client-go,
// ~30 ms of package init paid by every built-in step).
const WorkloadProgram = "hr-workload"

// TaskDriverPath is where the step driver is mounted in a task image's
// container: a read-only bind of headroom's own static binary, named so
// that it runs as the workload binary (main dispatches on the name).
var TaskDriverPath = path.Join("/.headroom", WorkloadProgram)

// modulePath is headroom's module: what the source tree a console binary
// was built from must declare for WorkloadBinary to build the program there.
const modulePath = "github.com/headroom-eval/headroom"

// How WorkloadBinary found the program.
const (
	WorkloadBeside  = "beside"  // hr-workload next to headroom's executable (make build, go install ./...)
	WorkloadBuilt   = "built"   // built with the go toolchain from the source headroom was built from
	WorkloadConsole = "console" // headroom's own executable, which runs as hr-workload by that name
)

// WorkloadBinary finds the program trials' containers run, for a console
// executable exe (os.Executable). In order:
//
//   - hr-workload in exe's directory: what `make build` (bin/) and
//     `go install ./...` (GOBIN) leave;
//   - for a console built by `go build` or `go run` alone, hr-workload built
//     once from the same source tree (found from the path the compiler
//     recorded for this file; its go.mod must name headroom's module), kept
//     under the user's cache directory by exe's identity; with build false
//     it is only looked up (a check that builds nothing), and "" with no
//     error means it would have to be built;
//   - exe itself: the console's main runs workload.Main when called by that
//     name, so a lone copied binary still works, with a larger image and a
//     slower step.
//
// progress (may be nil) hears about a build.
func WorkloadBinary(exe string, build bool, progress func(string)) (path, how string, err error) {
	if exe == "" {
		return "", "", errors.New("headroom's own executable is unknown")
	}
	if filepath.Base(exe) == WorkloadProgram {
		return exe, WorkloadBeside, nil
	}
	beside := filepath.Join(filepath.Dir(exe), WorkloadProgram)
	if isExecutable(beside) {
		return beside, WorkloadBeside, nil
	}
	src := sourceRoot()
	if src == "" {
		return exe, WorkloadConsole, nil
	}
	goTool, lookErr := exec.LookPath("go")
	if lookErr != nil {
		if g := filepath.Join(runtime.GOROOT(), "bin", "go"); runtime.GOROOT() != "" && isExecutable(g) {
			goTool, lookErr = g, nil
		}
	}
	if lookErr != nil {
		return exe, WorkloadConsole, nil
	}
	out, stamp, err := builtWorkloadPath(exe)
	if err != nil {
		return exe, WorkloadConsole, nil
	}
	if b, err := os.ReadFile(out + ".stamp"); err == nil && string(b) == stamp && isExecutable(out) {
		return out, WorkloadBuilt, nil
	}
	if !build {
		return "", WorkloadBuilt, nil
	}
	if progress != nil {
		progress(fmt.Sprintf("building %s (go build ./cmd/%s in %s; `make build` puts it beside headroom)", WorkloadProgram, WorkloadProgram, src))
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return "", "", fmt.Errorf("build %s: %w", WorkloadProgram, err)
	}
	tmp := fmt.Sprintf("%s.%d", out, os.Getpid())
	cmd := exec.Command(goTool, "build", "-o", tmp, "./cmd/"+WorkloadProgram)
	cmd.Dir = src
	// Static and for Linux: it runs in FROM scratch images and is mounted
	// into task images, whatever the console runs on.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return "", "", fmt.Errorf("build %s in %s: %v: %s (or run `make build`, which puts it beside headroom)", WorkloadProgram, src, err, strings.TrimSpace(msg.String()))
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return "", "", fmt.Errorf("build %s: %w", WorkloadProgram, err)
	}
	_ = os.WriteFile(out+".stamp", []byte(stamp), 0o600)
	return out, WorkloadBuilt, nil
}

// builtWorkloadPath is where the program built for exe is kept: one file
// per console path (a rebuilt console replaces its own, so they do not pile
// up), with a stamp of the console's identity beside it.
func builtWorkloadPath(exe string) (path, stamp string, err error) {
	st, err := os.Stat(exe)
	if err != nil {
		return "", "", err
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(exe))
	path = filepath.Join(dir, "headroom", WorkloadProgram+"-"+hex.EncodeToString(sum[:8]))
	return path, fmt.Sprintf("%s|%d|%d\n", exe, st.Size(), st.ModTime().UnixNano()), nil
}

// sourceRoot is the module directory this package was compiled from, if it
// is still there and is headroom's (a -trimpath build records no directory).
func sourceRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	root := filepath.Dir(filepath.Dir(file)) // runner/ is one level down
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	named := false
	for _, l := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
			named = true
		}
	}
	if !named {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", WorkloadProgram)); err != nil {
		return ""
	}
	return root
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
