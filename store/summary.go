package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
	"unique"

	"github.com/headroom-eval/headroom/model"
)

// SummaryFile holds one small row per record of trials.jsonl, written
// beside it at append: what the console's matrix, its cards, focus and
// what-if lines and resume's scan read of a trial (its cell, outcome,
// cause, peaks, times and steps' peaks), and where its record is in
// trials.jsonl, so an experiment opens without reading its records (18 KB
// each, most of it output tails). A row is compact JSON with short keys:
// a reader never trusts it blindly (readSummary), and when it cannot the
// records are read the old way (ReadTrialsBrief).
const SummaryFile = "trials.summary"

// summaryVersion is the rows' format; a file of another is not read.
const summaryVersion = 4 // 3: the kernel peaks without cache; 4: rows sealed (seal.go)

// summaryRow is one trial's row. Line, Off and Len are its record's
// place in trials.jsonl (TrialLine).
type summaryRow struct {
	V    int   `json:"v,omitempty"` // the format, on the first row only
	Line int   `json:"l"`
	Off  int64 `json:"o"`
	Len  int   `json:"n"`

	ID      string               `json:"id"`
	Index   int                  `json:"ix,omitempty"`
	Task    string               `json:"t"`
	Agent   string               `json:"a,omitempty"`
	Ratio   model.Ratio          `json:"r"`
	Repeat  int                  `json:"rp"`
	Seed    uint64               `json:"sd,omitempty"`
	Policy  model.ResourcePolicy `json:"p"`
	Profile string               `json:"pf,omitempty"`

	Experiment     string               `json:"x,omitempty"`
	Outcome        model.Outcome        `json:"oc"`
	Cause          model.Cause          `json:"c,omitempty"`
	Reason         string               `json:"why,omitempty"`
	TaskNotRun     bool                 `json:"nr,omitempty"`
	Start          time.Time            `json:"s"`
	End            time.Time            `json:"e"`
	Peak           int64                `json:"pk,omitempty"`
	KernelPeak     int64                `json:"kp,omitempty"`
	KernelPeakNC   int64                `json:"kpn,omitempty"` // without reclaimable cache
	StateOOMKilled bool                 `json:"sok,omitempty"`
	KilledInStep   string               `json:"kis,omitempty"`
	SampleSource   string               `json:"src,omitempty"`
	Steps          []summaryStep        `json:"st,omitempty"`
	OOMs           []model.OOMEvent     `json:"oom,omitempty"`
	Noise          *model.HostNoise     `json:"nz,omitempty"`
	Stall          *model.StallEvidence `json:"sl,omitempty"`
	Reward         *float64             `json:"rw,omitempty"`
	Verdict        string               `json:"vd,omitempty"`
	Tests          *model.TestTally     `json:"ts,omitempty"`
	CPU            *model.CPUUse        `json:"cpu,omitempty"`
	Knobs          *model.KnobRecord    `json:"kn,omitempty"`
	Imported       *model.Imported      `json:"im,omitempty"`
	Replay         *model.ReplayRecord  `json:"ry,omitempty"`

	// interned: its strings are one copy each already (rowDecoder's).
	interned bool
}

// summaryStep is a step of a row, written as one JSON array (steps are
// most of a row: as objects they cost as much to decode as the rest):
// [name, phase, exit_unknown, start, end, exit_code, peak, kernel_peak,
// oom_kills, flags, at_limit, major_faults, cpu_wait] and, when the
// step's CPU was read, its usage, periods, throttled periods and
// throttled ns. A time is its offset in ns from the trial's start, or,
// where that cannot say it exactly, RFC 3339 text ("" for none).
type summaryStep struct {
	Name, Phase, ExitUnknown string
	Start, End               stepTime
	ExitCode                 int
	Peak, KernelPeak         int64
	KernelPeakNoCache        int64
	OOMKills                 int
	TimedOut, NoSpace        bool
	AtLimit                  model.Duration
	MajorFaults              int64
	CPUWait                  model.Duration
	CPU                      *model.CPUUse
}

