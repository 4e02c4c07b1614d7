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
const summaryVersion = 1

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
	ContainerID    string               `json:"cid,omitempty"`
	Start          time.Time            `json:"s"`
	End            time.Time            `json:"e"`
	Peak           int64                `json:"pk,omitempty"`
	KernelPeak     int64                `json:"kp,omitempty"`
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
}

type summaryStep struct {
	Name        string         `json:"n"`
	Show        string         `json:"sh,omitempty"`
	Phase       string         `json:"ph,omitempty"`
	Start       time.Time      `json:"s"`
	End         time.Time      `json:"e"`
	ExitCode    int            `json:"x,omitempty"`
	ExitUnknown string         `json:"xu,omitempty"`
	Peak        int64          `json:"pk,omitempty"`
	KernelPeak  int64          `json:"kp,omitempty"`
	OOMKills    int            `json:"k,omitempty"`
	TimedOut    bool           `json:"to,omitempty"`
	AtLimit     model.Duration `json:"al,omitempty"`
	MajorFaults int64          `json:"mf,omitempty"`
	NoSpace     bool           `json:"ns,omitempty"`
	CPU         *model.CPUUse  `json:"cpu,omitempty"`
	CPUWait     model.Duration `json:"cw,omitempty"`
}

// Summarize is what a trial's summary row keeps of its record (and what
// a record read from its row is): its trial, outcome, cause, reason,
// times, peaks, CPU, steps without their output, kills without the
// process trees, the host's noise, the stall evidence, the knobs, and
// the verifier's reward, rule and tests: not the processes (Activities),
// phases, sidecars, the host's load at start and end, nor the sampling's
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
		Experiment: r.Experiment, Outcome: r.Outcome, Cause: r.Cause, Reason: r.Reason, TaskNotRun: r.TaskNotRun, ContainerID: r.ContainerID,
		Start: r.Start, End: r.End, Peak: r.PeakWorkingSetBytes, KernelPeak: r.KernelPeakBytes, StateOOMKilled: r.StateOOMKilled,
		KilledInStep: r.KilledInStep, SampleSource: r.SampleSource, Noise: r.Noise, Stall: r.Stall, Reward: r.Reward, Verdict: r.Verdict, Tests: r.Tests,
		CPU: r.CPU, Knobs: r.Knobs, Imported: r.Imported,
	}
	for _, s := range r.Steps {
		row.Steps = append(row.Steps, summaryStep{Name: s.Name, Show: s.Show, Phase: s.Phase, Start: s.Start, End: s.End, ExitCode: s.ExitCode, ExitUnknown: s.ExitUnknown,
			Peak: s.PeakWorkingSetBytes, KernelPeak: s.KernelPeakBytes, OOMKills: s.OOMKills, TimedOut: s.TimedOut, AtLimit: s.AtLimit, MajorFaults: s.MajorFaults, NoSpace: s.NoSpace, CPU: s.CPU, CPUWait: s.CPUWait})
	}
	for _, o := range r.OOMs {
		o.Command, o.Tree = "", nil
		row.OOMs = append(row.OOMs, o)
	}
	return row
}

func (row *summaryRow) result() model.TrialResult {
	in := func(s string) string { return unique.Make(s).Value() }
	r := model.TrialResult{
		Trial:      model.Trial{ID: row.ID, Index: row.Index, Task: in(row.Task), Agent: in(row.Agent), Ratio: row.Ratio, Repeat: row.Repeat, Seed: row.Seed, Policy: row.Policy, Profile: in(row.Profile)},
		Experiment: in(row.Experiment), Outcome: row.Outcome, Cause: row.Cause, Reason: in(row.Reason), TaskNotRun: row.TaskNotRun, ContainerID: row.ContainerID,
		Start: row.Start, End: row.End, PeakWorkingSetBytes: row.Peak, KernelPeakBytes: row.KernelPeak, StateOOMKilled: row.StateOOMKilled,
		KilledInStep: in(row.KilledInStep), SampleSource: in(row.SampleSource), Noise: row.Noise, Stall: row.Stall, Reward: row.Reward, Verdict: in(row.Verdict), Tests: row.Tests,
		OOMs: row.OOMs, CPU: row.CPU, Knobs: row.Knobs, Imported: row.Imported,
	}
	if len(row.Steps) > 0 {
		r.Steps = make([]model.StepResult, len(row.Steps))
		for i, s := range row.Steps {
			r.Steps[i] = model.StepResult{Name: in(s.Name), Show: in(s.Show), Phase: in(s.Phase), Start: s.Start, End: s.End, ExitCode: s.ExitCode, ExitUnknown: s.ExitUnknown,
				PeakWorkingSetBytes: s.Peak, KernelPeakBytes: s.KernelPeak, OOMKills: s.OOMKills, TimedOut: s.TimedOut, AtLimit: s.AtLimit, MajorFaults: s.MajorFaults, NoSpace: s.NoSpace, CPU: s.CPU, CPUWait: s.CPUWait}
		}
	}
	return r
}

