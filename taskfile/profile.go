package taskfile

import "github.com/headroom-eval/headroom/workload/wire"

// Profile is a step's [workload] table as a task file writes it: the
// schema task authors write to. The in-container program receives the
// same fields as JSON (wire.Profile, whose comments say what each field
// does); a step converts one to the other field by field, so a field
// added to one and not the other stops the build at the conversion.
type Profile struct {
	Style         string   `toml:"style"`
	Packages      []string `toml:"packages"`
	DurationMS    int      `toml:"duration_ms"`
	BaseMB        float64  `toml:"base_mb"`
	RampPct       float64  `toml:"ramp_pct"`
	JitterPct     float64  `toml:"jitter_pct"`
	SpikeMB       float64  `toml:"spike_mb"`
	SpikeLenMS    int      `toml:"spike_len_ms"`
	SpikeEvery    int      `toml:"spike_every_ms"`
	SpikeChance   float64  `toml:"spike_chance"`
	SpikeLog      bool     `toml:"spike_log"`
	Children      int      `toml:"children"`
	ChildMB       float64  `toml:"child_mb"`
	ChildLenMS    int      `toml:"child_len_ms"`
	OnChildKilled string   `toml:"on_child_killed"`
	CPUFraction   float64  `toml:"cpu_fraction"`
	CPUWorkMS     int      `toml:"cpu_work_ms"`
	CPUThreads    int      `toml:"cpu_threads"`
	DeadlineMS    int      `toml:"deadline_ms"`
	ModelCalls    int      `toml:"model_calls"`
	ModelURL      string   `toml:"model_url"`
	FetchURL      string   `toml:"fetch_url"`
	DirectWrites  int      `toml:"direct_writes"`
	WriteKB       int      `toml:"write_kb"`
	WriteDir      string   `toml:"write_dir"`
	FailChance    float64  `toml:"fail_chance"`
	Writes        []string `toml:"writes"`
	Requires      []string `toml:"requires"`
	FillDir       string   `toml:"fill_dir"`
	FillMB        float64  `toml:"fill_mb"`
	HoldAtLimit   bool     `toml:"hold_at_limit"`
	HoldAfterMS   int      `toml:"hold_after_ms"`
	ThrashMB      float64  `toml:"thrash_mb"`
	NeedsRoomMB   float64  `toml:"needs_room_mb"`
}

// wire is the profile as the in-container program receives it.
func (p Profile) wire() wire.Profile { return wire.Profile(p) }
