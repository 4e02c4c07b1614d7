package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/session"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use: "doctor", Short: "Check the platform (engine or cluster), cgroups, host capacity and the workload image, and say how to fix what is wrong", Args: cobra.NoArgs,
		Long: `doctor checks the platform --backend names (the Docker Engine by default,
or a Kubernetes cluster), its cgroups, capacity and the workload image, and
starts one tiny container (or pod) to prove that limits apply and memory can
be read. It changes nothing: it builds no image (it says what a run would
build) and removes what it started.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			bad := 0
			warned := 0
			line := func(ok, note bool, what, detail, fix string) {
				mark := "ok  "
				switch {
				case note:
					mark = "note"
				case !ok:
					mark = "FAIL"
					bad++
				}
				fmt.Fprintf(w, "%s %-22s %s\n", mark, what, detail)
				if !ok && fix != "" {
					fmt.Fprintf(w, "     fix: %s\n", fix)
				}
			}
			// A warning: nothing is broken, but results taken now may
			// differ from the harness's; its fix, if any, under it.
			warnLine := func(warn bool, what, detail, fix string) {
				mark := "ok  "
				if warn {
					mark = "warn"
					warned++
				}
				fmt.Fprintf(w, "%s %-22s %s\n", mark, what, detail)
				if warn && fix != "" {
					fmt.Fprintf(w, "     fix: %s\n", fix)
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			eng, err := connect(ctx, cmd)
			if errors.As(err, new(usageError)) {
				return err
			}
			if err != nil {
				line(false, false, backendName(cmd), err.Error(), backendDef(cmd).ConnectFix)
				return exitError{ExitFailure}
			}
			defer eng.Close()
			switch from := eng.Info.Details["capacity"]; {
			case eng.AdmitsItself && eng.Host.Hostname == "" && eng.Host.MemoryBytes == 0:
				// A user who may not read nodes, in a namespace nothing bounds.
				line(true, true, "capacity", from, "")
			case eng.AdmitsItself && eng.Host.Hostname == "":
				line(eng.Host.MemoryBytes > 2<<30, false, "capacity", fmt.Sprintf("one pod at most %s memory, %s, from %s", model.FormatBytes(eng.Host.MemoryBytes), cpusOrNone(eng.Host.CPUs), from),
					"trials need memory for their guarantees; ask for a larger quota")
			default:
				line(eng.Host.MemoryBytes > 2<<30, false, "host", fmt.Sprintf("%d CPUs, %s memory (%s available)", eng.Host.CPUs,
					model.FormatBytes(eng.Host.MemoryBytes), model.FormatBytes(eng.Host.AvailableBytesAtStart)), "trials need memory for their guarantees; use a host with more than 2GiB")
			}
			if !backendDef(cmd).Places {
				// This machine's load; the engine's host when local.
				if l, err := load.Avg(); err == nil {
					loaded, detail := model.LoadedHost(l.Load1, l.Load5, eng.Host.CPUs)
					warnLine(loaded, "host load", detail, "wait for the load to fall (or stop what loads it) before a sweep whose numbers matter; the report marks the trials that ran contended")
				}
				if s, err := mem.SwapMemory(); err == nil {
					swaps, detail := model.HostSwap(int64(s.Total))
					warnLine(swaps, "host swap", detail, "")
				}
			}
			self, _ := session.WorkloadBinary(false, nil)
			for _, c := range eng.Platform.Doctor(ctx, self) {
				if c.Warn && c.OK {
					warnLine(true, c.Name, c.Info, "")
					continue
				}
				line(c.OK, c.Note, c.Name, c.Info, c.Fix)
			}
			// Another headroom's running sweep is not a leftover.
			// Nor is what only carries its label: `headroom clean` leaves
			// that alone, so its fix would not clear the line (a
			// container of someone else's, labelled headroom, failed it).
			all, _ := eng.Owned(ctx)
			left, live, unproven := 0, 0, 0
			for _, o := range all {
				switch {
				case o.Kind == "network" || o.Kind == "volume":
				case runner.NotProvenOwn(o) != "":
					unproven++
				case o.Owner != "" && o.OwnerAlive:
					live++
				default:
					left++
				}
			}
			detail := fmt.Sprintf("%s on the %s", model.Quantity(left, "headroom sandbox"), platformNoun(eng.Info.Name()))
			if live > 0 {
				detail += fmt.Sprintf(" (and %d of a headroom still running)", live)
			}
			if unproven > 0 {
				detail += fmt.Sprintf(" (and %d labelled headroom but not proven headroom's: not headroom's to remove, left alone)", unproven)
			}
			line(left == 0, false, "leftovers", detail, "run `headroom clean`")
			if bad > 0 {
				return exitError{ExitFailure}
			}
			if warned > 0 {
				fmt.Fprintf(w, "\nall checks passed, %d warning(s): each warn line says how results taken here may differ from the harness's on a quiet host\n", warned)
				return nil
			}
			fmt.Fprintln(w, "\nall checks passed")
			return nil
		},
	}
}

// cpusOrNone is a CPU bound for people ("no CPU bound" for none).
func cpusOrNone(n int) string {
	if n == 0 {
		return "no CPU bound"
	}
	return fmt.Sprintf("%d CPUs", n)
}

// platformNoun names a backend's platform in a sentence: "Docker engine",
// "kubernetes cluster" (BackendDef.Noun).
func platformNoun(backend string) string {
	if d, ok := runner.Lookup(backend); ok && d.Noun != "" {
		return d.Noun
	}
	return backend
}
