package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner"
)

// clean --out removes only the leftovers of experiments under that root,
// and logs each removal in its experiment; another root's are listed and
// left. clean had no --out, unlike every other command that reads
// experiments.
func TestCleanOutRemovesOnlyItsRootsLeftovers(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	stamp := time.Now().UnixNano()
	mineExp, otherExp := fmt.Sprintf("20261201-000000-m%d", stamp%1e6), fmt.Sprintf("20261201-000000-o%d", stamp%1e6)
	if err := os.Mkdir(filepath.Join(root, mineExp), 0o700); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, exp := range []string{mineExp, otherExp} {
		name := "hr22-clean-" + exp
		// Labelled as headroom labels what it makes: experiment, trial
		// and a whole owner (clean leaves anything less).
		// This host, boot and pid namespace; a pid no process has.
		owner := strings.Split(runner.Owner(), ":")
		owner[1], owner[2] = "2147483646", "1"
		out, err := exec.Command("docker", "create", "--name", name, "--label", "headroom=1", "--label", "headroom.experiment="+exp,
			"--label", "headroom.trial=t0001", "--label", "headroom.owner="+strings.Join(owner, ":"), "--label", "headroom.kept=1", "headroom-debian:bookworm", "true").CombinedOutput()
		if err != nil {
			t.Skipf("cannot create a container: %v %s", err, out)
		}
		names = append(names, name)
	}
	t.Cleanup(func() {
		for _, n := range names {
			exec.Command("docker", "rm", "-f", n).Run()
		}
	})
	r := headroom(t, "clean", "--out", root)
	if r.code != 0 || !strings.Contains(r.stdout, "removed container hr22-clean-"+mineExp) ||
		strings.Contains(r.stdout, "removed container hr22-clean-"+otherExp) || !strings.Contains(r.stdout, "its experiment "+otherExp+" is not under --out") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := exec.Command("docker", "container", "inspect", names[1]).Run(); err != nil {
		t.Error("the other root's container was removed")
	}
	if log, err := os.ReadFile(filepath.Join(root, mineExp, "reaper.log")); err != nil || !strings.Contains(string(log), names[0]) {
		t.Errorf("no removal in the experiment's reaper.log: %v %s", err, log)
	}
	if r := headroom(t, "clean", "--out", filepath.Join(root, mineExp, "reaper.log")); r.code != 2 || !strings.Contains(r.stderr, "is not a directory of experiments") {
		t.Errorf("a file as --out: exit %d %s", r.code, r.stderr)
	}
}

// A run killed while it built its first image leaves the build's network,
// labelled with its --out, before it made that directory: clean --out
// refused the missing directory, so the network stayed (the twenty-fourth
// attacker's). A missing root is a root with no experiments.
func TestCleanOutTakesABuildNetworkOfARootNotMadeYet(t *testing.T) {
	needEngine(t)
	root := filepath.Join(t.TempDir(), "not-made")
	other := filepath.Join(t.TempDir(), "other")
	owner := strings.Split(runner.Owner(), ":")
	owner[1], owner[2] = "2147483646", "1"
	var names []string
	for _, r := range []string{root, other} {
		name := fmt.Sprintf("headroom-build-test%d-%d", os.Getpid(), len(names))
		out, err := exec.Command("docker", "network", "create", "--label", "headroom=1", "--label", "headroom.owner="+strings.Join(owner, ":"),
			"--label", runner.LabelBuild+"=hr-test:1", "--label", runner.LabelExperimentsRoot+"="+r, name).CombinedOutput()
		if err != nil {
			t.Skipf("cannot create a network: %v %s", err, out)
		}
		names = append(names, name)
	}
	t.Cleanup(func() {
		for _, n := range names {
			exec.Command("docker", "network", "rm", n).Run()
		}
	})
	r := headroom(t, "clean", "--out", root)
	if r.code != 0 || !strings.Contains(r.stdout, "removed network "+names[0]) || strings.Contains(r.stdout, names[1]) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := exec.Command("docker", "network", "inspect", names[1]).Run(); err != nil {
		t.Error("the other root's build network was removed")
	}
}

