package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/session"
	"github.com/spf13/cobra"
)

func headroomFilter() filters.Args {
	return filters.NewArgs(filters.Arg("label", docker.LabelHeadroom))
}

func newCleanCmd() *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use: "clean", Short: "Remove every container, network and volume labelled headroom (left by a crash)", Args: cobra.NoArgs,
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
			for _, c := range list {
				name := c.ID[:12]
				if len(c.Names) > 0 {
					name = c.Names[0][1:]
				}
				kept := ""
				if c.Labels[docker.LabelKept] != "" {
					kept = ", kept by --keep"
				}
				if dry {
					fmt.Fprintf(w, "would remove %s (trial %s, %s%s)\n", name, c.Labels[docker.LabelTrial], c.State, kept)
					continue
				}
				if err := eng.Cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !docker.IsGone(err) {
					return fmt.Errorf("remove %s: %w", name, err)
				}
				fmt.Fprintf(w, "removed %s\n", name)
			}
			res, err := docker.RemoveTrialResources(ctx, eng.Cli, nil, dry)
			for _, r := range res {
				if dry {
					fmt.Fprintf(w, "would remove %s %s (trial %s)\n", r.Kind, r.Name, r.Labels[docker.LabelTrial])
				} else {
					fmt.Fprintf(w, "removed %s %s\n", r.Kind, r.Name)
				}
			}
			if err != nil {
				return err
			}
			if len(list) == 0 && len(res) == 0 {
				fmt.Fprintln(w, "no headroom containers")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what would be removed")
	return cmd
}
