package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The study's other hidden variables, made axes of a sweep beside the
// memory and CPU ratio: time limits, the network to the model, disk I/O
// and noisy neighbours.
//
// A sweep's column stays a Ratio: the multiple of the spec plus, new, the
// settings of the other knobs (Ratio.Knobs). Knobs' zero value changes
// nothing, so a column without knobs is exactly the ratio it always was:
// old experiments read unchanged, and every view that works per column
// (matrix, report, compare, console) works per knob setting.

// Knob names one hidden variable.
type Knob string

// The knobs; memory and CPU are the ratio's (with Scale).
const (
	KnobMemory     Knob = "memory"
	KnobCPU        Knob = "cpu"
	KnobTime       Knob = "time"
	KnobNetwork    Knob = "network"
	KnobDisk       Knob = "disk"
	KnobNeighbours Knob = "neighbours"
)

// KnobOrder is the order of the matrix's column groups.
var KnobOrder = []Knob{KnobTime, KnobNetwork, KnobDisk, KnobNeighbours}

// KnobTitle is a knob's column-group heading.
func (k Knob) Title() string {
	switch k {
	case KnobTime:
		return "time limit"
	case KnobNetwork:
		return "network"
	case KnobDisk:
		return "disk I/O"
	case KnobNeighbours:
		return "neighbours"
	}
	return string(k)
}

// TimeScale multiplies a task's own agent and verifier time limits. Its
// zero value is the task's own limits (1x); Uncapped is none at all.
type TimeScale struct {
	K        float64
	Uncapped bool
}

// NoTimeLimit is what an uncapped time scale gives a limit: long enough
// to mean none, short enough for time arithmetic not to overflow.
const NoTimeLimit = 100 * 365 * 24 * time.Hour

// IsBase says whether the scale leaves the task's limits as they are.
func (s TimeScale) IsBase() bool { return !s.Uncapped && (s.K == 0 || s.K == 1) }

// Apply scales one limit (a limit of 0, none set, stays 0).
func (s TimeScale) Apply(d time.Duration) time.Duration {
	switch {
	case d <= 0 || s.IsBase():
		return d
	case s.Uncapped:
		return NoTimeLimit
	}
	return time.Duration(float64(d) * s.K)
}

func (s TimeScale) String() string {
	switch {
	case s.Uncapped:
		return "uncapped"
	case s.K == 0:
		return "1x"
	}
	return strconv.FormatFloat(s.K, 'f', -1, 64) + "x"
}

// Of says the scale before what it scales: "at 0.5x", "uncapped, not"
// ("limits at 0.5x the task's own"; it read "limits ×0.5x", times twice).
func (s TimeScale) Of() string {
	if s.Uncapped {
		return "uncapped, not"
	}
	return "at " + s.String()
}

// ParseTimeScale reads "0.5x", "2", "1x" or "uncapped".
func ParseTimeScale(s string) (TimeScale, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "uncapped", "none", "unlimited":
		return TimeScale{Uncapped: true}, nil
	}
	k, err := strconv.ParseFloat(strings.TrimSuffix(t, "x"), 64)
	if err != nil || math.IsNaN(k) || math.IsInf(k, 0) {
		return TimeScale{}, fmt.Errorf("time limit scale %q is not a multiple: use 0.5x, 1x, 2x or \"uncapped\"", s)
	}
	if k < 0.05 || k > 100 {
		return TimeScale{}, fmt.Errorf("time limit scale %q is out of range: use a multiple from 0.05x to 100x, or \"uncapped\"", s)
	}
	k = math.Round(k*1000) / 1000
	if k == 1 {
		k = 0 // the task's own limits: the plain column
	}
	return TimeScale{K: k}, nil
}

// NeighbourLoad is what a noisy neighbour container does.
type NeighbourLoad string

// The loads a neighbour can put on the host.
const (
	LoadCPU   NeighbourLoad = "cpu"   // busy loops
	LoadMemBW NeighbourLoad = "membw" // streams through a buffer larger than the caches
	LoadDisk  NeighbourLoad = "disk"  // writes and syncs files
)

