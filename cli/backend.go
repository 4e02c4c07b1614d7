package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/session"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// registerBackendFlags adds --backend and every registered backend's own
// settings (--kubeconfig, --namespace...) to the commands that connect.
func registerBackendFlags(fs *pflag.FlagSet) {
	registerBackendChoice(fs)
	for _, d := range runner.Backends() {
		for _, o := range d.Options {
			if fs.Lookup(o.Name) == nil {
				fs.String(o.Name, "", o.Usage+" ("+d.Name+" backend; default "+defaultText(o.Default)+")")
			}
		}
	}
}

// registerBackendChoice adds --backend alone.
func registerBackendChoice(fs *pflag.FlagSet) {
	def := os.Getenv("HEADROOM_BACKEND")
	if def == "" {
		def = "docker"
	}
	fs.String("backend", def, "where trials run: "+strings.Join(runner.BackendNames(), " or ")+" (env HEADROOM_BACKEND)")
}

func defaultText(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// backendName is the backend --backend names.
func backendName(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("backend"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return "docker"
}

// backendDef is the definition of the backend --backend names (its name
// alone when none is registered by it: connect then says so).
func backendDef(cmd *cobra.Command) runner.BackendDef {
	name := backendName(cmd)
	if d, ok := runner.Lookup(name); ok {
		return d
	}
	return runner.BackendDef{Name: name, Noun: name}
}

// connect opens the backend the flags name, with its settings.
func connect(ctx context.Context, cmd *cobra.Command) (*session.Engine, error) {
	settings := map[string]string{}
	for _, d := range runner.Backends() {
		for _, o := range d.Options {
			if f := cmd.Flags().Lookup(o.Name); f != nil {
				settings[o.Name] = f.Value.String()
			}
		}
	}
	name := backendName(cmd)
	if _, ok := runner.Lookup(name); !ok {
		return nil, usagef("--backend %s: no such backend; use one of %s", name, strings.Join(runner.BackendNames(), ", "))
	}
	defer runner.TimePhase("", "connect")()
	eng, err := session.Connect(ctx, name, settings)
	var se runner.SettingError
	if errors.As(err, &se) {
		return nil, usageError{err}
	}
	return eng, err
}

// connectAndReap connects to the platform and removes what a crashed
// headroom left behind, saying so on stderr with the evidence that its
// headroom was gone. It returns the removals, which the caller logs in
// the experiment it then makes (logReaped).
func connectAndReap(ctx context.Context, cmd *cobra.Command, stderr io.Writer) (*session.Engine, []runner.OwnedResource, error) {
	eng, err := connect(ctx, cmd)
	if err != nil {
		return nil, nil, err
	}
	out, _ := cmd.Flags().GetString("out")
	return eng, reapLeftovers(ctx, eng, stderr, out), nil
}

// pendingConnect is a connection made while the caller does other work
// (run loads its tasks meanwhile: the engine's /info and the task
// directory's reading were two of a command's fixed costs in a row).
type pendingConnect struct {
	done  chan struct{}
	eng   *session.Engine
	err   error
	taken bool
}

func connectAsync(ctx context.Context, cmd *cobra.Command) *pendingConnect {
	p := &pendingConnect{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.eng, p.err = connect(ctx, cmd)
	}()
	return p
}

// wait is the connection; the caller closes it.
func (p *pendingConnect) wait() (*session.Engine, error) {
	<-p.done
	p.taken = true
	return p.eng, p.err
}

// discard closes a connection nobody took (the command failed first).
func (p *pendingConnect) discard() {
	if p.taken {
		return
	}
	<-p.done
	if p.eng != nil {
		p.eng.Close()
	}
}

// reapLeftovers removes what a crashed headroom left behind for the
// experiments under out (connectAndReap).
func reapLeftovers(ctx context.Context, eng *session.Engine, stderr io.Writer, out string) []runner.OwnedResource {
	reaped := runner.TimePhase("", "reap")
	left, err := eng.ReapLeftovers(ctx, out)
	reaped()
	for _, l := range left {
		fmt.Fprintln(stderr, session.ReapLine(l))
	}
	// A crash during a separate verifier leaves the agent's artifacts
	// in the temporary directory.
	for _, l := range runner.ReapArtifacts() {
		fmt.Fprintln(stderr, l)
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	return left
}

// logReaped keeps the removals a run's start made, with their evidence,
// in the experiment it made (session.ReapLog): the run that removed a
// container is the one that has to answer for it.
func logReaped(stderr io.Writer, dir string, reaped []runner.OwnedResource) {
	if err := session.AppendReapLog(dir, reaped); err != nil {
		fmt.Fprintf(stderr, "warning: the reaper's log: %v\n", err)
	}
}