// stepTime is a step's time as a row has it: Off from the trial's start
// when Text is empty and Set, else Text.
type stepTime struct {
	Off  int64
	Text string
	Set  bool
}

func stepTimeOf(t, start time.Time) stepTime {
	if t.IsZero() {
		return stepTime{}
	}
	if !start.IsZero() && t.Location() == start.Location() {
		if d := t.Sub(start); start.Add(d) == t && d > -100*365*24*time.Hour && d < 100*365*24*time.Hour {
			return stepTime{Off: int64(d), Set: true}
		}
	}
	b, _ := t.MarshalText()
	return stepTime{Text: string(b), Set: true}
}

func (st stepTime) at(start time.Time) time.Time {
	switch {
	case !st.Set:
		return time.Time{}
	case st.Text != "":
		var t time.Time
		_ = t.UnmarshalText([]byte(st.Text)) // checked when the row was read
		return t
	default:
		return start.Add(time.Duration(st.Off))
	}
}

const (
	stepTimedOut = 1 << iota
	stepNoSpace
	stepCPU
	stepNoCache // a last number: the kernel peak without cache
)

func (s summaryStep) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 128)
	b = append(b, '[')
	for i, v := range []string{s.Name, s.Phase, s.ExitUnknown} {
		if i > 0 {
			b = append(b, ',')
		}
		q, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(b, q...)
	}
	for _, t := range []stepTime{s.Start, s.End} {
		b = append(b, ',')
		if t.Set && t.Text == "" {
			b = strconv.AppendInt(b, t.Off, 10)
		} else {
			q, _ := json.Marshal(t.Text)
			b = append(b, q...)
		}
	}
	flags := int64(0)
	if s.TimedOut {
		flags |= stepTimedOut
	}
	if s.NoSpace {
		flags |= stepNoSpace
	}
	nums := []int64{int64(s.ExitCode), s.Peak, s.KernelPeak, int64(s.OOMKills), 0, int64(s.AtLimit), s.MajorFaults, int64(s.CPUWait)}
	if s.CPU != nil {
		flags |= stepCPU
		nums = append(nums, s.CPU.UsageNanos, s.CPU.Periods, s.CPU.ThrottledPeriods, s.CPU.ThrottledNanos)
	}
	if s.KernelPeakNoCache != 0 {
		flags |= stepNoCache
		nums = append(nums, s.KernelPeakNoCache)
	}
	nums[4] = flags
	for _, n := range nums {
		b = append(b, ',')
		b = strconv.AppendInt(b, n, 10)
	}
	return append(b, ']'), nil
}

// errStep is a step that is not one a row writes.
var errStep = errors.New("summary: not a step")

func (s *summaryStep) UnmarshalJSON(b []byte) error {
	n, err := s.parse(b, nil)
	if err == nil && n != len(b) {
		err = errStep
	}
	return err
}