// ParseNeighbourLoad reads cpu, membw or disk ("" is cpu).
func ParseNeighbourLoad(s string) (NeighbourLoad, error) {
	switch NeighbourLoad(strings.ToLower(strings.TrimSpace(s))) {
	case "", LoadCPU:
		return LoadCPU, nil
	case LoadMemBW:
		return LoadMemBW, nil
	case LoadDisk:
		return LoadDisk, nil
	}
	return "", fmt.Errorf("neighbour load must be cpu, membw or disk (got %q)", s)
}

// Knobs are a trial's settings of the hidden variables other than memory
// and CPU. The zero value changes nothing: the task's own time limits,
// the network unshaped, no disk limit, no neighbours.
type Knobs struct {
	// Time scales the task's agent, install and verifier time limits.
	Time TimeScale
	// Latency is added to every round trip from the trial's container
	// (delayed on its egress), with Jitter its spread; LossPct of its
	// outgoing packets are dropped; BandwidthBits caps its traffic each
	// way, in bits a second (0: uncapped).
	Latency       time.Duration
	Jitter        time.Duration
	LossPct       float64
	BandwidthBits int64
	// DiskBps caps the container's reads and writes, each, in bytes a
	// second; DiskIOPS their operations a second (0: uncapped).
	DiskBps  int64
	DiskIOPS int64
	// Neighbours is how many noisy neighbour containers run beside the
	// trial, each putting NeighbourLoad on the host at NeighbourPct
	// percent of one core's worth (0: 100).
	Neighbours    int
	NeighbourLoad NeighbourLoad
	NeighbourPct  int
}

// IsZero says whether the knobs change nothing.
func (k Knobs) IsZero() bool { return k.normal() == Knobs{} }

// normal drops what means nothing on its own (a neighbours' load with no
// neighbours, a 1x time scale).
func (k Knobs) normal() Knobs {
	if k.Neighbours == 0 {
		k.NeighbourLoad, k.NeighbourPct = "", 0
	} else if k.NeighbourLoad == "" {
		k.NeighbourLoad = LoadCPU
	}
	if k.NeighbourPct == 100 {
		k.NeighbourPct = 0
	}
	if k.Time.K == 1 && !k.Time.Uncapped {
		k.Time.K = 0
	}
	return k
}

// Set lists the knobs that change something, in KnobOrder.
func (k Knobs) Set() []Knob {
	var out []Knob
	if !k.Time.IsBase() {
		out = append(out, KnobTime)
	}
	if k.Shapes() {
		out = append(out, KnobNetwork)
	}
	if k.DiskBps > 0 || k.DiskIOPS > 0 {
		out = append(out, KnobDisk)
	}
	if k.Neighbours > 0 {
		out = append(out, KnobNeighbours)
	}
	return out
}

// Check refuses settings the knobs cannot give as they say: a jitter
// larger than the latency would need delays below zero, so its spread
// would not be ± the jitter around the latency (docs/KNOBS.md).
func (k Knobs) Check() error {
	if k.Jitter > k.Latency {
		return fmt.Errorf("jitter %s exceeds the latency %s: the delay spreads from latency−jitter to latency+jitter and cannot go below zero; sweep jitter with a latency at least as large (e.g. --latency 50ms --jitter 0,20ms)", k.Jitter, k.Latency)
	}
	return nil
}

// Shapes says whether the knobs shape the trial's network.
func (k Knobs) Shapes() bool {
	return k.Latency > 0 || k.Jitter > 0 || k.LossPct > 0 || k.BandwidthBits > 0
}

// Group is the matrix column group of a column with these knobs: the
// knobs it sets, joined ("" for none: the ratio's own group).
func (k Knobs) Group() string {
	var names []string
	for _, n := range k.Set() {
		names = append(names, string(n))
	}
	return strings.Join(names, "+")
}

// Intensity is the neighbours' load as a fraction of a core.
func (k Knobs) Intensity() float64 {
	if k.NeighbourPct <= 0 {
		return 1
	}
	return float64(k.NeighbourPct) / 100
}

