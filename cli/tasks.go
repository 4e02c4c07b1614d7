package cli

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/shirou/gopsutil/v4/mem"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/spf13/cobra"
)

func newTasksCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{Use: "tasks", Short: "List, show and validate tasks (built-in and --tasks-dir)"}
	cmd.PersistentFlags().StringVar(&dir, "tasks-dir", "", "also load task files (*.toml) from this directory")

	list := &cobra.Command{
		Use: "list", Short: "List tasks with their spec and agents", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := loadCatalog(dir, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TASK\tCPUS\tMEMORY\tAGENTS\tSOURCE")
			for _, l := range cat.Tasks {
				t := l.Task
				fmt.Fprintf(tw, "%s\t%g\t%s\t%s\t%s\n", t.Name, t.Resources.CPUs, model.FormatBytes(t.Resources.MemoryBytes), strings.Join(t.AgentNames(), ","), t.Source)
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use: "show TASK", Short: "Show a task: spec, agents, steps, verifier, and the policy of each ratio", Args: argsFor(1, 1, "a task's name (`headroom tasks list` lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := loadCatalog(dir, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			t, err := cat.Find(args[0])
			if err != nil {
				return usageError{err}
			}
			showTask(cmd, t)
			return nil
		},
	}
	validate := &cobra.Command{
		Use: "validate FILE|DIR...", Short: "Check task files and say what is wrong, by file and line", Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// --tasks-dir, which `tasks --help` lists, is one more
			// directory to check.
			if args = withTasksDir(args, dir); len(args) == 0 {
				return usagef("tasks validate needs one or more task files or directories (or --tasks-dir); usage: headroom tasks validate FILE|DIR... [flags]")
			}
			bad, typoed := 0, 0
			for _, a := range args {
				st, err := os.Stat(a)
				if errors.Is(err, fs.ErrNotExist) {
					return usagef("%s does not exist: give validate a task file (headroom *.toml, a task directory's task.toml or task.yaml) or a directory of them", a)
				}
				if err != nil {
					return usageError{err}
				}
				var loaded []taskfile.Loaded
				var problems []error
				// A run's catalog holds the built-in tasks first, whose
				// names a file may not take: validate said ok to a task
				// named builtin/swe-edit that run refused (the
				// twenty-eighth attacker's 6).
				c, err := taskfile.Builtin()
				if err != nil {
					return err
				}
				if st.IsDir() {
					if err := c.AddDir(a); err != nil {
						return usageError{err}
					}
					for _, l := range c.Tasks {
						if !taskfile.IsBuiltin(l.Task) {
							loaded = append(loaded, l)
						}
					}
					problems = c.Problems
				} else {
					l, err := taskfile.LoadFile(a)
					if err == nil {
						err = l.Refusal()
					}
					for _, b := range c.Tasks {
						if err == nil && b.Task.Name == l.Task.Name {
							err = fmt.Errorf("%s: task %s is already defined in %s; rename one", l.Task.Source, l.Task.Name, b.Task.Source)
						}
					}
					if err != nil {
						problems = append(problems, err)
					} else {
						loaded = append(loaded, l)
					}
				}
				for _, l := range loaded {
					verdict := "ok   "
					if len(l.Typos) > 0 {
						// Loaded, as its own harness loads it; but the key
						// was most likely meant, and its default (2 GiB for
						// a misspelt memory_mb) would be what every ratio
						// scales: not a pass, and not "ok" beside exit 1
						// (a new user's).
						verdict = "typo "
						typoed++
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s)\n", verdict, l.Task.Name, l.Task.Source)
					for _, k := range l.Ignored {
						fmt.Fprintf(cmd.OutOrStdout(), "      ignored key %s\n", k)
					}
					for _, ty := range append(l.TyposAt(), l.Warnings...) {
						fmt.Fprintf(cmd.OutOrStdout(), "      warning: %s\n", ty)
					}
					if len(l.Task.DefaultAgentNames()) == 0 {
						// run refuses it without --agents: said here, where
						// "ok" alone read as runnable (the new user of
						// 2026-12-06, a Harbor task without solution/solve.sh).
						fmt.Fprintf(cmd.OutOrStdout(), "      note: no agent solves it (no solution/solve.sh, no agent of its own): run it with --agents NAME (an installed agent from `headroom agents`), or --agents %s to check that its verifier fails the untouched environment\n", strings.Join(l.Task.AgentNames(), ","))
					}
					for _, c := range l.Task.HostCapabilityGrants() {
						fmt.Fprintf(cmd.OutOrStdout(), "      warning: %s: capability %s reaches past the container; a run refuses the task unless given --allow-capability %s\n",
							cmp.Or(l.Task.CapabilitiesAt[c], l.Task.Source), c, c)
					}
					// A spec this host cannot guarantee passed as ok, and
					// run then refused it (a fourth new user's, memory =
					// "100T"): said here, as a note, since another host
					// (a cluster) may run it.
					if vm, err := mem.VirtualMemory(); err == nil && l.Task.Resources.MemoryBytes > int64(vm.Total) {
						fmt.Fprintf(cmd.OutOrStdout(), "      note: its memory spec, %s, is more than this machine's %s: run refuses it where the engine has no more (a host or cluster with room may run it)\n",
							model.FormatBytes(l.Task.Resources.MemoryBytes), model.FormatBytes(int64(vm.Total)))
					}
				}
				for _, p := range problems {
					bad++
					fmt.Fprintf(cmd.OutOrStdout(), "error %v\n", p)
				}
			}
			if bad > 0 {
				verb := "have"
				if bad == 1 {
					verb = "has"
				}
				return usagef("%s %s errors", model.Quantity(bad, "task file"), verb)
			}
			if typoed > 0 {
				// Exit 1, as `tasks audit` exits when a task runs otherwise
				// than written: the file is not wrong in its harness's eyes.
				return fmt.Errorf("a likely typo in %s (see the warnings above): its harness ignores the key too, so a run loads the task with that setting's default, not your value; fix the key", model.Quantity(typoed, "task file"))
			}
			return nil
		},
	}
	cmd.AddCommand(list, show, validate, newAuditCmd(&dir))
	return cmd
}

