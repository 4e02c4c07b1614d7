package kube

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// The time limits carry over to a cluster; the knobs a pod cannot be
// given are refused, each saying why, rather than run doing nothing.
func TestCheckKnobsRefusesWhatAPodCannotBeGiven(t *testing.T) {
	p := &Platform{}
	col := func(s string) []model.Ratio {
		r, err := model.ParseColumn(s)
		if err != nil {
			t.Fatal(err)
		}
		return []model.Ratio{{K: 1}, r}
	}
	if err := p.CheckKnobs(model.Task{}, col("1x time=0.5x")); err != nil {
		t.Errorf("time limits refused: %v", err)
	}
	for s, want := range map[string]string{
		"1x latency=100ms":        "network knobs",
		"1x bandwidth=1mbit":      "bandwidth plugin",
		"1x disk-iops=50":         "no blkio limit",
		"1x neighbours=2:cpu@50%": "neighbours knob",
	} {
		err := p.CheckKnobs(model.Task{}, col(s))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--backend docker") {
			t.Errorf("%s: %v, want a refusal naming %q and --backend docker", s, err, want)
		}
	}
}