// Fields is the knobs as key=value words, in a fixed order ("" when none
// is set): what follows the ratio in its text form.
func (k Knobs) Fields() []string {
	k = k.normal()
	var f []string
	if !k.Time.IsBase() {
		f = append(f, "time="+k.Time.String())
	}
	if k.Latency > 0 {
		f = append(f, "latency="+k.Latency.String())
	}
	if k.Jitter > 0 {
		f = append(f, "jitter="+k.Jitter.String())
	}
	if k.LossPct > 0 {
		f = append(f, "loss="+strconv.FormatFloat(k.LossPct, 'f', -1, 64)+"%")
	}
	if k.BandwidthBits > 0 {
		f = append(f, "bandwidth="+exactly(k.BandwidthBits, FormatBits, ParseBits, "bit"))
	}
	if k.DiskBps > 0 {
		f = append(f, "disk-bps="+exactly(k.DiskBps, FormatBytes, ParseRate, ""))
	}
	if k.DiskIOPS > 0 {
		f = append(f, "disk-iops="+strconv.FormatInt(k.DiskIOPS, 10))
	}
	if k.Neighbours > 0 {
		load := k.NeighbourLoad
		if load == "" {
			load = LoadCPU
		}
		f = append(f, fmt.Sprintf("neighbours=%d:%s@%d%%", k.Neighbours, load, int(math.Round(100*k.Intensity()))))
	}
	return f
}

// exactly is n in format's unit where that reads back as n, else its
// plain number in unit: a column's text is its identity (resume,
// compare), and "disk-bps=1027" written "1.0KiB" read back as 1024 (the
// fuzzer).
func exactly(n int64, format func(int64) string, parse func(string) (int64, error), unit string) string {
	if s := format(n); func() bool { m, err := parse(s); return err == nil && m == n }() {
		return s
	}
	return strconv.FormatInt(n, 10) + unit
}

// String is the knobs' text form ("" when none is set).
func (k Knobs) String() string { return strings.Join(k.Fields(), " ") }

// Short is the knobs' values as a column heading shows them under its
// group's title, each marked so that none is mistaken for another:
// "0.5x", "+200ms", "±10ms", "loss 1%", "8mbit", "2MiB/s", "50iops",
// "6×cpu".
func (k Knobs) Short() string {
	k = k.normal()
	var f []string
	if !k.Time.IsBase() {
		f = append(f, k.Time.String())
	}
	if k.Latency > 0 {
		f = append(f, "+"+k.Latency.String())
	}
	if k.Jitter > 0 {
		f = append(f, "±"+k.Jitter.String())
	}
	if k.LossPct > 0 {
		f = append(f, "loss "+strconv.FormatFloat(k.LossPct, 'f', -1, 64)+"%")
	}
	if k.BandwidthBits > 0 {
		f = append(f, FormatBits(k.BandwidthBits))
	}
	if k.DiskBps > 0 {
		f = append(f, FormatBytes(k.DiskBps)+"/s")
	}
	if k.DiskIOPS > 0 {
		f = append(f, strconv.FormatInt(k.DiskIOPS, 10)+"iops")
	}
	if k.Neighbours > 0 {
		s := fmt.Sprintf("%d×%s", k.Neighbours, k.NeighbourLoad)
		if k.NeighbourPct > 0 {
			s += fmt.Sprintf("@%d%%", k.NeighbourPct)
		}
		f = append(f, s)
	}
	return strings.Join(f, " ")
}

// ParseKnobField reads one key=value word of Fields into k.
func (k *Knobs) ParseKnobField(word string) error {
	key, val, ok := strings.Cut(word, "=")
	if !ok {
		return fmt.Errorf("%q is not a knob setting: use key=value, e.g. latency=200ms", word)
	}
	var err error
	switch key {
	case "time":
		k.Time, err = ParseTimeScale(val)
	case "latency":
		k.Latency, err = parseKnobDuration(val)
	case "jitter":
		k.Jitter, err = parseKnobDuration(val)
	case "loss":
		k.LossPct, err = ParseLoss(val)
	case "bandwidth":
		k.BandwidthBits, err = ParseBits(val)
	case "disk-bps":
		k.DiskBps, err = ParseRate(val)
	case "disk-iops":
		k.DiskIOPS, err = ParseCount(val)
	case "neighbours":
		err = k.parseNeighbours(val)
	default:
		return fmt.Errorf("unknown knob %q: use time, latency, jitter, loss, bandwidth, disk-bps, disk-iops or neighbours", key)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func (k *Knobs) parseNeighbours(val string) error {
	n, rest, _ := strings.Cut(val, ":")
	count, err := ParseCount(n)
	if err != nil {
		return err
	}
	k.Neighbours = int(count)
	if rest == "" {
		return nil
	}
	load, pct, hasPct := strings.Cut(rest, "@")
	if k.NeighbourLoad, err = ParseNeighbourLoad(load); err != nil {
		return err
	}
	if hasPct {
		if k.NeighbourPct, err = ParsePercent(pct); err != nil {
			return err
		}
		if k.NeighbourPct == 100 {
			k.NeighbourPct = 0
		}
	}
	return nil
}

func parseKnobDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "none" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration: use e.g. 50ms or 1s", s)
	}
	if d > time.Minute {
		return 0, fmt.Errorf("%s is more than a minute", d)
	}
	return d.Round(time.Millisecond / 10), nil
}

