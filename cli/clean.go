package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/session"
	"github.com/spf13/cobra"
)

func headroomFilter() filters.Args {
	return filters.NewArgs(filters.Arg("label", runner.LabelHeadroom))
}

func newCleanCmd() *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use: "clean", Short: "Remove the containers, networks and volumes labelled headroom that a crash left (a running headroom's are left alone)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			eng, err := session.Connect(ctx)
			if err != nil {
				return err
			}
			defer eng.Close()
			list, err := eng.Cli.ContainerList(ctx, container.ListOptions{All: true, Filters: headroomFilter()})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			spared := 0
			for _, c := range list {
				name := c.ID[:12]
				if len(c.Names) > 0 {
					name = c.Names[0][1:]
				}
				// Another headroom's live trial (a second sweep on this
				// engine) is not a leftover: removing it would kill that
				// sweep's trial. Kept containers are removed: that is what
				// clean is for.
				if c.Labels[runner.LabelKept] == "" && session.OwnerAlive(c.Labels) {
					fmt.Fprintf(w, "left %s (trial %s): its headroom %s is still running\n", name, c.Labels[runner.LabelTrial], c.Labels[runner.LabelOwner])
					spared++
					continue
				}
				kept := ""
				if c.Labels[runner.LabelKept] != "" {
					kept = ", kept by --keep"
				}
				if dry {
					fmt.Fprintf(w, "would remove %s (trial %s, %s%s)\n", name, c.Labels[runner.LabelTrial], c.State, kept)
					continue
				}
				if err := eng.Cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !docker.IsGone(err) {
					return fmt.Errorf("remove %s: %w", name, err)
				}
				fmt.Fprintf(w, "removed %s\n", name)
			}
			res, err := docker.RemoveTrialResources(ctx, eng.Cli, func(l map[string]string) bool {
				return l[runner.LabelKept] == "" && session.OwnerAlive(l)
			}, dry)
			for _, r := range res {
				if dry {
					fmt.Fprintf(w, "would remove %s %s (trial %s)\n", r.Kind, r.Name, r.Labels[runner.LabelTrial])
				} else {
					fmt.Fprintf(w, "removed %s %s\n", r.Kind, r.Name)
				}
			}
			if err != nil {
				return err
			}
			if len(list) == spared && len(res) == 0 {
				if spared == 0 {
					fmt.Fprintln(w, "no headroom containers")
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
