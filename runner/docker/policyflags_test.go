package docker

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/headroom-eval/headroom/model"
)

// The docker run flags shown for a policy are the settings its trial's
// container is created with: read back, they give the same resources,
// at every ratio (issue #37: the translation was written twice, once for
// the create and once for the flags, free to drift).
func TestRunFlagsAreTheCreatesSettings(t *testing.T) {
	spec := model.Resources{MemoryBytes: 128 << 20, CPUs: 1.5, PidsLimit: 1024}
	for _, r := range []model.Ratio{{K: 1}, {K: 1.5}, {K: 3}, model.Uncapped} {
		p := model.NewPolicy(spec, r, 2)
		var got container.Resources
		for _, f := range RunFlags(p) {
			name, v, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch name {
			case "memory":
				got.Memory = n
			case "memory-swap":
				got.MemorySwap = n
			case "memory-reservation":
				got.MemoryReservation = n
			case "cpu-shares":
				got.CPUShares = n
			case "pids-limit":
				got.PidsLimit = &n
			case "cpus":
				c, _ := strconv.ParseFloat(v, 64)
				got.NanoCPUs = int64(c * 1e9)
			default:
				t.Errorf("%s: flag %s is not a setting of the create", r, f)
			}
		}
		if want := policyResources(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: flags %v give %+v, the create sets %+v", r, RunFlags(p), got, want)
		}
	}
}
