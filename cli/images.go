package cli

import (
	"fmt"

	"github.com/headroom-eval/headroom/session"
	"github.com/spf13/cobra"
)

func newImagesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "images", Short: "Build the images headroom's tasks need"}
	var force bool
	build := &cobra.Command{
		Use: "build", Short: "Build the built-in workload image (FROM scratch + this static binary)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			eng, err := session.Connect(cmd.Context())
			if err != nil {
				return err
			}
			defer eng.Close()
			tag, err := eng.WorkloadImage(cmd.Context(), force, func(l string) { fmt.Fprintln(cmd.ErrOrStderr(), "  "+l) })
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tag)
			return nil
		},
	}
	build.Flags().BoolVar(&force, "force", false, "rebuild even if the image exists")
	cmd.AddCommand(build)
	return cmd
}
