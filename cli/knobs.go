package cli

import (
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/spf13/cobra"
)

// knobFlags are the hidden variables besides memory and CPU, each swept
// over a list of values and crossed with the ratios (docs/KNOBS.md).
type knobFlags struct {
	lists            map[string]*string
	neighbourLoad    string
	neighbourPercent string
}

// knobAxes are the flags in the order their axes cross: each flag's name
// is its knob's field key in a column's text form, bar time-limits.
var knobAxes = []struct{ flag, key, usage string }{
	{"time-limits", "time", "sweep the tasks' own agent and verifier time limits by these scales, e.g. 0.5x,1x,2x,uncapped"},
	{"latency", "latency", "sweep the round-trip time added to each trial's traffic (inside its network namespace), e.g. 0,50ms,200ms"},
	{"jitter", "jitter", "sweep the spread of that added latency (± around it, at most the latency), e.g. 0,20ms"},
	{"loss", "loss", "sweep the share of the trial's outgoing packets dropped, e.g. 0,1%"},
	{"bandwidth", "bandwidth", "sweep a cap on the trial's traffic each way, e.g. unlimited,10mbit,1mbit"},
	{"disk-bps", "disk-bps", "sweep a cap on the container's disk reads and writes, bytes a second each, e.g. unlimited,10M"},
	{"disk-iops", "disk-iops", "sweep a cap on the container's disk reads and writes, operations a second each, e.g. unlimited,50"},
	{"neighbours", "neighbours", "sweep how many noisy neighbour containers run beside each trial, e.g. 0,4"},
}

func (k *knobFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	k.lists = map[string]*string{}
	for _, a := range knobAxes {
		v := new(string)
		k.lists[a.flag] = v
		fl.StringVar(v, a.flag, "", a.usage)
	}
	fl.StringVar(&k.neighbourLoad, "neighbour-load", "cpu", "what each noisy neighbour does: cpu (busy loops), membw (streams memory), disk (writes and syncs files)")
	fl.StringVar(&k.neighbourPercent, "neighbour-intensity", "100%", "each noisy neighbour's load, as a percentage of one core's worth")
}

// axes reads the knob flags given, in knobAxes order.
func (k *knobFlags) axes() ([]model.Axis, error) {
	load, err := model.ParseNeighbourLoad(k.neighbourLoad)
	if err != nil {
		return nil, usagef("--neighbour-load: %v", err)
	}
	pct, err := model.ParsePercent(k.neighbourPercent)
	if err != nil {
		return nil, usagef("--neighbour-intensity: %v", err)
	}
	var out []model.Axis
	for _, a := range knobAxes {
		list := *k.lists[a.flag]
		if list == "" {
			continue
		}
		ax, err := model.ParseAxis(a.key, list)
		if err != nil {
			return nil, usagef("--%s: %v", a.flag, err)
		}
		ax.Name = a.flag
		out = append(out, ax.WithNeighbourLoad(load, pct))
	}
	return out, nil
}

// knobsSummary is ", crossed with latency 0,200ms" for the start line.
func knobsSummary(axes []model.Axis) string {
	s := ""
	for _, a := range axes {
		var vals []string
		for _, v := range a.Values {
			if v.IsZero() {
				vals = append(vals, "baseline")
			} else {
				vals = append(vals, v.Short())
			}
		}
		s += ", × " + a.Name + " " + strings.Join(vals, ",")
	}
	return s
}
