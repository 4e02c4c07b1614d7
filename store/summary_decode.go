package store

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// rowDecoder reads a summary row as json.Marshal writes it, without
// encoding/json's reflection and its validating pass over the row first
// (two thirds of a summary's read went there): the row's keys by name,
// its numbers and plain strings as they stand, the ratio's text parsed
// once per distinct text, the steps by their own parser, and the rare
// members (kills, noise, stall, tests, CPU, knobs, import, reward) by
// encoding/json. Whatever it does not expect (a key spelt otherwise or
// twice, null, an escape where the row has none, a number of another
// form, a nesting it does not know) makes it give up, and encoding/json
// reads the row: what it accepts it reads exactly as encoding/json does
// (FuzzSummaryRow checks both ways).
type rowDecoder struct {
	ratios map[string]model.Ratio
	// strs holds the strings rows repeat (tasks, agents, reasons, step
	// names), one copy each, so a row's read allocates none of them.
	strs map[string]string
	// cpus are steps' CPU figures to come, allocated a slab at a time.
	cpus []model.CPUUse
}

// cpu is a new CPUUse (from the slab, with a decoder).
func (d *rowDecoder) cpu() *model.CPUUse {
	if d == nil {
		return new(model.CPUUse)
	}
	if len(d.cpus) == 0 {
		d.cpus = make([]model.CPUUse, 256)
	}
	c := &d.cpus[0]
	d.cpus = d.cpus[1:]
	return c
}

func newRowDecoder() *rowDecoder {
	return &rowDecoder{ratios: map[string]model.Ratio{}, strs: map[string]string{}}
}

// decode reads b (one row, its newline included or not) into row, which
// it zeroes first, and says whether it could; when it cannot, the row is
// encoding/json's to read (or refuse). row's steps' room is reused.
func (d *rowDecoder) decode(b []byte, row *summaryRow) bool {
	steps := row.Steps[:0]
	*row = summaryRow{}
	s := scan{b: b}
	return s.object(func(key []byte) (uint64, bool) { return d.member(&s, key, row, &steps) }) && s.end()
}

