package model

import (
	"reflect"
	"testing"
)

func TestNewPolicyForEveryStandardRatio(t *testing.T) {
	spec := Resources{CPUs: 1, MemoryBytes: 128 * MiB, PidsLimit: 256}
	tests := []struct {
		r         Ratio
		limit     int64
		cpus      float64
		cpuCapped bool
	}{
		{Ratio{K: 1}, 128 * MiB, 1, false},
		{Ratio{K: 1.5}, 192 * MiB, 1.5, false},
		{Ratio{K: 2}, 256 * MiB, 2, false},
		{Ratio{K: 3}, 384 * MiB, 2, true}, // 3 CPUs on a 2-CPU host
		{Ratio{K: 5}, 640 * MiB, 2, true},
		{Uncapped, 0, 0, false},
	}
	for _, tt := range tests {
		p := NewPolicy(spec, tt.r, 2)
		if p.GuaranteeBytes != 128*MiB || p.GuaranteeCPUs != 1 {
			t.Errorf("%s: guarantee %d/%v, want the spec", tt.r, p.GuaranteeBytes, p.GuaranteeCPUs)
		}
		if p.HardLimitBytes != tt.limit || p.LimitCPUs != tt.cpus || p.CPULimitCapped != tt.cpuCapped {
			t.Errorf("%s: limit %d cpus %v capped %v; want %d %v %v", tt.r, p.HardLimitBytes, p.LimitCPUs, p.CPULimitCapped, tt.limit, tt.cpus, tt.cpuCapped)
		}
		if p.PidsLimit != 256 || p.CPUShares() != 1024 {
			t.Errorf("%s: pids %d shares %d", tt.r, p.PidsLimit, p.CPUShares())
		}
	}
}

func TestPolicyLimitIsWholePages(t *testing.T) {
	p := NewPolicy(Resources{CPUs: 1, MemoryBytes: 100*MiB + 1}, Ratio{K: 1.5}, 0)
	if p.HardLimitBytes%4096 != 0 {
		t.Errorf("limit %d is not page aligned", p.HardLimitBytes)
	}
}

func TestDockerRunFlags(t *testing.T) {
	spec := Resources{CPUs: 0.5, MemoryBytes: 64 * MiB, PidsLimit: 100}
	got := NewPolicy(spec, Ratio{K: 2}, 4).DockerRunFlags()
	want := []string{"--memory=134217728", "--memory-swap=134217728", "--memory-reservation=67108864", "--cpus=1", "--cpu-shares=512", "--pids-limit=100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flags\n got %v\nwant %v", got, want)
	}
	got = NewPolicy(spec, Uncapped, 4).DockerRunFlags()
	want = []string{"--memory-reservation=67108864", "--cpu-shares=512", "--pids-limit=100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("uncapped flags\n got %v\nwant %v", got, want)
	}
}
