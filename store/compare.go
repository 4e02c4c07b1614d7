package store

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// PairedReplays names the tasks whose repeat r in A replays repeat r in
// B: seeded in both (model.SeededImage) under one seed. Other tasks' runs
// are compared as rates (model.SplitRegimes).
func PairedReplays(a, b Manifest) map[string]bool {
	out := map[string]bool{}
	if a.Seed != b.Seed {
		return out
	}
	inB := map[string]bool{}
	for _, t := range b.Tasks {
		inB[t.Name] = model.SeededImage(t.Image)
	}
	for _, t := range a.Tasks {
		out[t.Name] = model.SeededImage(t.Image) && inB[t.Name]
	}
	return out
}

// SetupDiffs lists what differs between two experiments' setups.
func SetupDiffs(a, b Manifest) []string {
	var out []string
	add := func(name string, x, y any) {
		if fmt.Sprint(x) != fmt.Sprint(y) {
			out = append(out, fmt.Sprintf("%-16s A %v · B %v", name, x, y))
		}
	}
	add("source", source(a), source(b))
	add("engine", a.Engine.Name()+" "+a.Engine.Version, b.Engine.Name()+" "+b.Engine.Version)
	add("cgroup", a.Engine.Detail("cgroup_version")+"/"+a.Engine.Detail("cgroup_driver"), b.Engine.Detail("cgroup_version")+"/"+b.Engine.Detail("cgroup_driver"))
	add("memory sampling", a.Engine.SampleSource, b.Engine.SampleSource)
	add("kernel", a.Host.Kernel, b.Host.Kernel)
	add("host", a.Host.Hostname, b.Host.Hostname)
	add("host CPUs", a.Host.CPUs, b.Host.CPUs)
	add("host memory", model.FormatBytes(a.Host.MemoryBytes), model.FormatBytes(b.Host.MemoryBytes))
	add("concurrency", a.Concurrency, b.Concurrency)
	add("repeats", a.Repeats, b.Repeats)
	add("seed", a.Seed, b.Seed)
	add("headroom", a.Version, b.Version)
	add("tasks/images", taskSet(a), taskSet(b))
	return out
}

// taskSet is an experiment's tasks and their images, in one order
// whatever order its plan listed them in: the same tasks listed
// otherwise are the same setup.
func taskSet(m Manifest) string {
	var ts []string
	for _, t := range m.Tasks {
		ts = append(ts, t.Name+"@"+t.ImageID)
	}
	slices.Sort(ts)
	return strings.Join(ts, " ")
}

// SpecDiffs lists, per task both experiments ran, how its spec differs:
// memory (and the 1x limit it makes), its own memory_limit, CPUs, pids
// limit and container profile.
func SpecDiffs(a, b Manifest) []string {
	inB := map[string]TaskEntry{}
	for _, t := range b.Tasks {
		inB[t.Name] = t
	}
	limit1x := func(r model.Resources) int64 { return cmp.Or(r.MemoryLimitBytes, r.MemoryBytes) }
	var out []string
	for _, ta := range a.Tasks {
		tb, ok := inB[ta.Name]
		if !ok {
			continue
		}
		ra, rb := ta.Resources, tb.Resources
		var d []string
		if ra.MemoryBytes != rb.MemoryBytes {
			d = append(d, fmt.Sprintf("memory A %s · B %s", model.FormatBytes(ra.MemoryBytes), model.FormatBytes(rb.MemoryBytes)))
		}
		if la, lb := limit1x(ra), limit1x(rb); la != lb && (la != ra.MemoryBytes || lb != rb.MemoryBytes) {
			d = append(d, fmt.Sprintf("1x limit A %s · B %s", model.FormatBytes(la), model.FormatBytes(lb)))
		}
		if ra.CPUs != rb.CPUs {
			d = append(d, fmt.Sprintf("cpus A %g · B %g", ra.CPUs, rb.CPUs))
		}
		if ra.PidsLimit != rb.PidsLimit {
			d = append(d, fmt.Sprintf("pids limit A %d · B %d (0: none)", ra.PidsLimit, rb.PidsLimit))
		}
		if pa, pb := cmp.Or(ta.Profile, model.ProfileHardened), cmp.Or(tb.Profile, model.ProfileHardened); pa != pb {
			d = append(d, fmt.Sprintf("profile A %s · B %s", pa, pb))
		}
		if len(d) > 0 {
			out = append(out, ta.Name+": "+strings.Join(d, ", "))
		}
	}
	return out
}

// source says where an experiment's trials came from: run here, or
// imported from another harness's jobs.
func source(m Manifest) string {
	if len(m.Imported) == 0 {
		return "run by headroom"
	}
	return fmt.Sprintf("imported from %s (%s; no memory recorded)", m.Imported[0].Harness, model.Quantity(len(m.Imported), "job"))
}
