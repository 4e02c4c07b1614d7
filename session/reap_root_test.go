package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-eval/headroom/runner"
)

// A copy of root A's experiment directory under root B (to share it, a
// backup) made A's kept containers B's: `clean --out B` removed them and
// logged it in B's copy. A trial's container, network and volume now
// carry the experiments root they were made for, and InRoot wants it to
// name root; one with no such label (an older headroom's, a Kubernetes
// pod's) is root's by its experiment's directory alone, as before.
func TestInRootWantsItsOwnRoot(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "20261203-182500-8ac6"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	ctr := func(kind, rootLabel string) runner.OwnedResource {
		return runner.OwnedResource{Kind: kind, Name: "headroom-20261203-182500-8ac6-t0001", Experiment: "20261203-182500-8ac6", Trial: "t0001", Root: rootLabel, Owner: "vm:1:1", Kept: true}
	}
	for _, c := range []struct {
		o    runner.OwnedResource
		want bool
	}{
		{ctr("container", root), true},
		{ctr("network", root), true},
		{ctr("volume", root), true},
		{ctr("container", link), true}, // the same directory by another name
		{ctr("container", other), false},
		{ctr("network", other), false},
		{ctr("volume", other), false},
		{ctr("container", root+"/sub"), false},
		{ctr("container", ""), true}, // an older headroom's: by its directory
	} {
		if got := InRoot(root)(c.o); got != c.want {
			t.Errorf("InRoot(%s)(%s %s, root label %q) = %t, want %t", root, c.o.Kind, c.o.Name, c.o.Root, got, c.want)
		}
	}
	if got := InRoot(link)(ctr("container", root)); !got {
		t.Errorf("InRoot(%s) refused a container labelled %s, the same directory", link, root)
	}
}
