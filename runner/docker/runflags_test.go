package docker

import (
	"reflect"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

func TestRunFlags(t *testing.T) {
	spec := model.Resources{CPUs: 0.5, MemoryBytes: 64 * model.MiB, PidsLimit: 100}
	got := RunFlags(model.NewPolicy(spec, model.Ratio{K: 2}, 4))
	want := []string{"--memory=134217728", "--memory-swap=134217728", "--memory-reservation=67108864", "--cpus=1", "--cpu-shares=512", "--pids-limit=100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flags\n got %v\nwant %v", got, want)
	}
	got = RunFlags(model.NewPolicy(spec, model.Uncapped, 4))
	want = []string{"--memory-reservation=67108864", "--cpu-shares=512", "--pids-limit=100"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("uncapped flags\n got %v\nwant %v", got, want)
	}
}
