package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-eval/headroom/runner"
	"github.com/spf13/cobra"
)

func newCleanCmd() *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use: "clean", Short: "Remove the containers or pods, networks and volumes labelled headroom that a crash left (a running headroom's are left alone)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			// sweep's trial. Kept ones are removed: that is what clean is
			// for.
			spared := 0
			removed, err := eng.Clean(ctx, func(o runner.Owned) bool {
				if !o.Kept && o.OwnerAlive {
					if o.Kind != "network" && o.Kind != "volume" {
						fmt.Fprintf(w, "left %s (trial %s): its headroom %s is still running\n", o.Name, o.Trial, o.Owner)
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
					fmt.Fprintf(w, "would remove %s %s (trial %s, %s%s)\n", o.Kind, o.Name, o.Trial, o.State, kept)
				case dry:
					fmt.Fprintf(w, "would remove %s %s (trial %s%s)\n", o.Kind, o.Name, o.Trial, kept)
				default:
					fmt.Fprintf(w, "removed %s %s\n", o.Kind, o.Name)
				}
			}
			if err != nil {
				return err
			}
			if len(removed) == 0 {
				if spared == 0 {
					fmt.Fprintln(w, "nothing labelled headroom")
				} else {
					fmt.Fprintln(w, "nothing left by a crash")
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what would be removed")
	return cmd
}
