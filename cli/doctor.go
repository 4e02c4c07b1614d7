package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/session"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/headroom-eval/headroom/workload"
	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use: "doctor", Short: "Check the engine, cgroups, host capacity and the workload image, and say how to fix what is wrong", Args: cobra.NoArgs,
		Long: `doctor checks the engine, cgroups, host capacity and the workload image,
and starts one tiny container to prove that limits apply and cgroups can be
read. It changes nothing: it builds no image (it says what a run would
build) and removes the container it started.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			bad := 0
			check := func(ok bool, what, detail, fix string) {
				mark := "ok  "
				if !ok {
					mark = "FAIL"
					bad++
				}
				fmt.Fprintf(w, "%s %-22s %s\n", mark, what, detail)
				if !ok && fix != "" {
					fmt.Fprintf(w, "     fix: %s\n", fix)
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 60*time.Second)
			defer cancel()
			eng, err := session.Connect(ctx)
			if err != nil {
				check(false, "engine", err.Error(), "start the daemon (`sudo systemctl start docker` or `dockerd &`) or set DOCKER_HOST")
				return exitError{ExitFailure}
			}
			defer eng.Close()
			check(true, "engine", fmt.Sprintf("Docker %s, API %s (negotiated), %s", eng.Info.Version, eng.Info.APIVersion, eng.Info.OS), "")
			check(true, "cgroups", fmt.Sprintf("v%s, %s driver", eng.Info.CgroupVersion, eng.Info.CgroupDriver), "")
			check(eng.Host.MemoryBytes > 2<<30, "host", fmt.Sprintf("%d CPUs, %s memory (%s available)", eng.Host.CPUs,
				model.FormatBytes(eng.Host.MemoryBytes), model.FormatBytes(eng.Host.AvailableBytesAtStart)), "trials need memory for their guarantees; use a host with more than 2GiB")
			// A check changes nothing: it builds no image (a build would also
			// move the workload image's latest tag).
			tag, built, err := eng.WorkloadImageBuilt(ctx)
			if err != nil {
				check(false, "workload image", err.Error(), "build headroom with `make build` (CGO_ENABLED=0) and run `headroom images build`")
				return exitError{ExitFailure}
			}
			if !built {
				fmt.Fprintf(w, "note %-22s %s\n", "workload image", tag+" not built yet: the first run (or `headroom images build`) builds it from this headroom; doctor builds nothing")
				fmt.Fprintf(w, "note %-22s %s\n", "container checks", "skipped until that image exists: run `headroom images build`, then `headroom doctor`")
				if bad > 0 {
					return exitError{ExitFailure}
				}
				fmt.Fprintln(w, "\nchecks passed; the container checks wait for the workload image")
				return nil
			}
			check(true, "workload image", tag, "")
			// Start one tiny container to prove limits and cgroup reads work.
			b, err := docker.New(ctx, eng.Cli, docker.Options{})
			if err != nil {
				check(false, "events", err.Error(), "")
				return exitError{ExitFailure}
			}
			defer b.Close()
			tasks := []model.Task{{Name: "doctor", Image: taskfile.BuiltinImage, Resources: model.Resources{CPUs: 0.5, MemoryBytes: 32 * model.MiB, PidsLimit: 64}, Network: "none"}}
			taskfile.ResolveImages(tasks, tag)
			tasks[0].IdleCommand = []string{workload.Binary, workload.IdleMode}
			tr := model.Trial{ID: "doctor", Task: "doctor", Ratio: model.Ratio{K: 1}, Policy: model.NewPolicy(tasks[0].Resources, model.Ratio{K: 1}, eng.Host.CPUs)}
			sb, err := b.Start(ctx, "doctor", tr, tasks[0])
			if err != nil {
				check(false, "container", err.Error(), "")
				return exitError{ExitFailure}
			}
			info, ierr := eng.Cli.ContainerInspect(ctx, sb.ID())
			src := sb.SampleSource()
			_, rmErr := sb.Remove(context.Background())
			check(ierr == nil && info.HostConfig.Memory == tr.Policy.HardLimitBytes && info.HostConfig.MemorySwap == tr.Policy.HardLimitBytes,
				"limits applied", "memory, swap and reservation read back from docker inspect", "the engine ignored the memory limit: enable the memory cgroup controller")
			if b.ReadsKernelLog() {
				fmt.Fprintf(w, "ok   %-22s %s\n", "kernel log", "readable: OOM kills name the killed process")
			} else {
				fmt.Fprintf(w, "note %-22s %s\n", "kernel log", "not readable (run as root on the engine's host to name killed processes); kills are still caught")
			}
			check(src != "docker-stats", "memory sampling", src,
				"cgroup files unreadable (remote engine or unusual mount): headroom falls back to the 1 Hz stats stream, which misses short spikes; run headroom on the engine's host")
			// The real install tasks' images: optional, so a note, not a failure.
			var have []string
			for _, ref := range []string{docker.DebianImage, docker.DebianCacheImage} {
				if _, err := eng.Cli.ImageInspect(ctx, ref); err == nil {
					have = append(have, ref)
				}
			}
			switch {
			case len(have) == 2:
				fmt.Fprintf(w, "ok   %-22s %s\n", "real-task images", strings.Join(have, ", "))
			default:
				how := "`make real-images` (needs root and debootstrap"
				if _, err := exec.LookPath("debootstrap"); err != nil {
					how += ", which is not installed: `apt-get install debootstrap`"
				}
				fmt.Fprintf(w, "note %-22s %s\n", "real-task images", "not made yet; the real/* tasks and Dockerfiles FROM "+docker.DebianImage+" need them: "+how+")")
			}
			check(rmErr == nil, "cleanup", "test container removed", "run `headroom clean`")
			all, _ := eng.Cli.ContainerList(ctx, container.ListOptions{All: true, Filters: headroomFilter()})
			// Another headroom's running sweep is not a leftover.
			left, live := 0, 0
			for _, c := range all {
				if c.Labels[runner.LabelOwner] != "" && session.OwnerAlive(c.Labels) {
					live++
				} else {
					left++
				}
			}
			detail := fmt.Sprintf("%d headroom container(s) on the engine", left)
			if live > 0 {
				detail += fmt.Sprintf(" (and %d of a headroom still running)", live)
			}
			check(left == 0, "leftovers", detail, "run `headroom clean`")
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", "cgroup.controllers")); err == nil && eng.Info.CgroupVersion == "1" {
				check(false, "cgroup view", "engine says v1 but this host mounts v2", "run headroom on the engine's host")
			}
			if bad > 0 {
				return exitError{ExitFailure}
			}
			fmt.Fprintln(w, "\nall checks passed")
			return nil
		},
	}
}
