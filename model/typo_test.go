package model

import "testing"

func TestTypoNoteSaysWhatTookItsDefault(t *testing.T) {
	typo := Deviation{What: SuspectedTypo, Detail: "line 4: environment.memroy_mb: did you mean memory_mb?" + TypoIgnored}
	cases := []struct {
		name string
		devs []Deviation
		res  Resources
		want string
	}{
		{"none", []Deviation{{What: "network", Detail: "x"}}, Resources{Defaulted: []string{"memory"}}, ""},
		{"memory defaulted", []Deviation{typo}, Resources{MemoryBytes: DefaultMemoryBytes, CPUs: 2, Defaulted: []string{"memory"}},
			"line 4: environment.memroy_mb: did you mean memory_mb?: ignored, as its harness ignores it; the defaults applied (memory 2GiB): every column's limits are scaled from them"},
		{"both defaulted", []Deviation{typo}, Resources{MemoryBytes: DefaultMemoryBytes, CPUs: 1, Defaulted: []string{"memory", "cpus"}},
			"line 4: environment.memroy_mb: did you mean memory_mb?: ignored, as its harness ignores it; the defaults applied (memory 2GiB, cpus 1): every column's limits are scaled from them"},
		{"nothing defaulted", []Deviation{typo}, Resources{MemoryBytes: MiB},
			"line 4: environment.memroy_mb: did you mean memory_mb?: ignored, as its harness ignores it"},
	}
	for _, c := range cases {
		if got := TypoNote(c.devs, c.res); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