// ParseLoss reads a packet loss percentage ("1%", "0.5", "0").
func ParseLoss(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v >= 100 {
		return 0, fmt.Errorf("loss %q must be a percentage from 0 to under 100, e.g. 1%%", s)
	}
	return math.Round(v*1000) / 1000, nil
}

// ParsePercent reads an intensity percentage from 1 to 100 ("50%", "100").
func ParsePercent(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if err != nil || v < 1 || v > 100 {
		return 0, fmt.Errorf("intensity %q must be a percentage from 1 to 100", s)
	}
	return v, nil
}

// ParseCount reads a non-negative count ("0" and "unlimited" are 0 where
// 0 means uncapped).
func ParseCount(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if isUnlimited(s) {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > 1<<40 {
		return 0, fmt.Errorf("%q is not a count: use a whole number, e.g. 50", s)
	}
	return v, nil
}

// ParseRate reads bytes a second ("10M", "512K/s", "unlimited" is 0).
func ParseRate(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	if isUnlimited(t) || t == "0" {
		return 0, nil
	}
	v, err := ParseBytes(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a rate: use bytes a second, e.g. 10M or 512K", s)
	}
	return v, nil
}

func isUnlimited(s string) bool {
	switch strings.ToLower(s) {
	case "unlimited", "uncapped", "none":
		return true
	}
	return false
}

// ParseBits reads a bandwidth as tc writes it: "1mbit", "500kbit",
// "2gbit", "800bit" ("unlimited" and "0" are 0: unshaped).
func ParseBits(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if isUnlimited(t) || t == "0" {
		return 0, nil
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "gbit"):
		mult, t = 1e9, strings.TrimSuffix(t, "gbit")
	case strings.HasSuffix(t, "mbit"):
		mult, t = 1e6, strings.TrimSuffix(t, "mbit")
	case strings.HasSuffix(t, "kbit"):
		mult, t = 1e3, strings.TrimSuffix(t, "kbit")
	case strings.HasSuffix(t, "bit"):
		t = strings.TrimSuffix(t, "bit")
	default:
		return 0, fmt.Errorf("bandwidth %q needs a unit: use e.g. 1mbit, 500kbit or 1gbit", s)
	}
	v, err := strconv.ParseFloat(t, 64)
	bits := int64(math.Round(v * float64(mult)))
	if err != nil || math.IsNaN(v) || bits < 8000 || bits > 100e9 {
		return 0, fmt.Errorf("bandwidth %q must be from 8kbit to 100gbit", s)
	}
	return bits, nil
}

// FormatBits writes bits a second as tc reads them ("1mbit", "1.5mbit").
func FormatBits(b int64) string {
	for _, u := range []struct {
		n    int64
		unit string
	}{{1e9, "gbit"}, {1e6, "mbit"}, {1e3, "kbit"}} {
		if b >= u.n {
			return strconv.FormatFloat(float64(b)/float64(u.n), 'f', -1, 64) + u.unit
		}
	}
	return strconv.FormatInt(b, 10) + "bit"
}

// LessKnobs orders knob settings: by column group (none first, then
// KnobOrder), then from the harshest setting to the mildest.
func LessKnobs(a, b Knobs) bool {
	ga, gb := groupRank(a), groupRank(b)
	if ga != gb {
		return ga < gb
	}
	// Harsh to mild within a group: shorter time, more latency/loss,
	// less bandwidth/disk, more neighbours.
	cmps := []struct{ x, y float64 }{
		{timeKey(a.Time), timeKey(b.Time)},
		{-float64(a.Latency), -float64(b.Latency)},
		{-float64(a.Jitter), -float64(b.Jitter)},
		{-a.LossPct, -b.LossPct},
		{capKey(a.BandwidthBits), capKey(b.BandwidthBits)},
		{capKey(a.DiskBps), capKey(b.DiskBps)},
		{capKey(a.DiskIOPS), capKey(b.DiskIOPS)},
		{-float64(a.Neighbours), -float64(b.Neighbours)},
		{-a.Intensity(), -b.Intensity()},
	}
	for _, c := range cmps {
		if c.x != c.y {
			return c.x < c.y
		}
	}
	return a.NeighbourLoad < b.NeighbourLoad
}

