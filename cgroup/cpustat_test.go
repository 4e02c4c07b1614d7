package cgroup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// cpu.stat as the kernels write it: v1's cpu controller (6.x adds the
// burst lines) and v2's unified file.
func TestParseCPUStat(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		version int
		want    model.CPUUse
	}{
		{"v1", "nr_periods 120\nnr_throttled 45\nthrottled_time 2250000000\nnr_bursts 0\nburst_time 0\n", 1,
			model.CPUUse{Periods: 120, ThrottledPeriods: 45, ThrottledNanos: 2250000000}},
		{"v2", "usage_usec 812345\nuser_usec 800000\nsystem_usec 12345\nnr_periods 30\nnr_throttled 9\nthrottled_usec 456789\nnr_bursts 0\nburst_usec 0\n", 2,
			model.CPUUse{UsageNanos: 812345000, Periods: 30, ThrottledPeriods: 9, ThrottledNanos: 456789000}},
		{"v2 with no limit ever set", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n", 2, model.CPUUse{UsageNanos: 1500000}},
		{"v1 never limited", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n", 1, model.CPUUse{}},
		{"garbage", "nr_periods x\n", 1, model.CPUUse{}},
	}
	for _, tt := range tests {
		if got := ParseCPUStat([]byte(tt.data), tt.version); got != tt.want {
			t.Errorf("%s: got %+v want %+v", tt.name, got, tt.want)
		}
	}
}

// v1 with cpu and cpuacct mounted apart (as on this project's engine):
// the usage comes from cpuacct, the throttling from cpu.
func TestReadCgroupV1SeparateCPUController(t *testing.T) {
	root := t.TempDir()
	write := func(dir, name, content string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem := filepath.Join(root, "memory", "docker", "ID")
	write(mem, "memory.usage_in_bytes", "4096\n")
	write(filepath.Join(root, "cpuacct", "docker", "ID"), "cpuacct.usage", "7000000\n")
	write(filepath.Join(root, "cpu", "docker", "ID"), "cpu.stat", "nr_periods 10\nnr_throttled 4\nthrottled_time 90000000\n")
	r, err := Find(root, "ID", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := model.CPUUse{UsageNanos: 7000000, Periods: 10, ThrottledPeriods: 4, ThrottledNanos: 90000000}
	m, err := r.Read()
	if err != nil || m.CPU != want {
		t.Errorf("sampled %+v %v, want %+v", m.CPU, err, want)
	}
	if c, ok := r.CPUUse(); !ok || c != want {
		t.Errorf("cpuUse %+v %v, want %+v", c, ok, want)
	}
}