// A kept container whose headroom still runs is that run's live trial
// (--keep labels it kept at its create): clean leaves it, and says so in
// its dry run. clean removed a live --keep run's running trial container,
// and that run recorded infra-error · killed-outside.
func TestCleanLeavesAKeptContainerWhileItsHeadroomRuns(t *testing.T) {
	needEngine(t)
	root := t.TempDir()
	exp := fmt.Sprintf("20261201-000000-k%d", time.Now().UnixNano()%1e6)
	if err := os.Mkdir(filepath.Join(root, exp), 0o700); err != nil {
		t.Fatal(err)
	}
	name := "hr-clean-live-" + exp
	// This test's own process is the owner: alive, with its start time.
	out, err := exec.Command("docker", "create", "--name", name, "--label", "headroom=1", "--label", "headroom.experiment="+exp,
		"--label", "headroom.trial=t0001", "--label", "headroom.owner="+runner.Owner(), "--label", "headroom.kept=1",
		"--label", "headroom.experiments-root="+runner.AbsRoot(root), "headroom-debian:bookworm", "true").CombinedOutput()
	if err != nil {
		t.Skipf("cannot create a container: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	for _, args := range [][]string{{"clean", "--out", root, "--dry-run"}, {"clean", "--out", root}} {
		r := headroom(t, args...)
		if r.code != 0 || strings.Contains(r.stdout, "remove container "+name) || strings.Contains(r.stdout, "removed container "+name) ||
			!strings.Contains(r.stdout, "left "+name+" (trial t0001): its headroom "+runner.Owner()+" is still running") {
			t.Errorf("headroom %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if err := exec.Command("docker", "container", "inspect", name).Run(); err != nil {
		t.Error("the live run's kept container was removed")
	}
}

// report --out naming a file says which flag and what it takes, as clean
// does: it said "open X: not a directory" (the twenty-eighth attacker's 8).
func TestReportOutAFileNamesTheFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := headroom(t, "report", "--out", file)
	if want := "--out " + file + " is not a directory of experiments"; r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want 2 and %q\n%s", r.code, want, r.stderr)
	}
}

// validate refuses a task that takes a built-in task's name, as run
// does, given its file or its directory: it said ok to a task named
// builtin/swe-edit that run then refused (the twenty-eighth attacker's
// 6). A name that is a built-in's last part only is not taken.
func TestValidateRefusesABuiltinsName(t *testing.T) {
	dir := t.TempDir()
	body := "[environment]\nimage = \"builtin\"\n[verifier]\nworkload = { duration_ms = 10, style = \"edit\" }\n[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  name = \"s\"\n  workload = { duration_ms = 10 }\n"
	taken := filepath.Join(dir, "taken.toml")
	if err := os.WriteFile(taken, []byte("[task]\nname = \"builtin/swe-edit\"\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{taken, dir} {
		r := headroom(t, "tasks", "validate", arg)
		if want := "task builtin/swe-edit is already defined in builtin:swe-edit.toml; rename one"; r.code != 2 || !strings.Contains(r.stdout, want) {
			t.Errorf("validate %s: exit %d, want 2 and %q\n%s%s", arg, r.code, want, r.stdout, r.stderr)
		}
	}
	if err := os.WriteFile(taken, []byte("[task]\nname = \"swe-edit\"\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := headroom(t, "tasks", "validate", taken); r.code != 0 {
		t.Errorf("a task named swe-edit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A --floor of the host's whole memory or more is refused before any
// trial: none could ever start, and a headless run waited in silence
// until interrupted (the twenty-ninth attacker's 3).
func TestRunRefusesAFloorNoHostMeets(t *testing.T) {
	r := headroom(t, "run", "--tasks", "builtin/swe-edit", "--ratios", "1", "--repeats", "1", "--floor", "1000T", "--out", t.TempDir())
	if want := "is at least this host's whole memory"; r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want 2 and %q\n%s", r.code, want, r.stderr)
	}
}

// report --out DIR with no experiment named reports the store's only
// one, saying which on stderr; with two it lists them and says to name
// one. It listed the one, and the user copied its id back (the fifth new
// user's).
func TestReportOfAStoreOfOneReportsIt(t *testing.T) {
	root := t.TempDir()
	if r := headroom(t, "import", "harbor", "--out", root, "../importer/testdata/harbor/tb2-docker-1x"); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyExperiment(t, root)
	r := headroom(t, "report", "--out", root)
	if r.code != 0 || !strings.Contains(r.stdout, "success rate") || !strings.Contains(r.stderr, "the only experiment under "+root+": "+dir) {
		t.Errorf("one experiment: exit %d, want its report\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := headroom(t, "import", "harbor", "--out", root, "../importer/testdata/harbor/tb2-gke-3x"); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = headroom(t, "report", "--out", root)
	if r.code != 0 || strings.Contains(r.stdout, "success rate") || strings.Count(r.stdout, root) != 2 || !strings.Contains(r.stderr, "2 experiments: name one to report it (headroom report ID --out "+root+")") {
		t.Errorf("two experiments: exit %d, want the list\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A script's json is never a text list: refused, naming the count.
	if r := headroom(t, "report", "--out", root, "--format", "json"); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--format json reports one experiment and "+root+" holds 2: name it") {
		t.Errorf("two experiments, --format json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
