// Package layering holds the module's import arrows to one table: which
// packages a package may not depend on (directly or through another), and why.
package layering

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/headroom-eval/headroom"

// rule: pkg (relative to the module) depends on none of not, and, when
// only is set, on no package of the module outside it. A name in not
// covers its sub-packages ("runner" covers runner/docker); one with a dot
// before its first slash is outside the module ("github.com/docker/docker").
type rule struct {
	pkg  string
	only []string
	not  []string
	why  string
}

var backends = []string{"runner/docker", "runner/kube", "runner/fake"}

var rules = []rule{
	{pkg: "model", only: []string{}, why: "the domain is pure: everything depends on it, it on nothing"},
	{pkg: "themes", only: []string{}, why: "a theme is colours by role; the console maps what it shows to a role"},
	{pkg: "confine", only: []string{}, why: "path confinement is a leaf every reader of a task uses"},
	{pkg: "buildignore", only: []string{"confine", "model"}, why: "one reader of a build's .dockerignore for what a build is sent and what the loader says a COPY finds"},
	{pkg: "printable", only: []string{}, why: "text made safe to print is a leaf"},
	{pkg: "runner/kmsg", only: []string{}, why: "the kernel log reader is a leaf both backends use"},
	{pkg: "cgroup", only: []string{"model"}, why: "the floor under the backends and the in-container program"},
	{pkg: "verdict", only: []string{"model"}, why: "a verifier's output judged, pure"},
	{pkg: "event", only: []string{"model"}, why: "the one event stream every face reads, whatever backend ran"},
	{pkg: "workload", only: []string{"model", "cgroup", "workload/wire"}, why: "the in-container program stands on the domain, the cgroup floor and its own wire alone"},
	{pkg: "workload/wire", only: []string{}, why: "the host's words to the in-container program are a leaf the task schema builds commands from (taskfile's TestTaskSchemaCompilesNoInContainerProgram holds the rest)"},
	{pkg: "store", only: []string{"model", "event", "confine"}, why: "experiment directories know records, not who made them (confine, a leaf, names a file that is not regular)"},
	{pkg: "runner", not: append([]string{"store", "session", "ui", "cli", "taskfile", "agents"}, backends...), why: "the runner drives a Backend port; backends depend on it, not it on them"},
	{pkg: "runner/docker", not: []string{"taskfile", "runner/kube", "store", "session", "ui", "cli", "agents"}, why: "a backend runs model.Tasks; where they came from is not its business"},
	{pkg: "runner/kube", not: []string{"runner/docker", "github.com/docker/docker", "store", "session", "ui", "cli", "agents"}, why: "the Kubernetes backend is given an image builder, it imports no Docker code"},
	{pkg: "ui", not: []string{"runner", "store", "session", "cli", "agents", "taskfile", "report"}, why: "the console reads the event stream; it opens no backend, store or session"},
	{pkg: "report", not: []string{"runner", "session", "ui", "cli", "taskfile"}, why: "reports are made from records"},
	{pkg: "agents", not: []string{"runner", "session", "ui", "cli"}, why: "agent definitions are data the runner is given"},
	{pkg: "taskfile", not: []string{"runner", "store", "session", "ui", "cli", "agents"}, why: "task files become model.Tasks, for any backend"},
	{pkg: "importer", not: []string{"runner", "session", "ui", "cli"}, why: "other harnesses' runs become records"},
	{pkg: "session", not: append([]string{"ui", "cli"}, backends...), why: "a sweep runs on a runner.Platform; backends register in main"},
	{pkg: "cli", not: backends, why: "backends register in main (main.go, main_kube.go), not in the commands"},
}

func covers(name, pkg string) bool {
	if !strings.Contains(strings.SplitN(name, "/", 2)[0], ".") {
		name = module + "/" + name
	}
	return pkg == name || strings.HasPrefix(pkg, name+"/")
}

// deps is every package of the module with everything it depends on.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	all := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		all[f[0]] = f[1:]
	}
	return all
}

func TestLayering(t *testing.T) {
	all := deps(t)
	for _, r := range rules {
		pkg := module + "/" + r.pkg
		ds, ok := all[pkg]
		if !ok {
			t.Errorf("the rule for %s names no package of the module: remove or rename it", r.pkg)
			continue
		}
		for _, d := range ds {
			if slices.ContainsFunc(r.not, func(n string) bool { return covers(n, d) }) ||
				(r.only != nil && strings.HasPrefix(d, module+"/") && !slices.ContainsFunc(r.only, func(n string) bool { return covers(n, d) })) {
				t.Errorf("%s depends on %s: %s", r.pkg, strings.TrimPrefix(d, module+"/"), r.why)
			}
		}
	}
}
