package cgroup

import (
	"path/filepath"

	"github.com/headroom-eval/headroom/model"
)

// throttleCandidates lists where a container's cpu.stat (the CFS
// bandwidth counters) may be: v2 keeps it in the unified dir; v1 in the
// cpu controller's, which is mounted on its own or beside cpuacct.
func throttleCandidates(root string, version int, id string, proc map[string]string) []string {
	if version == 2 {
		dirs, _ := candidates(root, 2, id, proc)
		return dirs
	}
	var out []string
	for _, b := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
		base := filepath.Join(root, b)
		out = append(out, filepath.Join(base, "docker", id), filepath.Join(base, "system.slice", "docker-"+id+".scope"))
		if p, ok := proc["cpu"]; ok && p != "/" {
			out = append(out, filepath.Join(base, p))
		}
	}
	return out
}

// ParseCPUStat reads cpu.stat's throttling counters: v1 says
// throttled_time in nanoseconds, v2 throttled_usec in microseconds (and
// usage_usec, which v1 keeps in cpuacct.usage).
func ParseCPUStat(b []byte, version int) model.CPUUse {
	var c model.CPUUse
	c.Periods, _ = FlatKeyed(b, "nr_periods")
	c.ThrottledPeriods, _ = FlatKeyed(b, "nr_throttled")
	if version == 2 {
		us, _ := FlatKeyed(b, "throttled_usec")
		c.ThrottledNanos = us * 1000
		u, _ := FlatKeyed(b, "usage_usec")
		c.UsageNanos = u * 1000
	} else {
		c.ThrottledNanos, _ = FlatKeyed(b, "throttled_time")
	}
	return c
}
