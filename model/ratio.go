package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Ratio is the multiple of a task's spec given as the hard kill limit.
// The guarantee is always the spec itself; Uncapped means no hard limit.
type Ratio struct {
	K        float64 // multiple of the spec; ignored when Uncapped
	Uncapped bool
	// Name, when set, is a named resource configuration that is no
	// multiple of the spec (an imported job's absolute override): written
	// "config:NAME", sorted after the multiples.
	Name string
}

// ConfigPrefix marks a named configuration in a ratio's text.
const ConfigPrefix = "config:"

// StandardRatios are the configurations of the Terminal-Bench 2.0 study.
var StandardRatios = []Ratio{{K: 1}, {K: 1.5}, {K: 2}, {K: 3}, {K: 5}, {Uncapped: true}}

// Uncapped is the ratio with no hard limit.
var Uncapped = Ratio{Uncapped: true}

// MaxRatio bounds custom ratios; beyond it "uncapped" says what is meant.
const MaxRatio = 1000

// ParseRatio accepts "1", "1x", "1.5x", "2.5X" and "uncapped" (also
// "none", "unlimited"). An infinite multiple ("Inf", or 1e309, which a
// float cannot hold) is refused like any multiple above MaxRatio: no limit
// is written "uncapped".
func ParseRatio(s string) (Ratio, error) {
	if name, ok := strings.CutPrefix(strings.TrimSpace(s), ConfigPrefix); ok {
		if name == "" {
			return Ratio{}, fmt.Errorf("ratio %q names no configuration", s)
		}
		return Ratio{Name: name}, nil
	}
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "uncapped", "none", "unlimited":
		return Uncapped, nil
	case "":
		return Ratio{}, fmt.Errorf("empty ratio: use a multiple like 1x, 1.5x, 3x or \"uncapped\"")
	}
	num := strings.TrimSuffix(t, "x")
	k, err := strconv.ParseFloat(num, 64)
	switch {
	case math.IsInf(k, 1):
		return Ratio{}, fmt.Errorf("ratio %q is above %dx: use \"uncapped\" for no limit", s, MaxRatio)
	case math.IsInf(k, -1):
		k = -1 // below 1x, said below
	case err != nil || math.IsNaN(k):
		return Ratio{}, fmt.Errorf("ratio %q is not a multiple: use 1x, 1.5x, 3x or \"uncapped\"", s)
	}
	if k < 1 {
		return Ratio{}, fmt.Errorf("ratio %q is below 1x: the hard limit cannot be less than the guaranteed spec; use 1x or more", s)
	}
	if k > MaxRatio {
		return Ratio{}, fmt.Errorf("ratio %q is above %dx: use \"uncapped\" for no limit", s, MaxRatio)
	}
	// Keep ratios comparable as map keys: round to 1/1000.
	k = math.Round(k*1000) / 1000
	return Ratio{K: k}, nil
}

// ParseRatios reads a comma-separated list, rejecting duplicates.
func ParseRatios(s string) ([]Ratio, error) {
	var out []Ratio
	seen := map[Ratio]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := ParseRatio(part)
		if err != nil {
			return nil, err
		}
		if seen[r] {
			return nil, fmt.Errorf("ratio %s is listed twice", r)
		}
		seen[r] = true
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ratios given: use e.g. --ratios 1,3,uncapped")
	}
	return out, nil
}

// String prints "1x", "1.5x" or "uncapped"; ParseRatio reads it back.
func (r Ratio) String() string {
	if r.Name != "" {
		return ConfigPrefix + r.Name
	}
	if r.Uncapped {
		return "uncapped"
	}
	return strconv.FormatFloat(r.K, 'f', -1, 64) + "x"
}

// Less orders ratios from tightest to uncapped.
func (r Ratio) Less(o Ratio) bool {
	if (r.Name != "") != (o.Name != "") {
		return r.Name == ""
	}
	if r.Name != "" {
		return r.Name < o.Name
	}
	if r.Uncapped != o.Uncapped {
		return !r.Uncapped
	}
	return r.K < o.K
}

// MarshalText makes a Ratio a JSON string ("1.5x").
func (r Ratio) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (r *Ratio) UnmarshalText(b []byte) error {
	v, err := ParseRatio(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