func timeKey(t TimeScale) float64 {
	switch {
	case t.Uncapped:
		return math.Inf(1)
	case t.K == 0:
		return 1
	}
	return t.K
}

// capKey orders a cap where 0 means uncapped (the mildest).
func capKey(v int64) float64 {
	if v == 0 {
		return math.Inf(1)
	}
	return float64(v)
}

func groupRank(k Knobs) int {
	set := k.Set()
	if len(set) == 0 {
		return 0
	}
	r := 0
	for _, s := range set {
		for i, o := range KnobOrder {
			if o == s {
				r = r*8 + i + 1
			}
		}
	}
	return r
}

// Axis is one knob swept over values: each value is a Knobs with only
// that knob's fields set (its zero value is the knob's baseline).
type Axis struct {
	Name   string  `json:"name"` // the flag: time-limits, latency, ...
	Values []Knobs `json:"values"`
}

// CrossAxes is every combination of one value from each axis (one empty
// Knobs with no axes), in axis order.
func CrossAxes(axes []Axis) []Knobs {
	out := []Knobs{{}}
	for _, a := range axes {
		var next []Knobs
		for _, base := range out {
			for _, v := range a.Values {
				next = append(next, mergeKnobs(base, v))
			}
		}
		out = next
	}
	return out
}

// mergeKnobs sets on a what b sets.
func mergeKnobs(a, b Knobs) Knobs {
	if !b.Time.IsBase() {
		a.Time = b.Time
	}
	if b.Latency > 0 {
		a.Latency = b.Latency
	}
	if b.Jitter > 0 {
		a.Jitter = b.Jitter
	}
	if b.LossPct > 0 {
		a.LossPct = b.LossPct
	}
	if b.BandwidthBits > 0 {
		a.BandwidthBits = b.BandwidthBits
	}
	if b.DiskBps > 0 {
		a.DiskBps = b.DiskBps
	}
	if b.DiskIOPS > 0 {
		a.DiskIOPS = b.DiskIOPS
	}
	if b.Neighbours > 0 {
		a.Neighbours, a.NeighbourLoad, a.NeighbourPct = b.Neighbours, b.NeighbourLoad, b.NeighbourPct
	}
	return a.normal()
}

// MaxNeighbours bounds a neighbours value given to a sweep. The count was
// a ParseCount (up to 2^40): --neighbours 1000000000000 created
// containers one by one for 142 s. Each neighbour is a container of its
// own loading up to a core (and membw's 64 MiB), so 64 already
// oversubscribe a 64-core host and hold 4 GiB on a small one; a bound
// fixed rather than the host's CPUs, so a sweep that runs here also runs,
// and resumes, on another machine. Only what a user gives is bounded:
// a recorded column with more still reads (UnmarshalText).
const MaxNeighbours = 64

// ParseAxis reads one knob's comma-separated values as its flag gives
// them: name is the knob's field key (time, latency, jitter, loss,
// bandwidth, disk-bps, disk-iops, neighbours). A value may be the knob's
// baseline ("1x", "0", "unlimited"); duplicates are refused.
func ParseAxis(name, list string) (Axis, error) {
	a := Axis{Name: name}
	seen := map[Knobs]bool{}
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var k Knobs
		if err := k.ParseKnobField(name + "=" + part); err != nil {
			return a, err
		}
		k = k.normal()
		if k.Neighbours > MaxNeighbours {
			return a, fmt.Errorf("%s %s is more than %d: each neighbour is a container of its own loading up to a core, so %d keep even a 64-core host busy; use at most %d", name, part, MaxNeighbours, MaxNeighbours, MaxNeighbours)
		}
		if seen[k] {
			return a, fmt.Errorf("%s %s is listed twice", name, part)
		}
		seen[k] = true
		a.Values = append(a.Values, k)
	}
	if len(a.Values) == 0 {
		return a, fmt.Errorf("no %s values given", name)
	}
	return a, nil
}

