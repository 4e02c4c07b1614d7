// Package cli is headroom's command line: cobra commands that wire task
// files, the runner, the store and the reporters together.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agext/levenshtein"
	"github.com/headroom-eval/headroom/printable"
	"github.com/headroom-eval/headroom/runner"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Version is set at build time (-ldflags "-X ...cli.Version=...").
var Version = "dev"

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitTasksNotRun: the sweep ran, but some tasks could not (their
	// image did not build, they lack the agent); the report lists them.
	ExitTasksNotRun = 3
	ExitInterrupted = 130
)

// usageError marks a mistake in what the user asked for (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitError carries a specific exit code with an already-printed message.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// NewRoot builds the command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	// A library's log lines are not headroom's words: compose-go's "The
	// "X" variable is not set" reached stderr beside the audit's own line
	// about X, and said not set where the user's shell set it (the
	// harness's environment is what it means); under the console any such
	// line would break the screen.
	logrus.SetOutput(io.Discard)
	root := &cobra.Command{
		Use:   "headroom",
		Short: "Measure how container resources change agentic benchmark scores",
		Long: `headroom runs benchmark tasks in real Docker containers under resource
ratios (guarantee = the task's spec, hard kill limit = 1x, 1.5x, 2x, 3x, 5x
the spec, or uncapped), watches memory and OOM kills live, and reports an
outcome matrix of tasks × ratios.

Without a command it opens the console on the built-in tasks (and those
of --tasks-dir).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	// What a task names or prints reaches these lines (task names, step
	// output, reasons, paths): nothing in it may act on the terminal.
	root.SetOut(printable.Writer(stdout))
	root.SetErr(printable.Writer(stderr))
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{withFlagSuggestion(cmd, err)} })
	cf := &consoleFlags{}
	cf.register(root)
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runConsole(cmd, cf, nil) }
	root.AddCommand(newRunCmd(), newDemoCmd(), newReportCmd(), newCalibrateCmd(), newCompareCmd(), newTasksCmd(), newDoctorCmd(), newCleanCmd(), newImagesCmd(), newAgentsCmd(), newImportCmd(), newReplayCmd())
	// The backend's flags (--backend, --kubeconfig, --pod-probe ...) are
	// the commands' that open one; report or calibrate only read files.
	// tasks show prints a backend's own words for the policies: --backend
	// alone.
	registerBackendFlags(root.Flags())
	for _, path := range BackendCommands {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c == root {
			panic("cli: no command " + path) // a renamed command: keep the list in step
		}
		registerBackendFlags(c.Flags())
	}
	if c, _, err := root.Find([]string{"tasks", "show"}); err == nil {
		registerBackendChoice(c.Flags())
	}
	return root
}

// BackendCommands are the commands, besides the console itself, that
// open a backend and so take its flags.
var BackendCommands = []string{"run", "demo", "doctor", "clean", "images build"}

// Execute runs headroom with os.Args and returns the exit code.
func Execute() int {
	runner.TimePhase("", "main")() // when main began, since the process's packages were initialised
	// `headroom run | grep` then Ctrl-C: grep is gone before the report
	// is written. Unhandled, SIGPIPE would end headroom there (exit 141)
	// mid-shutdown; handled, the write fails with EPIPE and the sweep
	// ends as an interrupted one does (finishSweep). Notify, not Ignore:
	// an ignored signal would stay ignored in the programs headroom starts.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	root := NewRoot(os.Stdout, os.Stderr)
	code := exitCode(root.Execute(), root.ErrOrStderr())
	for _, w := range []io.Writer{root.OutOrStdout(), root.ErrOrStderr()} {
		if f, ok := w.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
	}
	return code
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "headroom: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return ExitUsage
	}
	return ExitFailure
}

// isCobraUsage recognises cobra's own argument errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// withFlagSuggestion adds the flag most likely meant to cobra's "unknown
// flag: --ratio" (cobra suggests commands, not flags): "did you mean
// --ratios?". A name within two edits of a flag of the command, or one a
// flag's name starts with, is a suggestion; else err as it was.
func withFlagSuggestion(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || name == "" {
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := levenshtein.Distance(name, f.Name, nil)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" || len(name) < 3 {
		return err
	}
	return fmt.Errorf("%w; did you mean --%s? (`%s --help` lists the flags)", err, best, cmd.CommandPath())
}
