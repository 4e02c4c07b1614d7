package docker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// Harbor bind-mounts /logs/verifier, /logs/agent and /logs/artifacts from
// the trial's directory on its host. Where headroom made them directories
// of the container, a reward hard-linked (or renamed, as Python's
// os.replace does) in from the container's own file system passed here
// and failed under Harbor (EXDEV), `rm -rf /logs/verifier` succeeded here
// and failed there (EBUSY), and what the image had at the path showed
// (the twentieth attacker's 2). Each is now the mount point of an empty
// volume of the trial's, gone with it.
func TestHarborLogDirsAreMountPoints(t *testing.T) {
	needEngine(t)
	needDebian(t)
	check := `#!/bin/bash
bad=""
grep -qx agent /logs/agent/by-agent || bad="agent-work-lost"
echo x > /root/x
for d in /logs/verifier /logs/agent /logs/artifacts; do
  ln /root/x "$d/linked" 2>/dev/null && bad="$bad $d:linked-in"
  rm -rf "$d" 2>/dev/null && bad="$bad $d:removed"
  test -d "$d" || bad="$bad $d:gone"
done
test -e /logs/agent/from-image && bad="$bad image-content-shows"
echo "not mount points:${bad:- none}"
head -c 3145728 /dev/zero > /logs/verifier/written
if [ -z "$bad" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
`
	// Harbor makes its agent's and verifier's directories anyone's to
	// write (chmod 777) for an image whose USER is not root.
	for _, c := range []struct {
		user string
		opts Options
	}{{"root", Options{}}, {"agent", Options{}}, {"agent", Options{ExecSteps: true}}} {
		user := c.user
		sub := user
		if c.opts.ExecSteps {
			sub += "-exec-steps"
		}
		t.Run(sub, func(t *testing.T) {
			name := "harness-mounts-" + sub
			dockerfile := "FROM headroom-debian:bookworm\nRUN mkdir -p /logs/agent && echo image > /logs/agent/from-image\n"
			if user != "root" {
				dockerfile += "RUN useradd -m agent\nUSER agent\n"
			}
			task := harborTaskOf(t, filepath.Join(t.TempDir(), name), map[string]string{
				"task.toml": "schema_version = \"1.1\"\n[task]\nname = \"test/" + name + "\"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\nuser = \"root\"\n" +
					"[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n",
				"instruction.md":         "Nothing to do.\n",
				"environment/Dockerfile": dockerfile,
				"solution/solve.sh":      "#!/bin/bash\necho agent > /logs/agent/by-agent\n",
				"tests/test.sh":          check,
			})
			if len(task.HarnessMounts) != 3 {
				t.Fatalf("harness mounts %q, want Harbor's three", task.HarnessMounts)
			}
			results, _ := sweep(t, newBackend(t, c.opts), []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
			r := results[0]
			var out []string
			for _, s := range r.Steps {
				out = append(out, s.Name+": "+s.Output)
			}
			if r.Outcome != model.Passed || r.Reward == nil || *r.Reward != 1 {
				t.Errorf("%s (%s), want passed: each /logs directory a mount point, as Harbor's bind mounts\n%s", r.Outcome, r.Reason, strings.Join(out, "\n"))
			}
			// What the task wrote there counts as its writing.
			if r.Disk == nil || r.Disk.WrittenBytes < 3<<20 {
				t.Errorf("disk %+v: the 3 MiB test.sh wrote to /logs/verifier is not counted", r.Disk)
			}
			// The trial's volumes are gone with it.
			vols, err := testCli.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", runner.LabelTask+"="+task.Name))})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vols.Volumes {
				t.Errorf("volume %s left after its trial", v.Name)
			}
		})
	}
}
