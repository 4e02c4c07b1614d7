package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/headroom-eval/headroom/printable"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/session"
	"github.com/headroom-eval/headroom/store"
	"github.com/spf13/cobra"
)

func newCleanCmd() *cobra.Command {
	var dry bool
	var out string
	cmd := &cobra.Command{
		Use: "clean", Short: "Remove the containers or pods, networks and volumes labelled headroom that a crash left (a running headroom's are left alone)", Args: cobra.NoArgs,
		Long: `clean removes what headroom left on the platform: the sandboxes of
trials whose headroom is gone (a crash) and those kept by --keep once
the run that kept them has ended. A running headroom's are left alone,
kept or not. Each removal is logged in its
experiment's reaper.log when that experiment is under --out.

With --out given, only the sandboxes of experiments under that directory
are removed (another experiments root's leftovers are listed and left):
what a run made carries the experiments root it was made for, so a copy
of another root's experiment directory under --out does not make that
root's containers this one's; without it, every headroom leftover on the
platform.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			only := cmd.Flags().Changed("out")
			if only {
				// A root not made yet is still a root: a run killed while
				// it built its first image leaves that build's network,
				// labelled with --out, before any experiment directory
				// (the twenty-fourth attacker's). Its experiments are none.
				if st, err := os.Stat(out); err != nil && !errors.Is(err, fs.ErrNotExist) || err == nil && !st.IsDir() {
					return usagef("--out %s is not a directory of experiments (run and the console write them there)", out)
				}
			}
			mine := session.InRoot(out)
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			eng, err := connect(ctx, cmd)
			if err != nil {
				return err
			}
			defer eng.Close()
			w := cmd.OutOrStdout()
			// Another headroom's live trial (a second sweep on this
			// platform) is not a leftover: removing it would kill that
			// sweep's trial. Kept ones are removed once their headroom has
			// ended: that is what clean is for.
			spared, elsewhere := 0, 0
			removed, err := eng.Clean(ctx, func(o runner.OwnedResource) bool {
				// Kept or not, what headroom did not make is not clean's
				// to remove: a container labelled headroom and
				// headroom.kept by hand is someone's.
				if why := runner.NotProvenOwn(o); why != "" {
					fmt.Fprintf(w, "left %s %s: %s\n", o.Kind, o.Name, why)
					spared++
					return false
				}
				if only && !mine(o) {
					if o.Kind != "network" && o.Kind != "volume" {
						if o.Root != "" && mine(runner.OwnedResource{Experiment: o.Experiment}) {
							// Its experiment's directory is under --out
							// too: a copy of another root's.
							fmt.Fprintf(w, "left %s (%s): it was made for experiments root %s, not --out %s\n", o.Name, whose(o), o.Root, out)
						} else {
							fmt.Fprintf(w, "left %s (%s): its experiment %s is not under --out %s\n", o.Name, whose(o), o.Experiment, out)
						}
						elsewhere++
					}
					return false
				}
				// Kept or not: --keep labels a trial's container kept at
				// its create, so a live run's kept container is its
				// running trial (clean removed one, and the run recorded
				// killed-outside). Its run's end makes it clean's.
				if o.OwnerAlive {
					if o.Kind != "network" && o.Kind != "volume" {
						kept := ""
						if o.Kept {
							kept = " (kept by --keep: clean removes it once that headroom has ended)"
						}
						fmt.Fprintf(w, "left %s (%s): its headroom %s is still running%s\n", o.Name, whose(o), o.Owner, kept)
						spared++
					}
					return false
				}
				return true
			}, dry)
			for _, o := range removed {
				kept := ""
				if o.Kept {
					kept = ", kept by --keep"
				}
				switch {
				case dry && o.State != "":
					fmt.Fprintf(w, "would remove %s %s (%s, %s%s)\n", o.Kind, o.Name, whose(o), o.State, kept)
				case dry:
					fmt.Fprintf(w, "would remove %s %s (%s%s)\n", o.Kind, o.Name, whose(o), kept)
				default:
					fmt.Fprintf(w, "removed %s %s\n", o.Kind, o.Name)
				}
			}
			if !dry {
				// Each experiment's removals in its own log, as a run's
				// reaper keeps them.
				by := map[string][]runner.OwnedResource{}
				for _, o := range removed {
					if mine(o) {
						by[o.Experiment] = append(by[o.Experiment], o)
					}
				}
				for exp, list := range by {
					logReaped(cmd.ErrOrStderr(), filepath.Join(out, exp), list)
				}
			}
			if err != nil {
				return err
			}
			if len(removed) == 0 {
				if spared == 0 && elsewhere == 0 {
					fmt.Fprintln(w, "nothing labelled headroom")
				} else {
					fmt.Fprintln(w, "nothing left by a crash")
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what would be removed")
	cmd.Flags().StringVar(&out, "out", store.DefaultRoot(), "directory that holds experiment directories: given, only its experiments' leftovers are removed; each removal is logged in its experiment")
	return cmd
}

// whose says what a leftover belongs to: its trial, or its experiment
// for what a run makes once for all its trials (a Kubernetes
// experiment's NetworkPolicy).
func whose(o runner.OwnedResource) string {
	if o.Build != "" && o.Trial == "" {
		return "the build of " + printable.Text(o.Build)
	}
	if o.Trial == "" && o.Experiment != "" {
		return "experiment " + o.Experiment
	}
	return "trial " + o.Trial
}