// withTasksDir is args with the tasks' --tasks-dir after them, when given.
func withTasksDir(args []string, dir string) []string {
	if dir != "" {
		args = append(args, dir)
	}
	return args
}

// showPhases lists a multi-step task's steps: what each runs before its
// agent, its time limits, verifier and gate, and how the trial's reward
// comes from theirs.
func showPhases(w io.Writer, t model.Task) {
	fmt.Fprintf(w, "  steps    %d, in one container; the trial's reward is the %s of the steps' rewards\n", len(t.Phases), t.PhaseReward)
	for i, p := range t.Phases {
		fmt.Fprintf(w, "    %d %s  agent %s, verifier %s", i+1, p.Name, p.AgentTimeout, p.VerifierTimeout)
		if len(p.MinReward) > 0 {
			var gates []string
			for k, v := range p.MinReward {
				gates = append(gates, fmt.Sprintf("%s >= %g", k, v))
			}
			sort.Strings(gates)
			fmt.Fprintf(w, "; later steps only if %s", strings.Join(gates, ", "))
		}
		fmt.Fprintln(w)
		for _, s := range p.Setup {
			fmt.Fprintf(w, "      setup     %s\n", s.Show)
		}
		if hc := p.Healthcheck; hc != nil {
			fmt.Fprintf(w, "      ready     when %s exits 0 (every %s, %d tries)\n", hc.Test[len(hc.Test)-1], hc.Interval, hc.Retries)
		}
		if line, _, _ := strings.Cut(strings.TrimSpace(p.Instruction), "\n"); line != "" {
			fmt.Fprintf(w, "      asks      %s\n", line)
		}
		fmt.Fprintf(w, "      verifier  %s\n", p.Verifier.Show)
	}
}