// object reads one JSON object whose keys are plain strings, member
// reading each key's value (the key's own bit says it, so that a key seen
// twice is given up on, as are anything else and a member member refuses).
func (s *scan) object(member func(key []byte) (bit uint64, ok bool)) bool {
	if !s.is('{') {
		return false
	}
	if s.is('}') {
		return true
	}
	var seen uint64
	for {
		key, plain, ok := s.str()
		if !ok || !plain || !s.is(':') {
			return false
		}
		bit, ok := member(key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if !s.is(',') {
			return s.is('}')
		}
	}
}

// member reads the value of the row's member key into row; bit is the
// member's own (a key seen twice is given up on).
func (d *rowDecoder) member(s *scan, key []byte, row *summaryRow, steps *[]summaryStep) (bit uint64, ok bool) {
	switch string(key) {
	case "v":
		row.V, ok = s.int()
		return 1 << 0, ok
	case "l":
		row.Line, ok = s.int()
		return 1 << 1, ok
	case "o":
		row.Off, ok = s.int64()
		return 1 << 2, ok
	case "n":
		row.Len, ok = s.int()
		return 1 << 3, ok
	case "id":
		row.ID, ok = d.text(s, ownText)
		return 1 << 4, ok
	case "ix":
		row.Index, ok = s.int()
		return 1 << 5, ok
	case "t":
		row.Task, ok = d.text(s, sharedText)
		return 1 << 6, ok
	case "a":
		row.Agent, ok = d.text(s, sharedText)
		return 1 << 7, ok
	case "r":
		row.Ratio, ok = d.ratio(s)
		return 1 << 8, ok
	case "rp":
		row.Repeat, ok = s.int()
		return 1 << 9, ok
	case "sd":
		row.Seed, ok = s.uint64()
		return 1 << 10, ok
	case "p":
		return 1 << 11, d.policy(s, &row.Policy)
	case "pf":
		row.Profile, ok = d.text(s, sharedText)
		return 1 << 12, ok
	case "x":
		row.Experiment, ok = d.text(s, sharedText)
		return 1 << 13, ok
	case "oc":
		var v string
		v, ok = d.text(s, sharedText)
		row.Outcome = model.Outcome(v)
		return 1 << 14, ok
	case "c":
		var v string
		v, ok = d.text(s, sharedText)
		row.Cause = model.Cause(v)
		return 1 << 15, ok
	case "why":
		row.Reason, ok = d.text(s, sharedText)
		return 1 << 16, ok
	case "nr":
		row.TaskNotRun, ok = s.bool()
		return 1 << 17, ok
	case "s":
		row.Start, ok = s.time()
		return 1 << 18, ok
	case "e":
		row.End, ok = s.time()
		return 1 << 19, ok
	case "pk":
		row.Peak, ok = s.int64()
		return 1 << 20, ok
	case "kp":
		row.KernelPeak, ok = s.int64()
		return 1 << 21, ok
	case "kpn":
		row.KernelPeakNC, ok = s.int64()
		return 1 << 22, ok
	case "sok":
		row.StateOOMKilled, ok = s.bool()
		return 1 << 23, ok
	case "kis":
		row.KilledInStep, ok = d.text(s, sharedText)
		return 1 << 24, ok
	case "src":
		row.SampleSource, ok = d.text(s, sharedText)
		return 1 << 25, ok
	case "st":
		row.Steps, ok = d.steps(s, *steps)
		*steps = row.Steps
		return 1 << 26, ok
	case "oom":
		row.OOMs, ok = d.ooms(s)
		return 1 << 27, ok
	case "nz":
		return 1 << 28, s.json(&row.Noise)
	case "sl":
		return 1 << 29, s.json(&row.Stall)
	case "rw":
		return 1 << 30, s.json(&row.Reward)
	case "vd":
		row.Verdict, ok = d.text(s, sharedText)
		return 1 << 31, ok
	case "ts":
		return 1 << 32, s.json(&row.Tests)
	case "cpu":
		return 1 << 33, s.json(&row.CPU)
	case "kn":
		return 1 << 34, s.json(&row.Knobs)
	case "im":
		return 1 << 35, s.json(&row.Imported)
	case "ry":
		return 1 << 37, s.json(&row.Replay)
	case "h":
		// The row's seal (seal.go), checked by verifySeals for a
		// report: no field of the row, as encoding/json reads it.
		return 1 << 36, s.skip(0)
	}
	return 0, false
}

// policy reads a ResourcePolicy's object (its own JSON keys).
func (d *rowDecoder) policy(s *scan, p *model.ResourcePolicy) bool {
	return s.object(func(key []byte) (bit uint64, ok bool) {
		switch string(key) {
		case "ratio":
			bit = 1 << 0
			p.Ratio, ok = d.ratio(s)
		case "guarantee_bytes":
			bit = 1 << 1
			p.GuaranteeBytes, ok = s.int64()
		case "hard_limit_bytes":
			bit = 1 << 2
			p.HardLimitBytes, ok = s.int64()
		case "spec_limit_bytes":
			bit = 1 << 3
			p.SpecLimitBytes, ok = s.int64()
		case "guarantee_cpus":
			bit = 1 << 4
			p.GuaranteeCPUs, ok = s.float64()
		case "limit_cpus":
			bit = 1 << 5
			p.LimitCPUs, ok = s.float64()
		case "cpu_limit_capped":
			bit = 1 << 6
			p.CPULimitCapped, ok = s.bool()
		case "pids_limit":
			bit = 1 << 7
			p.PidsLimit, ok = s.int64()
		case "scale":
			bit = 1 << 8
			var v string
			v, ok = d.text(s, sharedText)
			p.Scale = model.Scale(v)
		default:
			return 0, false
		}
		return bit, ok
	})
}

// steps reads the row's steps into room's space (summaryStep.UnmarshalJSON
// each, as encoding/json calls it: on the element's bytes, checked first).
func (d *rowDecoder) steps(s *scan, room []summaryStep) ([]summaryStep, bool) {
	if !s.is('[') {
		return nil, false
	}
	out := room[:0]
	if out == nil {
		out = make([]summaryStep, 0, 4)
	}
	if s.is(']') {
		return out, true // encoding/json's empty, not nil, slice
	}
	for {
		s.ws()
		var st summaryStep
		n, err := st.parse(s.b[s.i:], d)
		if err != nil {
			return nil, false
		}
		s.i += n
		out = append(out, st)
		if s.is(',') {
			continue
		}
		return out, s.is(']')
	}
}

// ooms reads the row's kills (model.OOMEvent's own keys).
func (d *rowDecoder) ooms(s *scan) ([]model.OOMEvent, bool) {
	if !s.is('[') {
		return nil, false
	}
	out := []model.OOMEvent{}
	if s.is(']') {
		return out, true
	}
	for {
		var o model.OOMEvent
		if !s.object(func(key []byte) (bit uint64, ok bool) {
			switch string(key) {
			case "at":
				bit = 1 << 0
				o.At, ok = s.time()
			case "step":
				bit = 1 << 1
				o.Step, ok = d.text(s, sharedText)
			case "source":
				bit = 1 << 2
				o.Source, ok = d.text(s, sharedText)
			case "working_set_bytes":
				bit = 1 << 3
				o.WorkingSetBytes, ok = s.int64()
			case "process":
				bit = 1 << 4
				o.Process, ok = d.text(s, sharedText)
			case "pid":
				bit = 1 << 5
				o.PID, ok = s.int()
			case "rss_bytes":
				bit = 1 << 6
				o.RSSBytes, ok = s.int64()
			case "command":
				bit = 1 << 7
				o.Command, ok = d.text(s, ownText)
			default:
				return 0, false
			}
			return bit, ok
		}) {
			return nil, false
		}
		out = append(out, o)
		if s.is(',') {
			continue
		}
		return out, s.is(']')
	}
}

// ratio reads a ratio's text, parsed once per distinct text.
func (d *rowDecoder) ratio(s *scan) (model.Ratio, bool) {
	tok, plain, ok := s.str()
	if !ok || !plain {
		return model.Ratio{}, false
	}
	if r, ok := d.ratios[string(tok)]; ok {
		return r, true
	}
	var r model.Ratio
	if r.UnmarshalText(tok) != nil {
		return model.Ratio{}, false
	}
	d.ratios[string(tok)] = r
	return r, true
}

// textKind says whether rows repeat a string (a task, an agent, a reason:
// interned, one copy for them all) or it is a row's own (an ID, a command).
type textKind bool

const (
	ownText    textKind = false
	sharedText textKind = true
)

// text reads a string of the kind given.
func (d *rowDecoder) text(s *scan, kind textKind) (string, bool) {
	tok, plain, ok := s.str()
	if !ok {
		return "", false
	}
	if !plain {
		var v string
		if json.Unmarshal(tok, &v) != nil {
			return "", false
		}
		return v, true
	}
	if kind == sharedText {
		return d.intern(tok), true
	}
	return string(tok), true
}

func (d *rowDecoder) intern(b []byte) string {
	if v, ok := d.strs[string(b)]; ok {
		return v
	}
	if len(d.strs) > 1<<16 {
		return string(b) // not one rows repeat, after all
	}
	v := string(b)
	d.strs[v] = v
	return v
}

// scan reads JSON tokens from b at i.
type scan struct {
	b []byte
	i int
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// is skips white space, then c if it is next, and says whether it was.
func (s *scan) is(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end says whether nothing but white space is left.
func (s *scan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// str reads a string: its bytes when they stand for themselves (plain:
// printable ASCII, no escape), else the whole token, quotes and all, for
// encoding/json to read; ok is false when no whole string is next.
func (s *scan) str() (tok []byte, plain, ok bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	plain = true
	j := s.i + 1
	for ; j < len(s.b) && s.b[j] != '"'; j++ {
		switch c := s.b[j]; {
		case c == '\\':
			plain = false
			j++
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	if j >= len(s.b) {
		return nil, false, false
	}
	if plain {
		tok = s.b[s.i+1 : j]
	} else {
		tok = s.b[s.i : j+1]
	}
	s.i = j + 1
	return tok, plain, true
}

// number reads a number as JSON spells one; integer says it has no
// fraction or exponent.
func (s *scan) number() (tok []byte, integer, ok bool) {
	s.ws()
	b, j := s.b, s.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return nil, false, false
	}
	integer = true
	if j < len(b) && b[j] == '.' {
		integer = false
		j++
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		integer = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false, false
		}
	}
	tok, s.i = b[s.i:j], j
	return tok, integer, true
}

func (s *scan) int64() (int64, bool) {
	tok, integer, ok := s.number()
	if !ok || !integer {
		return 0, false
	}
	return parseInt(tok)
}

// parseInt is strconv.ParseInt of an integer JSON spells, without the
// string.
func parseInt(tok []byte) (int64, bool) {
	if n := len(tok); n > 0 && n < 19 { // cannot overflow
		neg, v := tok[0] == '-', int64(0)
		if neg {
			tok = tok[1:]
		}
		for _, c := range tok {
			v = v*10 + int64(c-'0')
		}
		if neg {
			v = -v
		}
		return v, len(tok) > 0
	}
	v, err := strconv.ParseInt(string(tok), 10, 64)
	return v, err == nil
}

func (s *scan) int() (int, bool) {
	v, ok := s.int64()
	return int(v), ok && int64(int(v)) == v
}

func (s *scan) uint64() (uint64, bool) {
	tok, integer, ok := s.number()
	if !ok || !integer || tok[0] == '-' {
		return 0, false
	}
	if len(tok) < 20 { // cannot overflow
		v := uint64(0)
		for _, c := range tok {
			v = v*10 + uint64(c-'0')
		}
		return v, true
	}
	v, err := strconv.ParseUint(string(tok), 10, 64)
	return v, err == nil
}

func (s *scan) float64() (float64, bool) {
	tok, _, ok := s.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	return v, err == nil
}

func (s *scan) bool() (bool, bool) {
	s.ws()
	switch {
	case s.lit("true"):
		return true, true
	case s.lit("false"):
		return false, true
	}
	return false, false
}

func (s *scan) lit(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// time reads a time as encoding/json does: time.Time's UnmarshalJSON on
// the quoted text.
func (s *scan) time() (time.Time, bool) {
	s.ws()
	from := s.i
	_, plain, ok := s.str()
	var t time.Time
	if !ok || !plain || t.UnmarshalJSON(s.b[from:s.i]) != nil {
		return time.Time{}, false
	}
	return t, true
}

// json reads the next value with encoding/json into v.
func (s *scan) json(v any) bool {
	s.ws()
	from := s.i
	return s.skip(0) && json.Unmarshal(s.b[from:s.i], v) == nil
}

// skip passes over one value, checking it is JSON (as encoding/json's
// own check would: a value skip accepts, it accepts).
func (s *scan) skip(depth int) bool {
	s.ws()
	if s.i >= len(s.b) || depth > 100 {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.checkedString()
	case c == '{' || c == '[':
		s.i++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if s.is(end) {
			return true
		}
		for {
			if c == '{' && !(s.checkedKey() && s.is(':')) {
				return false
			}
			if !s.skip(depth + 1) {
				return false
			}
			if s.is(',') {
				continue
			}
			return s.is(end)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, ok := s.number()
		return ok
	}
	return s.lit("true") || s.lit("false") || s.lit("null")
}

func (s *scan) checkedKey() bool {
	s.ws()
	return s.i < len(s.b) && s.b[s.i] == '"' && s.checkedString()
}

// checkedString passes over a string at i, refusing what JSON does: a
// control byte, an escape it does not know. (Bytes that are not UTF-8
// it takes, as encoding/json does.)
func (s *scan) checkedString() bool {
	b := s.b
	for j := s.i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(b) {
				return false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return false
				}
				for _, h := range b[j+1 : j+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}