// appendSummary writes the row of the record just appended at at and
// syncs it. A row that cannot be written leaves no summary at all (the
// file is removed, and no more rows are written): readers then read the
// records, and the next Open builds it again.
func (e *Experiment) appendSummary(r model.TrialResult, at TrialLine) {
	if e.summary == nil {
		return
	}
	row := rowOf(r, at)
	if e.summaryRows == 0 {
		row.V = summaryVersion
	}
	b, err := json.Marshal(row)
	if err == nil {
		_, err = e.summary.Write(append(b, '\n'))
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
	rows, err := readSummary(e.Dir)
	if err != nil {
		rows, err = rebuildSummary(e.Dir)
		if err != nil {
			_ = os.Remove(path)
			return // readers read the records; no rows are added
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		_ = os.Remove(path)
		return
	}
	e.summary, e.summaryRows = f, len(rows)
	if len(rows) > 0 {
		e.nextLine = rows[len(rows)-1].Line + 1
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
		buf.Write(b)
		buf.WriteByte('\n')
	}
	tmp := filepath.Join(dir, SummaryFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, SummaryFile))
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return rows, nil
}

// errSummary says why a summary is not trusted.
type errSummary string

func (e errSummary) Error() string { return "summary not trusted: " + string(e) }

// readSummary reads the summary rows when they can be trusted to be
// trials.jsonl's, and says why not otherwise: no summary; trials.jsonl
// changed after it (edited by hand, a record cut); a row that does not
// parse (a torn last row: a crash mid-append); rows out of order, or
// whose records do not end where trials.jsonl does (a record with no row:
// a crash between the two writes); or the first and last rows not
// matching their records as read back (a summary of other records).
func readSummary(dir string) ([]summaryRow, error) {
	spath, tpath := filepath.Join(dir, SummaryFile), filepath.Join(dir, TrialsFile)
	sst, err := os.Stat(spath)
	if err != nil {
		return nil, err
	}
	tst, err := os.Stat(tpath)
	if err != nil {
		return nil, err
	}
	if sst.ModTime().Before(tst.ModTime()) {
		return nil, errSummary(TrialsFile + " changed after its summary")
	}
	f, err := os.Open(spath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := parseSummary(f, tst.Size())
	if err != nil {
		return nil, err
	}
	// Read back the first and last records: the rows must be theirs.
	t, err := os.Open(tpath)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	for _, i := range []int{0, len(rows) - 1} {
		if len(rows) == 0 {
			break
		}
		r, err := readRecordAt(t, rows[i].lineAt())
		if err != nil {
			return nil, errSummary(err.Error())
		}
		want, _ := json.Marshal(rowOf(r, rows[i].lineAt()))
		got := rows[i]
		got.V = 0
		have, _ := json.Marshal(got)
		if !bytes.Equal(want, have) {
			return nil, errSummary(fmt.Sprintf("row %d is not the record at %s:%d", i+1, TrialsFile, rows[i].Line))
		}
	}
	return rows, nil
}

func (row *summaryRow) lineAt() TrialLine {
	return TrialLine{Off: row.Off, Len: row.Len, Line: row.Line}
}

// parseSummary parses rows and checks them against a trials.jsonl of
// size bytes: in order, each record after the one before, the last
// ending where the file does, each line ending in a newline.
func parseSummary(r io.Reader, size int64) ([]summaryRow, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var rows []summaryRow
	var end int64
	line := 0
	for {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, errSummary("a row too long")
		}
		if err == io.EOF {
			if len(b) > 0 {
				return nil, errSummary("torn last row")
			}
			break
		}
		if err != nil {
			return nil, err
		}
		var row summaryRow
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, errSummary(fmt.Sprintf("row %d: %v", len(rows)+1, err))
		}
		if len(rows) == 0 && row.V != summaryVersion {
			return nil, errSummary(fmt.Sprintf("format %d, not %d", row.V, summaryVersion))
		}
		if len(rows) > 0 && row.V != 0 {
			return nil, errSummary(fmt.Sprintf("row %d: a format mark past the first row", len(rows)+1))
		}
		if row.Off < end || row.Len < 2 || row.Line <= line || row.ID == "" {
			return nil, errSummary(fmt.Sprintf("row %d: out of place", len(rows)+1))
		}
		end, line = row.Off+int64(row.Len)+1, row.Line
		rows = append(rows, row)
	}
	if end != size {
		return nil, errSummary(fmt.Sprintf("its records end at byte %d, %s at %d", end, TrialsFile, size))
	}
	return rows, nil
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
	f, err := os.Open(filepath.Join(dir, TrialsFile))
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
	rows, serr := readSummary(dir)
	if serr != nil {
		results, lines, torn, err = readTrialsAt(dir, true, check)
		for i := range results {
			results[i] = Summarize(results[i])
		}
		return results, lines, torn, err
	}
	path := filepath.Join(dir, TrialsFile)
	results, lines = make([]model.TrialResult, len(rows)), make([]TrialLine, len(rows))
	for i := range rows {
		results[i], lines[i] = rows[i].result(), rows[i].lineAt()
		if check != nil {
			if err := check(results[i]); err != nil {
				return nil, nil, false, fmt.Errorf("%s:%d: trial %s: %v", path, rows[i].Line, rows[i].ID, err)
			}
		}
	}
	results, lines = latestByID(results, lines)
	return results, lines, false, nil
}