// WithNeighbourLoad sets every neighbours value of an axis to a load and
// an intensity (percent of a core; 0 or 100 is a full core).
func (a Axis) WithNeighbourLoad(load NeighbourLoad, pct int) Axis {
	if pct == 100 {
		pct = 0
	}
	out := Axis{Name: a.Name}
	for _, v := range a.Values {
		if v.Neighbours > 0 {
			v.NeighbourLoad, v.NeighbourPct = load, pct
		}
		out.Values = append(out.Values, v)
	}
	return out
}

// BaselineIn is the column col is compared with among a sweep's cols. A
// plain ratio is compared with the baseline's ratio. A knob's column is
// compared within its knob: with the baseline itself when that is a
// column of the same knobs at the same ratio (report --baseline "1x
// time=2x"), else with the same ratio and no knobs set, else, in a sweep
// without that plain column (--time-limits 0.5x,0.75x), with the mildest
// column of its knobs at its ratio, so a tighter setting is still
// compared with a looser one. A column that is its own base is compared
// with nothing.
func BaselineIn(col, baseline Ratio, cols []Ratio) Ratio {
	plain := func(r Ratio) Ratio { return Ratio{K: r.K, Uncapped: r.Uncapped, Name: r.Name} }
	if col.Knobs.IsZero() {
		return plain(baseline)
	}
	if !baseline.Knobs.IsZero() && baseline.Knobs.Group() == col.Knobs.Group() && plain(baseline) == plain(col) && slices.Contains(cols, baseline) {
		return baseline
	}
	own := plain(col)
	if slices.Contains(cols, own) {
		return own
	}
	mildest, found := col, false
	for _, c := range cols {
		if plain(c) == own && c.Knobs.Group() == col.Knobs.Group() && (!found || LessKnobs(mildest.Knobs, c.Knobs)) {
			mildest, found = c, true
		}
	}
	return mildest
}

// ScaleTimeLimits is the task with its agent, install, phase and
// verifier time limits scaled by s.
func ScaleTimeLimits(t Task, s TimeScale) Task {
	if s.IsBase() {
		return t
	}
	t.AgentTimeout = s.Apply(t.AgentTimeout)
	t.VerifierTimeout = s.Apply(t.VerifierTimeout)
	agents := make([]Agent, len(t.Agents))
	for i, a := range t.Agents {
		a.Timeout = s.Apply(a.Timeout)
		a.InstallTimeout = s.Apply(a.InstallTimeout)
		agents[i] = a
	}
	t.Agents = agents
	if len(t.Phases) > 0 {
		phases := make([]Phase, len(t.Phases))
		for i, p := range t.Phases {
			p.AgentTimeout = s.Apply(p.AgentTimeout)
			p.VerifierTimeout = s.Apply(p.VerifierTimeout)
			phases[i] = p
		}
		t.Phases = phases
	}
	return t
}

// KnobNotes say where the columns' knobs cannot act on a task: a task
// with no network has no traffic to shape, so its network columns run
// as the plain ones do (and say so rather than pretend).
func KnobNotes(t Task, cols []Ratio) []string {
	var notes []string
	shapes := false
	for _, c := range cols {
		shapes = shapes || c.Knobs.Shapes()
	}
	if shapes && t.Network == "none" && !t.PhaseWantsNetwork() {
		notes = append(notes, "network: nothing to shape, the task runs with no network (its network columns run unshaped)")
	}
	return notes
}

// KnobRecord is, for a trial that ran with knobs, how each was applied
// and what was measured of its effect.
type KnobRecord struct {
	// Applied says how each knob acted ("network: tc tbf 1mbit on eth0
	// egress and ifb ingress, in the trial's network namespace").
	Applied []string `json:"applied,omitempty"`
	// Skipped says which knobs had nothing to act on, and why.
	Skipped []string `json:"skipped,omitempty"`
	// Measured are the effects as measured: inside the container by the
	// task's own steps (MeasurePrefix lines), or from the trial's and its
	// neighbours' cgroups.
	Measured []Measure `json:"measured,omitempty"`
	// MeasuresDropped counts the task's measure lines not kept: past
	// MaxMeasures, or named as one of headroom's own (OwnMeasure).
	MeasuresDropped int `json:"measures_dropped,omitempty"`
	// Neighbours are the noisy neighbours' own use over the trial.
	Neighbours []NeighbourUse `json:"neighbours,omitempty"`
}

