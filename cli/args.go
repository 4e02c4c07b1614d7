package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// argsFor checks a command's arguments as cobra's ExactArgs / RangeArgs /
// MinimumNArgs would (max < 0: no most), but says in headroom's words what
// is missing or extra and what the command wants, instead of cobra's
// "accepts 1 arg(s), received 0". need names what the arguments are, as a
// person would ask for them: "an experiment (its id or directory; ...)".
func argsFor(min, max int, need string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		switch {
		case len(args) < min:
			return usagef("%s needs %s; usage: %s", name, need, cmd.UseLine())
		case max >= 0 && len(args) > max:
			return usagef("%s takes %s, not %d arguments (%s); usage: %s", name, need, len(args), strings.Join(args, " "), cmd.UseLine())
		}
		return nil
	}
}

// experimentArg is what a command taking an experiment asks for.
const experimentArg = "an experiment: its id or its directory (`headroom report --list` lists them)"