func showTask(cmd *cobra.Command, t model.Task) {
	w := cmd.OutOrStdout()
	image := t.Image
	if t.Build != nil {
		from := filepath.Join(t.Build.Context, t.Build.Dockerfile)
		if image == "" {
			image = "built from " + from
		} else {
			image += " (built from " + from + " if not on the engine)"
		}
		image += fmt.Sprintf(", build limit %s", t.Build.Timeout)
	}
	format := t.Format
	if format == "" {
		format = model.FormatHeadroom
	}
	fmt.Fprintf(w, "%s\n  %s\n  source   %s (%s)\n  image    %s\n  network  %s\n", t.Name, t.Description, t.Source, format, image, networkLine(t))
	fmt.Fprintf(w, "  profile  %s\n", containerProfile(t))
	if t.WorkDir != "" || t.User != "" || t.AgentUser != "" || t.Verifier.User != "" {
		fmt.Fprintf(w, "  runs in  %s as %s (agent %s, verifier %s)\n", orWord(t.WorkDir, "the image's WORKDIR"), orWord(t.User, "the image's user"),
			orWord(t.AgentUser, "the same"), orWord(t.Verifier.User, "the same"))
	}
	if hc := t.Healthcheck; hc != nil {
		test := hc.Test
		if len(test) > 1 && (test[0] == "CMD" || test[0] == "CMD-SHELL") {
			test = test[1:]
		}
		fmt.Fprintf(w, "  ready    when %s exits 0 (every %s, %d tries)\n", strings.Join(test, " "), hc.Interval, hc.Retries)
	}
	if t.StorageBytes > 0 {
		fmt.Fprintf(w, "  storage  %s, not bounded, as under Harbor's Docker environment (run --apply-storage bounds it where the engine can size a container; `headroom doctor` says whether this one can); each trial's record says what it wrote and when that was more\n", model.FormatBytes(t.StorageBytes))
	}
	if t.GPUs > 0 {
		fmt.Fprintf(w, "  gpus     %d, asked of the engine\n", t.GPUs)
	}
	pids := "none"
	if t.Resources.PidsLimit > 0 {
		pids = fmt.Sprint(t.Resources.PidsLimit)
	}
	fmt.Fprintf(w, "  spec     %g CPU, %s, pids %s", t.Resources.CPUs, model.FormatBytes(t.Resources.MemoryBytes), pids)
	if len(t.Resources.Defaulted) > 0 {
		fmt.Fprintf(w, "  (defaulted: %s)", strings.Join(t.Resources.Defaulted, ", "))
	}
	fmt.Fprintln(w)
	if note := t.HarnessNote(); note != "" {
		fmt.Fprintf(w, "  harness  %s\n", note)
	}
	if sv := t.SeparateVerifier; sv != nil {
		fmt.Fprintf(w, "  verifier container  its own: %g CPU, %s, network %s (its spec as guarantee and limit; the ratio does not apply to it)\n",
			sv.Resources.CPUs, model.FormatBytes(sv.Resources.MemoryBytes), sv.Network)
	}
	for _, c := range t.Collect {
		fmt.Fprintf(w, "  collect  %s\n", c.Show)
	}
	if len(t.Phases) == 0 {
		fmt.Fprintf(w, "  timeouts agent %s, verifier %s\n", t.AgentTimeout, t.VerifierTimeout)
	}
	for _, a := range t.Agents {
		fmt.Fprintf(w, "  agent %s  %s\n", a.Name, a.Description)
		for _, s := range a.Steps {
			fmt.Fprintf(w, "    %-10s %s\n", s.Name, s.Show)
		}
	}
	if len(t.Phases) > 0 {
		showPhases(w, t)
	} else {
		fmt.Fprintf(w, "  verifier   %s\n", t.Verifier.Show)
	}
	fmt.Fprintf(w, "  verdict    %s: %s\n", t.Verdict, t.Verdict.Describe())
	showSidecars(w, t)
	if t.Instruction != "" {
		line, _, _ := strings.Cut(strings.TrimSpace(t.Instruction), "\n")
		fmt.Fprintf(w, "  instruction  %s\n", line)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The backend's own words for each policy: docker run flags, or a
	// pod's requests and limits.
	args, argsName := func(model.ResourcePolicy) []string { return nil }, ""
	if d, ok := runner.Lookup(backendName(cmd)); ok && d.PolicyArgs != nil {
		args, argsName = d.PolicyArgs, d.PolicyArgsName
		if d.ContainerArgs != nil {
			// The profile's part, the same at every ratio: who the
			// container runs as and what it may do.
			fmt.Fprintf(w, "  container  %s (every ratio; the %s below add the limits)\n", strings.Join(d.ContainerArgs(t), " "), argsName)
		}
	}
	fmt.Fprintf(tw, "  RATIO\tGUARANTEE\tHARD LIMIT\tCPUS\t%s\n", strings.ToUpper(argsName))
	// The runner caps the CPU limit at the host's CPUs (Docker refuses
	// more), so the flags shown are the ones a run here would use.
	hostCPUs := runtime.NumCPU()
	capped := false
	for _, r := range model.StandardRatios {
		p := model.NewPolicy(t.Resources, r, hostCPUs)
		cpus := model.CPULimitText(p, t.Resources)
		capped = capped || p.CPULimitCapped
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r, model.FormatBytes(p.GuaranteeBytes), p.LimitString(), cpus, strings.Join(args(p), " "))
	}
	tw.Flush()
	if capped {
		// A cluster's run caps at its node's allocatable CPUs, read when
		// it connects; this host's are what is known here.
		why := backendDef(cmd).CPUCap
		fmt.Fprintf(w, "  CPU limits above this host's %d CPUs are capped at %d (%s); trials record cpu_limit_capped\n", hostCPUs, hostCPUs, why)
	}
}

// containerProfile says how the task's container is set up, and how many
// ways that differs from its own harness.
func containerProfile(t model.Task) string {
	p := orWord(t.Profile, model.ProfileHardened)
	switch n := len(t.AllDeviations()); {
	case !t.ForeignHarness():
		return p
	case n == 0:
		return p + " (as its own harness runs it)"
	default:
		return fmt.Sprintf("%s (%s from its own harness: `headroom tasks audit %s`)", p, model.Quantity(n, "deviation"), orWord(t.Dir, t.Source))
	}
}

func orWord(s, word string) string {
	if s == "" {
		return word
	}
	return s
}

// networkLine is the container's network and what each phase gets of it.
func networkLine(t model.Task) string {
	s := t.Network
	if len(t.AllowedHosts) > 0 {
		s += ", only " + strings.Join(t.AllowedHosts, ", ") + " reachable"
	}
	if p := t.AgentNetwork; p != nil {
		s += "; agent phase: " + p.String()
	}
	if p := t.VerifierNetwork; p != nil {
		s += "; verifier phase: " + p.String()
	}
	return s
}