// parse reads a step's array at the start of b and says how many bytes
// it took. What it takes is JSON (encoding/json checks a row before it
// calls UnmarshalJSON; the summary's decoder does not). With a decoder,
// its plain strings (not escaped, ASCII) are the decoder's one copy and
// its CPU figures come from the decoder's slab.
func (s *summaryStep) parse(b []byte, d *rowDecoder) (int, error) {
	var strs [3]string
	var times [2]stepTime
	var nums [13]int64
	i, n := 0, 0
	// next is a token, whether a string, and whether one as it stands.
	next := func() (tok []byte, isStr, plain bool, err error) {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		if i >= len(b) {
			return nil, false, false, errStep
		}
		if b[i] == '"' {
			// esc: anything encoding/json reads otherwise than as the
			// bytes stand (an escape, a control byte it refuses, bytes
			// beyond ASCII it may turn into U+FFFD) goes through it.
			j, esc := i+1, false
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					esc = true
					j++
				} else if b[j] < 0x20 || b[j] >= 0x80 {
					esc = true
				}
				j++
			}
			if j >= len(b) {
				return nil, false, false, errStep
			}
			tok := b[i : j+1]
			i = j + 1
			if !esc {
				return tok[1 : len(tok)-1], true, true, nil
			}
			var v string
			if err := json.Unmarshal(tok, &v); err != nil {
				return nil, false, false, errStep
			}
			return []byte(v), true, false, nil
		}
		// A number as JSON spells an integer: no leading zeros, no "+".
		j := i
		if j < len(b) && b[j] == '-' {
			j++
		}
		if j < len(b) && b[j] == '0' {
			j++
		} else {
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
		}
		tok = b[i:j]
		i = j
		return tok, false, false, nil
	}
	sep := func(c byte) bool {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		if i < len(b) && b[i] == c {
			i++
			return true
		}
		return false
	}
	if !sep('[') {
		return 0, errStep
	}
	for ; ; n++ {
		if n > 0 && !sep(',') {
			break
		}
		tok, isStr, plain, err := next()
		if err != nil {
			return 0, err
		}
		switch {
		case n < 3:
			if !isStr {
				return 0, errStep
			}
			if plain && d != nil {
				strs[n] = d.intern(tok)
			} else {
				strs[n] = string(tok)
			}
		case n < 5:
			if isStr {
				if len(tok) > 0 {
					var t time.Time
					if t.UnmarshalText(tok) != nil {
						return 0, errStep
					}
					times[n-3] = stepTime{Text: string(tok), Set: true}
				}
				continue
			}
			v, ok := parseInt(tok)
			if !ok {
				return 0, errStep
			}
			times[n-3] = stepTime{Off: v, Set: true}
		case n < 5+len(nums):
			if isStr {
				return 0, errStep
			}
			v, ok := parseInt(tok)
			if !ok {
				return 0, errStep
			}
			nums[n-5] = v
		default:
			return 0, errStep
		}
	}
	if !sep(']') {
		return 0, errStep
	}
	flags := nums[4]
	want := 13
	if flags&stepCPU != 0 {
		want += 4
	}
	if flags&stepNoCache != 0 {
		want++
	}
	if n != want || flags&^(stepTimedOut|stepNoSpace|stepCPU|stepNoCache) != 0 {
		return 0, errStep
	}
	*s = summaryStep{Name: strs[0], Phase: strs[1], ExitUnknown: strs[2], Start: times[0], End: times[1], ExitCode: int(nums[0]), Peak: nums[1], KernelPeak: nums[2],
		OOMKills: int(nums[3]), TimedOut: flags&stepTimedOut != 0, NoSpace: flags&stepNoSpace != 0, AtLimit: model.Duration(nums[5]), MajorFaults: nums[6], CPUWait: model.Duration(nums[7])}
	at := 8
	if flags&stepCPU != 0 {
		s.CPU = d.cpu()
		*s.CPU = model.CPUUse{UsageNanos: nums[8], Periods: nums[9], ThrottledPeriods: nums[10], ThrottledNanos: nums[11]}
		at = 12
	}
	if flags&stepNoCache != 0 {
		if nums[at] == 0 {
			return 0, errStep // written only when not 0
		}
		s.KernelPeakNoCache = nums[at]
	}
	return i, nil
}

// Summarize is what a trial's summary row keeps of its record (and what
// a record read from its row is): its trial, outcome, cause, reason,
// times, peaks, CPU, steps without their output or command line (Show), kills without the
// process trees, the host's noise, the stall evidence, the knobs, and
// the verifier's reward, rule and tests: not the processes (Activities),
// phases, sidecars, the container's id, the host's load at start and end, nor the sampling's
// particulars. Only one trial's detail and the JSON report's records
// read more (the whole record).
func Summarize(r model.TrialResult) model.TrialResult {
	row := rowOf(r, TrialLine{})
	return row.result()
}