// Measure is one measured effect of a knob.
type Measure struct {
	Name  string  `json:"name"` // rtt, transfer_rate, write_iops, cpu_wait...
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`  // ms, bit/s, op/s, ...
	Where string  `json:"where"` // "container" (its own step), "cgroup", "helper"
	Step  string  `json:"step,omitempty"`
}

func (m Measure) String() string {
	switch m.Unit {
	case "bit/s":
		return m.Name + " " + roundedUnit(m.Value, []string{"bit/s", "kbit/s", "Mbit/s", "Gbit/s"}, 1000)
	case "B/s":
		return m.Name + " " + roundedUnit(m.Value, []string{"B/s", "KiB/s", "MiB/s", "GiB/s"}, 1024)
	}
	return m.Name + " " + sig3(m.Value) + m.Unit
}

// sig3 writes v to three significant digits, never in exponent form.
func sig3(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// roundedUnit writes v to three significant digits in the largest unit
// it reaches ("7.65Mbit/s").
func roundedUnit(v float64, units []string, step float64) string {
	i := 0
	for i < len(units)-1 && math.Abs(v) >= step {
		v /= step
		i++
	}
	return sig3(v) + units[i]
}

// NeighbourUse is one noisy neighbour's use while the trial ran.
type NeighbourUse struct {
	Name         string        `json:"name"`
	Load         NeighbourLoad `json:"load"`
	CPUNanos     int64         `json:"cpu_ns"`
	WrittenBytes int64         `json:"written_bytes,omitempty"`
	Wall         Duration      `json:"wall"`
}

// Cores is the neighbour's average CPU use over its life.
func (n NeighbourUse) Cores() float64 {
	if n.Wall <= 0 {
		return 0
	}
	return float64(n.CPUNanos) / float64(n.Wall)
}

// MeasurePrefix starts a step's output line that reports a measured
// effect: "headroom-measure: rtt 201.5 ms".
const MeasurePrefix = "headroom-measure: "

// ParseMeasure reads a MeasurePrefix line ("name value unit").
func ParseMeasure(line string) (Measure, bool) {
	rest, ok := strings.CutPrefix(line, MeasurePrefix)
	if !ok {
		return Measure{}, false
	}
	f := strings.Fields(rest)
	if len(f) < 2 || len(f) > 3 {
		return Measure{}, false
	}
	v, err := strconv.ParseFloat(f[1], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Measure{}, false
	}
	m := Measure{Name: f[0], Value: v, Where: "container"}
	if len(f) == 3 {
		m.Unit = f[2]
	}
	return m, true
}

// FormatMeasure is the line a step prints to report a measure.
func FormatMeasure(name string, value float64, unit string) string {
	return MeasurePrefix + name + " " + strconv.FormatFloat(value, 'f', 3, 64) + " " + unit
}

// ownMeasures are the measures headroom takes itself, outside the task's
// container: its runner's, its helper's, its cgroup readings.
var ownMeasures = map[string]bool{"agent_time": true, "link_rtt": true, "neighbour_cores": true, "neighbour_write_rate": true}

// OwnMeasure says whether name is one of headroom's own measures, which a
// task's MeasurePrefix line cannot give.
func OwnMeasure(name string) bool { return ownMeasures[name] }

// forged is a measure a task printed under one of headroom's own names
// (a record written before AddTaskMeasure refused them): not read.
func (m Measure) forged() bool { return m.Where == "container" && OwnMeasure(m.Name) }

// MeasureOf is the median of a named measure over trials (ok false when
// none has it): what a column shows beside its outcome.
func MeasureOf(trials []TrialResult, name string) (Measure, bool) {
	var vals []float64
	var unit, where string
	for _, t := range trials {
		if t.Knobs == nil {
			continue
		}
		for _, m := range t.Knobs.Measured {
			if m.Name == name && !m.forged() {
				vals = append(vals, m.Value)
				unit, where = m.Unit, m.Where
			}
		}
	}
	if len(vals) == 0 {
		return Measure{}, false
	}
	return Measure{Name: name, Value: median(vals), Unit: unit, Where: where}, true
}

// TimeLimitsApplied says what a time scale made of a task's limits.
func TimeLimitsApplied(t Task, s TimeScale) string {
	show := func(d time.Duration) string {
		if d >= NoTimeLimit {
			return "none"
		}
		return d.String()
	}
	scaled := ScaleTimeLimits(t, s)
	of := "the task's own"
	if t.TimeoutScale != 0 && t.TimeoutScale != 1 {
		of += fmt.Sprintf(" ×%g by --timeout-scale", t.TimeoutScale)
	}
	return fmt.Sprintf("time: limits %s %s: agent %s → %s, verifier %s → %s", s.Of(), of, t.AgentTimeout, show(scaled.AgentTimeout), t.VerifierTimeout, show(scaled.VerifierTimeout))
}

// MarshalText writes the knobs' text form ("latency=200ms"; "" for none).
func (k Knobs) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (k *Knobs) UnmarshalText(b []byte) error {
	var v Knobs
	for _, w := range strings.Fields(string(b)) {
		if err := v.ParseKnobField(w); err != nil {
			return err
		}
	}
	*k = v.normal()
	return nil
}

// MeasuredText is what a cell's trials measured, each measure's median:
// "model_rtt 201ms, agent_time 6.1s" ("" when none).
func MeasuredText(trials []TrialResult) string {
	names := map[string]bool{}
	for _, t := range trials {
		if t.Knobs != nil {
			for _, m := range t.Knobs.Measured {
				names[m.Name] = true
			}
		}
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var out []string
	for _, n := range sorted {
		if m, ok := MeasureOf(lastMeasures(trials), n); ok {
			out = append(out, m.String())
		}
	}
	return strings.Join(out, ", ")
}

// lastMeasures keeps, of each trial's measures, the last of each name (a
// step reporting as it goes ends with its whole run's figure); of
// headroom's own names, only headroom's.
func lastMeasures(trials []TrialResult) []TrialResult {
	out := make([]TrialResult, 0, len(trials))
	for _, t := range trials {
		if t.Knobs == nil {
			continue
		}
		last := map[string]int{}
		for i, m := range t.Knobs.Measured {
			if !m.forged() {
				last[m.Name] = i
			}
		}
		var keep []Measure
		for i, m := range t.Knobs.Measured {
			if j, ok := last[m.Name]; ok && j == i {
				keep = append(keep, m)
			}
		}
		t.Knobs = &KnobRecord{Measured: keep}
		out = append(out, t)
	}
	return out
}

// GroupTitle is a column group's heading: "ratio" for the plain columns,
// else the knobs' titles ("network", "time limit + network").
func GroupTitle(group string) string {
	if group == "" {
		return "── ratio"
	}
	var t []string
	for _, k := range strings.Split(group, "+") {
		t = append(t, Knob(k).Title())
	}
	return "── " + strings.Join(t, " + ")
}

// ColumnGroups heads each knob's columns with its group's title (over
// the first of them); nil when no column has a knob.
func ColumnGroups(ratios []Ratio) []string {
	any := false
	for _, r := range ratios {
		any = any || !r.Knobs.IsZero()
	}
	if !any {
		return nil
	}
	out := make([]string, len(ratios))
	last := "\x00"
	for i, r := range ratios {
		if g := r.Knobs.Group(); g != last {
			out[i], last = GroupTitle(g), g
		}
	}
	return out
}

// MaxMeasures is how many measures a trial's task may put in its record
// (MeasurePrefix lines from its steps); the rest are counted. Any step's
// output can print them: 10 s of `yes 'headroom-measure: m 1 s'` made a
// 290 MB record line that no reader takes, and 4 GB of headroom's memory.
const MaxMeasures = 256

// AddTaskMeasure keeps a measure the task printed, up to MaxMeasures, and
// counts the rest; one named as headroom's own (OwnMeasure) is counted,
// not kept: a task's `headroom-measure: agent_time 0.001 s` is not
// headroom's agent_time.
func (k *KnobRecord) AddTaskMeasure(m Measure) {
	if len(k.Measured) >= MaxMeasures || OwnMeasure(m.Name) {
		k.MeasuresDropped++
		return
	}
	k.Measured = append(k.Measured, m)
}
