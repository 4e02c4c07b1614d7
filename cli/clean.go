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
		Use: "clean", Short: "Remove every container and network labelled headroom (left by a crash)", Args: cobra.NoArgs,
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
			nets, err := docker.RemoveNetworks(ctx, eng.Cli, nil, dry)
			for _, n := range nets {
				if dry {
					fmt.Fprintf(w, "would remove network %s (trial %s)\n", n.Name, n.Labels[docker.LabelTrial])
				} else {
					fmt.Fprintf(w, "removed network %s\n", n.Name)
				}
			}
			if err != nil {
				return err
			}
			if len(list) == 0 && len(nets) == 0 {
				fmt.Fprintln(w, "no headroom containers")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what would be removed")
	return cmd
}