func rowOf(r model.TrialResult, at TrialLine) summaryRow {
	row := summaryRow{
		Line: at.Line, Off: at.Off, Len: at.Len,
		ID: r.ID, Index: r.Index, Task: r.Task, Agent: r.Agent, Ratio: r.Ratio, Repeat: r.Repeat, Seed: r.Seed, Policy: r.Policy, Profile: r.Profile,
		Experiment: r.Experiment, Outcome: r.Outcome, Cause: r.Cause, Reason: r.Reason, TaskNotRun: r.TaskNotRun,
		Start: r.Start, End: r.End, Peak: r.PeakWorkingSetBytes, KernelPeak: r.KernelPeakBytes, KernelPeakNC: r.KernelPeakNoCacheBytes, StateOOMKilled: r.StateOOMKilled,
		KilledInStep: r.KilledInStep, SampleSource: r.SampleSource, Noise: r.Noise, Stall: r.Stall, Reward: r.Reward, Verdict: r.Verdict, Tests: r.Tests,
		CPU: r.CPU, Knobs: r.Knobs, Imported: r.Imported, Replay: r.Replay,
	}
	for _, s := range r.Steps {
		row.Steps = append(row.Steps, summaryStep{Name: s.Name, Phase: s.Phase, ExitUnknown: s.ExitUnknown, Start: stepTimeOf(s.Start, r.Start), End: stepTimeOf(s.End, r.Start), ExitCode: s.ExitCode,
			Peak: s.PeakWorkingSetBytes, KernelPeak: s.KernelPeakBytes, KernelPeakNoCache: s.KernelPeakNoCacheBytes, OOMKills: s.OOMKills, TimedOut: s.TimedOut, AtLimit: s.AtLimit, MajorFaults: s.MajorFaults, NoSpace: s.NoSpace, CPU: s.CPU, CPUWait: s.CPUWait})
	}
	for _, o := range r.OOMs {
		o.Command, o.Tree = "", nil
		row.OOMs = append(row.OOMs, o)
	}
	return row
}

func (row *summaryRow) result() model.TrialResult {
	in := func(s string) string { return unique.Make(s).Value() }
	if row.interned {
		in = func(s string) string { return s }
	}
	r := model.TrialResult{
		Trial:      model.Trial{ID: row.ID, Index: row.Index, Task: in(row.Task), Agent: in(row.Agent), Ratio: row.Ratio, Repeat: row.Repeat, Seed: row.Seed, Policy: row.Policy, Profile: in(row.Profile)},
		Experiment: in(row.Experiment), Outcome: row.Outcome, Cause: row.Cause, Reason: in(row.Reason), TaskNotRun: row.TaskNotRun,
		Start: row.Start, End: row.End, PeakWorkingSetBytes: row.Peak, KernelPeakBytes: row.KernelPeak, KernelPeakNoCacheBytes: row.KernelPeakNC, StateOOMKilled: row.StateOOMKilled,
		KilledInStep: in(row.KilledInStep), SampleSource: in(row.SampleSource), Noise: row.Noise, Stall: row.Stall, Reward: row.Reward, Verdict: in(row.Verdict), Tests: row.Tests,
		OOMs: row.OOMs, CPU: row.CPU, Knobs: row.Knobs, Imported: row.Imported, Replay: row.Replay,
	}
	if len(row.Steps) > 0 {
		r.Steps = make([]model.StepResult, len(row.Steps))
		for i, s := range row.Steps {
			r.Steps[i] = model.StepResult{Name: in(s.Name), Phase: in(s.Phase), Start: s.Start.at(row.Start), End: s.End.at(row.Start), ExitCode: s.ExitCode, ExitUnknown: s.ExitUnknown,
				PeakWorkingSetBytes: s.Peak, KernelPeakBytes: s.KernelPeak, KernelPeakNoCacheBytes: s.KernelPeakNoCache, OOMKills: s.OOMKills, TimedOut: s.TimedOut, AtLimit: s.AtLimit, MajorFaults: s.MajorFaults, NoSpace: s.NoSpace, CPU: s.CPU, CPUWait: s.CPUWait}
		}
	}
	return r
}

