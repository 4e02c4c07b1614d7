package cli

import (
	"fmt"

	"github.com/headroom-eval/headroom/model"
	"github.com/spf13/cobra"
)

func newImagesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "images", Short: "Build the images headroom's tasks need"}
	var force, real bool
	build := &cobra.Command{
		Use:   "build",
		Short: "Build the built-in workload image (FROM scratch + this static binary); --real also the Debian images of the real install tasks",
		Long: `Build the images headroom's built-in tasks need, without any registry.

The workload image is FROM scratch with this static binary: seconds.

--real also makes headroom-debian:bookworm (debootstrap of Debian bookworm minbase with
python3: about 40 MB from the Debian mirror, ~1.5 min; needs root and the debootstrap
program) and headroom-debian:bookworm-ds-cache (that image with the data-science stack's
packages downloaded into apt's cache: about 130 MB more, ~30 s here), used by the
real/* tasks. HEADROOM_DEBIAN_MIRROR names another mirror.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			eng, err := connect(cmd.Context(), cmd)
			if err != nil {
				return err
			}
			defer eng.Close()
			progress := func(l string) { fmt.Fprintln(cmd.ErrOrStderr(), "  "+l) }
			tag, err := eng.WorkloadImage(cmd.Context(), force, progress)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tag)
			if real {
				for _, name := range []string{model.BuiltinDebian, model.BuiltinDebianCache} {
					tag, err := eng.Platform.PrepareImage(cmd.Context(), model.Task{Name: name, Image: name}, force, progress)
					if err != nil {
						return err
					}
					fmt.Fprintln(cmd.OutOrStdout(), tag)
				}
			}
			return nil
		},
	}
	build.Flags().BoolVar(&force, "force", false, "rebuild even if the image exists")
	build.Flags().BoolVar(&real, "real", false, "also make the Debian images of the real install tasks (debootstrap + docker import; needs root)")
	cmd.AddCommand(build)
	return cmd
}
