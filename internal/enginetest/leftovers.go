package enginetest

import (
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/headroom-eval/headroom/runner"
)

// Leftovers are the containers, volumes and networks on the engine whose
// experiments root (runner.LabelExperimentsRoot) lies under root, as
// "kind name (root)": what the runs of a suite whose every --out is
// under root left behind. A suite gives its tests a temporary directory
// of its own (TMPDIR) and calls it after them: the objects it names are
// provably the suite's, being under a directory only it made, and
// RemoveLeftovers removes them. Nil where no engine answered.
func Leftovers(root string) []string {
	root = filepath.Clean(root)
	var left []string
	for _, kind := range []struct{ name, list, format string }{
		{"container", "ps -a", "{{.Names}}"},
		{"volume", "volume ls", "{{.Name}}"},
		{"network", "network ls", "{{.Name}}"},
	} {
		args := append(strings.Fields(kind.list), "--filter", "label="+runner.LabelExperimentsRoot,
			"--format", kind.format+"\t{{.Label \""+runner.LabelExperimentsRoot+"\"}}")
		out, err := exec.Command("docker", args...).Output()
		if err != nil {
			return nil
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, at, ok := strings.Cut(line, "\t")
			if !ok || (at != root && !strings.HasPrefix(at, root+string(filepath.Separator))) {
				continue
			}
			left = append(left, kind.name+" "+name+" ("+at+")")
		}
	}
	return left
}

// RemoveLeftovers removes what Leftovers named: containers first, then
// the volumes and networks they held.
func RemoveLeftovers(left []string) {
	for _, kind := range []struct{ name, rm string }{{"container", "rm -f"}, {"volume", "volume rm -f"}, {"network", "network rm"}} {
		for _, l := range left {
			if rest, ok := strings.CutPrefix(l, kind.name+" "); ok {
				name, _, _ := strings.Cut(rest, " ")
				_ = exec.Command("docker", append(strings.Fields(kind.rm), name)...).Run()
			}
		}
	}
}