// appendSummary writes the row of the record just appended (its bytes,
// at at) and syncs it. The row is made from the record as a reader reads
// it back, not from the result in memory: time.Now's monotonic reading
// and zone do not survive the record's JSON, and a row made from them
// (steps' times as text, not offsets) is not its record's row to
// readSummary, which then never trusts the summary. A row that cannot be
// written leaves no summary at all (the file is removed, and no more rows
// are written): readers then read the records, and the next Open builds
// it again.
func (e *Experiment) appendSummary(record []byte, at TrialLine) {
	if e.summary == nil {
		return
	}
	var r model.TrialResult
	if err := json.Unmarshal(withoutOutput(bytes.Clone(record)), &r); err != nil {
		e.dropSummary()
		return
	}
	shrink(&r)
	row := rowOf(r, at)
	if e.summaryRows == 0 {
		row.V = summaryVersion
	}
	b, err := json.Marshal(row)
	if err == nil {
		_, err = e.summary.Write(sealRow(b, recordSum(record)))
	}
	if err == nil {
		err = e.summary.Sync()
	}
	if err != nil {
		e.dropSummary()
		return
	}
	e.summaryRows++
}

func (e *Experiment) dropSummary() {
	if e.summary != nil {
		e.summary.Close()
		e.summary = nil
	}
	_ = os.Remove(filepath.Join(e.Dir, SummaryFile))
}

// openSummary opens the summary to append to, after trials.jsonl's torn
// line (if any) was cut: a summary that does not agree with the records
// (none, written before there was one, torn, shorter, or older than a
// change to the records) is built again from them.
func (e *Experiment) openSummary() {
	path := filepath.Join(e.Dir, SummaryFile)
	n := 0
	last, err := readSummaryRows(e.Dir, func(*summaryRow) { n++ })
	if err != nil {
		var rows []summaryRow
		rows, err = rebuildSummary(e.Dir)
		if err != nil {
			_ = os.Remove(path)
			return // readers read the records; no rows are added
		}
		n = len(rows)
		if n > 0 {
			last = rows[n-1]
		}
	}
	f, err := appendAt(e.dirf, SummaryFile)
	if err != nil {
		_ = unlinkAt(e.dirf, SummaryFile)
		return
	}
	e.summary, e.summaryRows = f, n
	if n > 0 {
		e.nextLine = last.Line + 1
	}
}

// rebuildSummary writes the summary of the records as they are
// (atomically: a temporary file, synced and renamed).
func rebuildSummary(dir string) ([]summaryRow, error) {
	results, lines, torn, err := readTrialLines(dir, true, nil)
	if errors.Is(err, os.ErrNotExist) {
		results, lines, err = nil, nil, nil
	}
	if err != nil {
		return nil, err
	}
	if torn {
		return nil, errors.New("torn last record")
	}
	sums := make([]uint32, 0, len(lines))
	if err := CopyTrialLines(dir, lines, func(raw []byte) error { sums = append(sums, recordSum(raw)); return nil }); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	rows := make([]summaryRow, len(results))
	for i, r := range results {
		rows[i] = rowOf(r, lines[i])
		if i == 0 {
			rows[i].V = summaryVersion
		}
		b, err := json.Marshal(rows[i])
		if err != nil {
			return nil, err
		}
		buf.Write(sealRow(b, sums[i]))
	}
	if err := replaceFile(filepath.Join(dir, SummaryFile), buf.Bytes()); err != nil {
		return nil, err
	}
	return rows, nil
}

// errSummary says why a summary is not trusted.
type errSummary string

func (e errSummary) Error() string { return "summary not trusted: " + string(e) }

