package cli

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/replay"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestParsePP(t *testing.T) {
	for in, want := range map[string]float64{"3pp": 0.03, "3%": 0.03, "3": 0.03, "0.03": 0.03, "1%": 0.01, "0pp": 0, "100%": 1, " 2.5pp ": 0.025} {
		got, err := parsePP("x", in)
		if err != nil || got < want-1e-12 || got > want+1e-12 {
			t.Errorf("parsePP(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-1pp", "101%", "3ppp"} {
		if _, err := parsePP("x", bad); err == nil {
			t.Errorf("parsePP(%q) accepted", bad)
		}
	}
}

// The resume hint names --out unless the experiment is in the default
// store, and quotes what a shell would split.
func TestResumeCommand(t *testing.T) {
	for _, tt := range []struct{ root, want string }{
		{store.DefaultRoot(), "headroom run --resume E1"},
		{"/tmp/x", "headroom run --resume E1 --out /tmp/x"},
		{"/tmp/my runs", "headroom run --resume E1 --out '/tmp/my runs'"},
		{"/tmp/it's", `headroom run --resume E1 --out '/tmp/it'\''s'`},
	} {
		if got := resumeCommand("E1", tt.root); got != tt.want {
			t.Errorf("resumeCommand(%q) = %q, want %q", tt.root, got, tt.want)
		}
	}
}

// pflag prints a flag's first backquoted word as its argument name
// (`--keep headroom clean`): no flag's help may hold a backquote.
func TestNoBackquotesInFlagHelp(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s --%s: help %q renders %q as the argument name", c.CommandPath(), f.Name, f.Usage, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(io.Discard, io.Discard))
}

// tasks show prints the CPU limit a run on this host uses: capped at the
// host's CPUs, and says so (it printed --cpus=10 on a 2-CPU host).
func TestTasksShowCapsCPUs(t *testing.T) {
	var out bytes.Buffer
	root := NewRoot(&out, io.Discard)
	root.SetArgs([]string{"tasks", "show", "builtin/compile-project"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	host := runtime.NumCPU()
	capped := false
	for _, m := range regexp.MustCompile(`--cpus=([0-9.]+)`).FindAllStringSubmatch(out.String(), -1) {
		n, _ := strconv.ParseFloat(m[1], 64)
		if n > float64(host) {
			t.Errorf("--cpus=%s on a %d-CPU host", m[1], host)
		}
		capped = capped || n == float64(host)
	}
	// compile-project's spec is 2 CPUs: 5x asks for 10.
	if host < 10 && (!capped || !strings.Contains(out.String(), "capped from 10") || !strings.Contains(out.String(), fmt.Sprintf("above this host's %d CPUs", host))) {
		t.Errorf("capped limits not marked:\n%s", out.String())
	}
}

// A resume runs the experiment's plan as the resume's own flags say: a
// resume set its own copy of how to run, without --exec-steps,
// --sampler and --apply-storage (the eleventh attacker's `--resume
// --exec-steps` ran through the step driver).
func TestResumeRunsAsItsFlagsSay(t *testing.T) {
	f := &runFlags{execSteps: true, sampler: "stats", applyStore: true, keep: true, failFast: true, out: "/tmp/x"}
	m := store.Manifest{ID: "E1", Ratios: []model.Ratio{{K: 2}}, Repeats: 3, Seed: 7}
	spec := resumedSpec(m, nil, f, sweepSetup{})
	if !spec.ExecSteps || !spec.ForceStats || !spec.ApplyStorage || !spec.Keep || !spec.FailFast || spec.OutRoot != "/tmp/x" {
		t.Errorf("resumed spec runs as exec-steps %v, stats %v, apply-storage %v, keep %v, fail-fast %v, out %q: want the resume's flags",
			spec.ExecSteps, spec.ForceStats, spec.ApplyStorage, spec.Keep, spec.FailFast, spec.OutRoot)
	}
	if spec.Repeats != 3 || spec.Seed != 7 || len(spec.Ratios) != 1 {
		t.Errorf("resumed spec plans %d repeats, seed %d, ratios %v: want the manifest's", spec.Repeats, spec.Seed, spec.Ratios)
	}
}

// The --keep line names a container by its name and short id, and a
// volume (whose id is its name) by its name alone: it said "(id
// headroom-202)", its name's first 12 characters (the twenty-third
// attacker's 8).
func TestKeptListNamesAVolumeOnce(t *testing.T) {
	got := keptList([]runner.OwnedResource{
		{Kind: "container", Name: "headroom-x-t0001", ID: "0123456789abcdef"},
		{Kind: "volume", Name: "headroom-20261207-013046-f982-t0001-logs1", ID: "headroom-20261207-013046-f982-t0001-logs1"},
	})
	want := "container headroom-x-t0001 (id 0123456789ab), volume headroom-20261207-013046-f982-t0001-logs1"
	if got != want {
		t.Errorf("keptList:\n%s\nwant\n%s", got, want)
	}
}

// An imported experiment and a replay's are refused by a resume in words
// of their own: they were refused as "tasks: not a task directory" and
// "task coin__A no longer has agent replay" (the twenty-fifth attacker's).
func TestResumableSaysWhatCannotResume(t *testing.T) {
	imported := store.Manifest{ID: "imp", Imported: []store.ImportSource{{Harness: "harbor", Dir: "/jobs/x"}}}
	if err := resumable(imported); err == nil || !strings.Contains(err.Error(), "was imported from harbor (/jobs/x)") {
		t.Errorf("imported: %v", err)
	}
	replayed := store.Manifest{ID: "rep", Tasks: []store.TaskEntry{{Name: "coin__A", Agents: []string{replay.AgentName}}}}
	if err := resumable(replayed); err == nil || !strings.Contains(err.Error(), "a replay's experiment cannot be resumed") {
		t.Errorf("replay: %v", err)
	}
	if err := resumable(store.Manifest{ID: "run", Tasks: []store.TaskEntry{{Name: "t", Agents: []string{"oracle"}}}}); err != nil {
		t.Errorf("a run's experiment: %v", err)
	}
}

// A task whose one deviation is a suspected typo is not said to run
// differently from its harness, which ignores the key too: the typo is
// warned of on its own (a new user read the two as contradicting).
func TestATypoAloneIsNoDeviationNote(t *testing.T) {
	var b bytes.Buffer
	noteDeviations(&b, []model.Task{{Name: "x/typo", Deviations: []model.Deviation{{What: model.SuspectedTypo}}}})
	if b.Len() != 0 {
		t.Errorf("a typo alone: %q", b.String())
	}
	noteDeviations(&b, []model.Task{{Name: "x/dev", Deviations: []model.Deviation{{What: model.SuspectedTypo}, {What: "network"}}}})
	if !strings.Contains(b.String(), "1 task will run differently from their own harness (x/dev)") {
		t.Errorf("a deviation: %q", b.String())
	}
}