// readSummary reads the summary rows when they can be trusted to be
// trials.jsonl's (readSummaryRows), every one kept.
func readSummary(dir string) ([]summaryRow, error) {
	var rows []summaryRow
	_, err := readSummaryRows(dir, func(row *summaryRow) {
		r := *row
		r.Steps = slices.Clone(row.Steps)
		rows = append(rows, r)
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// readSummaryRows calls each with every summary row, in order (the row
// is only valid during the call), and then says whether the rows can be
// trusted to be trials.jsonl's, and why not otherwise: no summary;
// trials.jsonl changed after it (edited by hand, a record cut); a row
// that does not parse (a torn last row: a crash mid-append); rows out of
// order, or whose records do not end where trials.jsonl does (a record
// with no row: a crash between the two writes); or the first and last
// rows not matching their records as read back (a summary of other
// records). What each was given is to be dropped when it is not. last is
// the last row (zero when there is none).
func readSummaryRows(dir string, each func(*summaryRow)) (last summaryRow, err error) {
	spath, tpath := filepath.Join(dir, SummaryFile), filepath.Join(dir, TrialsFile)
	sst, err := os.Stat(spath)
	if err != nil {
		return last, err
	}
	tst, err := os.Stat(tpath)
	if err != nil {
		return last, err
	}
	if sst.ModTime().Before(tst.ModTime()) {
		return last, errSummary(TrialsFile + " changed after its summary")
	}
	f, err := openRegular(spath)
	if err != nil {
		return last, err
	}
	defer f.Close()
	n, first, last, err := parseSummary(f, tst.Size(), each)
	if err != nil {
		return summaryRow{}, err
	}
	// Read back the first and last records: the rows must be theirs.
	t, err := openRegular(tpath)
	if err != nil {
		return summaryRow{}, err
	}
	defer t.Close()
	for i, row := range []*summaryRow{&first, &last} {
		if n == 0 {
			break
		}
		r, err := readRecordAt(t, row.lineAt())
		if err != nil {
			return summaryRow{}, errSummary(err.Error())
		}
		want, _ := json.Marshal(rowOf(r, row.lineAt()))
		got := *row
		got.V = 0
		have, _ := json.Marshal(got)
		if !bytes.Equal(want, have) {
			return summaryRow{}, errSummary(fmt.Sprintf("row %d is not the record at %s:%d", []int{1, n}[i], TrialsFile, row.Line))
		}
	}
	return last, nil
}

func (row *summaryRow) lineAt() TrialLine {
	return TrialLine{Off: row.Off, Len: row.Len, Line: row.Line}
}

// parseSummary parses rows, calling each with every one (valid only
// during the call), and checks them against a trials.jsonl of size
// bytes: in order, each record after the one before, the last ending
// where the file does, each line ending in a newline. It returns how many
// there are and the first and last. A row is read by rowDecoder, or by
// encoding/json where that gives up.
func parseSummary(r io.Reader, size int64, each func(*summaryRow)) (n int, first, last summaryRow, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	dec := newRowDecoder()
	var end int64
	var row summaryRow
	line := 0
	for ; ; n++ {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return 0, first, last, errSummary("a row too long")
		}
		if err == io.EOF {
			if len(b) > 0 {
				return 0, first, last, errSummary("torn last row")
			}
			break
		}
		if err != nil {
			return 0, first, last, err
		}
		if dec.decode(b, &row) {
			row.interned = true
		} else {
			row = summaryRow{}
			if err := json.Unmarshal(b, &row); err != nil {
				return 0, first, last, errSummary(fmt.Sprintf("row %d: %v", n+1, err))
			}
		}
		if n == 0 && row.V != summaryVersion {
			return 0, first, last, errSummary(fmt.Sprintf("format %d, not %d", row.V, summaryVersion))
		}
		if n > 0 && row.V != 0 {
			return 0, first, last, errSummary(fmt.Sprintf("row %d: a format mark past the first row", n+1))
		}
		if row.Off < end || row.Len < 2 || row.Line <= line || row.ID == "" {
			return 0, first, last, errSummary(fmt.Sprintf("row %d: out of place", n+1))
		}
		end, line = row.Off+int64(row.Len)+1, row.Line
		if n == 0 {
			first = row
			first.Steps = slices.Clone(row.Steps)
		}
		if each != nil {
			each(&row)
		}
	}
	if end != size {
		return 0, first, last, errSummary(fmt.Sprintf("its records end at byte %d, %s at %d", end, TrialsFile, size))
	}
	if n > 0 {
		last = row
	}
	return n, first, last, nil
}

// readRecordAt reads the record at at (brief: without its steps' output).
func readRecordAt(f *os.File, at TrialLine) (model.TrialResult, error) {
	var r model.TrialResult
	b := make([]byte, at.Len+1)
	if _, err := f.ReadAt(b, at.Off); err != nil {
		return r, fmt.Errorf("%s: read the record at byte %d: %w", f.Name(), at.Off, err)
	}
	if b[at.Len] != '\n' || b[0] != '{' {
		return r, fmt.Errorf("%s:%d: no record at byte %d", f.Name(), at.Line, at.Off)
	}
	if err := json.Unmarshal(withoutOutput(b[:at.Len]), &r); err != nil {
		return r, fmt.Errorf("%s:%d: %v", f.Name(), at.Line, err)
	}
	shrink(&r)
	return r, nil
}

// ReadRecord reads the one record at at (a place ReadTrialsSummary
// gave), without its steps' output: one trial's detail.
func ReadRecord(dir string, at TrialLine) (model.TrialResult, error) {
	f, err := openRegular(filepath.Join(dir, TrialsFile))
	if err != nil {
		return model.TrialResult{}, err
	}
	defer f.Close()
	return readRecordAt(f, at)
}

// ReadTrialsSummary reads every trial as its summary row has it
// (Summarize) with its record's place, by id as ReadTrials counts them,
// refusing the first check (when not nil) says is not the experiment's,
// naming trials.jsonl and the record's line. When the summary cannot be
// trusted (readSummary) the records are read instead (ReadTrialsBrief,
// each then summarised), so what it returns is the same either way; torn
// says trials.jsonl ends in a torn line.
func ReadTrialsSummary(dir string, check func(model.TrialResult) error) (results []model.TrialResult, lines []TrialLine, torn bool, err error) {
	return readTrialsSummary(dir, check, false)
}

// readTrialsSummary is ReadTrialsSummary, or when sealed ReadTrialsSealed.
func readTrialsSummary(dir string, check func(model.TrialResult) error, sealed bool) (results []model.TrialResult, lines []TrialLine, torn bool, err error) {
	// Room for about as many trials as there are rows (a row is 700-1,100
	// bytes), not doubled and copied as they come; each row is made a
	// trial as it is read, not all held as rows first.
	hint := 0
	if st, err := os.Stat(filepath.Join(dir, SummaryFile)); err == nil {
		hint = int(min(st.Size()/700, 1<<22))
	}
	results, lines = make([]model.TrialResult, 0, hint), make([]TrialLine, 0, hint)
	_, serr := readSummaryRows(dir, func(row *summaryRow) {
		results, lines = append(results, row.result()), append(lines, row.lineAt())
	})
	if serr == nil && sealed {
		serr = verifySeals(dir, lines)
	}
	if serr != nil {
		results, lines, torn, err = readTrialsAt(dir, true, check)
		for i := range results {
			results[i] = Summarize(results[i])
		}
		return results, lines, torn, err
	}
	if check != nil {
		path := filepath.Join(dir, TrialsFile)
		for i := range results {
			if err := check(results[i]); err != nil {
				return nil, nil, false, fmt.Errorf("%s:%d: trial %s: %v", path, lines[i].Line, results[i].ID, err)
			}
		}
	}
	results, lines = latestByID(results, lines)
	if err := oneRecordPerRepeat(dir, results, lines); err != nil {
		return nil, nil, false, err
	}
	return results, lines, false, nil
}
