package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// MaxRewardFileBytes is the most headroom reads of a verifier's reward
// file. Harbor reads the bind mount's file whole (Python's read_text, no
// bound), so a reward.txt of a 1 and 2 MB of newlines passes there; what
// is read is then parsed only as Harbor parses it (Python's float() of the
// text, or json). 64 MiB is the bound of every other task file headroom
// reads (confine.ReadFile's recordings): far above any reward a verifier
// writes, and the step driver streams it without holding it.
const MaxRewardFileBytes int64 = 64 << 20

// MaxRewardContentBytes is the most of a reward file ParseRewards parses:
// reward.txt's text without the spaces around it, reward.json's without
// the spaces between its tokens (what is in its strings counts). Harbor
// parses any; here a 64 MiB reward.json of 6.2 million keys took 1 GB of
// headroom's memory and over a minute. 1 MiB was the bound of the whole
// file before, so no reward read then is refused now.
const MaxRewardContentBytes = 1 << 20

// RewardBuffer keeps, in at most a few MiB whatever is written to it,
// what ParseRewards reads of a reward file: the file itself when it is of
// at most MaxRewardContentBytes, else the file with each run of spaces
// (JSON's: space, tab, newline, return) outside a double-quoted string
// as one space, which reads the same (Python's float() and json.loads
// take a run of spaces as one). A 60 MB reward.txt kept whole took 408 MB
// of headroom's memory to read and parse; squeezed, a few.
type RewardBuffer struct {
	raw, squeezed []byte
	n             int64
	str           jsonString
	spaced, over  bool
}

func (b *RewardBuffer) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if room := MaxRewardContentBytes - len(b.raw); room > 0 {
		b.raw = append(b.raw, p[:min(room, len(p))]...)
	}
	if b.over {
		return len(p), nil
	}
	for _, c := range p {
		switch {
		case b.str.part(c):
			b.spaced = false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if b.spaced {
				continue
			}
			b.spaced, c = true, ' '
		default:
			b.spaced = false
		}
		b.squeezed = append(b.squeezed, c)
		// Of more, more than MaxRewardContentBytes is not space.
		if len(b.squeezed) > 2*MaxRewardContentBytes+1 {
			b.over, b.squeezed = true, nil
			break
		}
	}
	return len(p), nil
}

// Len is how many bytes were written.
func (b *RewardBuffer) Len() int64 { return b.n }

// Bytes is what ParseRewards is to read; the error says there is more
// than it parses.
func (b *RewardBuffer) Bytes() ([]byte, error) {
	switch {
	case b.n <= MaxRewardContentBytes:
		return b.raw, nil
	case b.over:
		return nil, fmt.Errorf("holds more than %s besides its spaces: headroom parses at most %s of a reward (Harbor parses any)", FormatBytes(MaxRewardContentBytes), FormatBytes(MaxRewardContentBytes))
	}
	return b.squeezed, nil
}

// rewardContent is how many bytes of data ParseRewards parses for a file
// of that name (MaxRewardContentBytes).
func rewardContent(name string, data []byte) int {
	if !strings.HasSuffix(name, ".json") {
		return len(bytes.TrimSpace(data))
	}
	var str jsonString
	n := 0
	for _, c := range data {
		if !str.part(c) && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue // JSON's spaces, Python's json.loads's
		}
		n++
	}
	return n
}

// ParseReward reads a verifier's reward file (Harbor's convention):
// reward.txt holds one number; reward.json a map of names to numbers, of
// which "reward" counts if present, else the smallest (every part must
// pass).
func ParseReward(name string, data []byte) (float64, error) {
	m, err := ParseRewards(name, data)
	if err != nil {
		return 0, err
	}
	return ScalarReward(m), nil
}

// ParseRewards reads a reward file as Harbor does: reward.txt's number
// is the "reward" key, read as Python's float() reads it; reward.json is
// the whole map, read as Python's json.loads reads it, each value then
// as Harbor's pydantic model takes it (true 1, false 0, a string that
// reads as a number that number). Where Python
// reads an infinity (reward.txt's "inf", reward.json's Infinity or
// 1e400), the reward is ±math.MaxFloat64: every verdict against a finite
// threshold is the same, and a record's JSON cannot hold an infinity.
// NaN, which Python reads and no threshold passes, is an error (a
// record cannot hold it either): the verdict is Harbor's, a failure.
func ParseRewards(name string, data []byte) (map[string]float64, error) {
	return parseRewards(name, data, false)
}

// ParseStepRewards reads a multi-step task's step's reward file as
// Harbor's multi-step trial takes it: as ParseRewards, except that an
// empty reward.json object is rewards with no key (Harbor's step then
// has a verifier result: min_reward, if set, stops the trial, and the
// mean counts the step with every key 0), and a NaN is a NaN, which no
// min_reward stops (Python's NaN < threshold is false) and which makes
// a mean or final reward NaN. A record cannot hold a NaN (SplitNaN).
func ParseStepRewards(name string, data []byte) (map[string]float64, error) {
	return parseRewards(name, data, true)
}

func parseRewards(name string, data []byte, step bool) (map[string]float64, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("is empty")
	}
	if n := rewardContent(name, data); n > MaxRewardContentBytes {
		return nil, fmt.Errorf("holds %s besides its spaces: headroom parses at most %s of a reward (Harbor parses any): no reward", FormatBytes(int64(n)), FormatBytes(MaxRewardContentBytes))
	}
	if strings.HasSuffix(name, ".json") {
		return parseRewardJSON(data, step)
	}
	r, err := PythonFloat(string(data))
	if step && errors.As(err, new(nanError)) {
		r, err = math.NaN(), nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]float64{"reward": r}, nil
}

// pyFloat is the grammar of Python's float() of a string, after its
// Unicode digits are made ASCII and its surrounding spaces trimmed:
// underscores only single, between digits; no hex, no base prefix.
var pyFloat = regexp.MustCompile(`^[+-]?(?:(?i:inf|infinity|nan)|(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?)$`)

// PythonFloat reads a number as Python's float(s) does (reward.txt's
// "0x1p0" is no number, "1_0" is 10, full-width "１" is 1, "inf" an
// infinity), an infinity as ±math.MaxFloat64 (ParseRewards says why);
// NaN is an error.
func PythonFloat(s string) (float64, error) {
	text := strings.TrimSpace(s)
	var b strings.Builder
	for _, c := range text {
		if d, ok := digitValue(c); ok {
			c = '0' + d
		}
		b.WriteRune(c)
	}
	ascii := b.String()
	if !pyFloat.MatchString(ascii) {
		return 0, fmt.Errorf("is not a number: %q (read as Harbor reads it, by Python's float())", firstLine(text))
	}
	if strings.EqualFold(strings.TrimLeft(ascii, "+-"), "nan") {
		return finite(math.NaN(), firstLine(text)) // ParseFloat refuses a signed NaN
	}
	r, err := strconv.ParseFloat(strings.ReplaceAll(ascii, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("is not a number: %q", firstLine(text))
	}
	return finite(r, firstLine(text))
}

// rustFloat is the grammar of Rust's f64 parse, which pydantic-core's
// float from a string uses: ASCII only, no underscores, no hex; inf,
// infinity and nan in any case.
var rustFloat = regexp.MustCompile(`^[+-]?(?:(?i:inf|infinity|nan)|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$`)

// pydanticFloat reads a reward.json string as Harbor's pydantic model
// (lax mode) reads one into a float: the text trimmed, by Rust's f64
// grammar; failing that, the untrimmed text with its single underscores
// that neither start nor end it taken out ("1_.5" is 1.5, " 1_0 " no
// number, "١" no number, though Python's float() reads both). An
// infinity and NaN as PythonFloat has them.
func pydanticFloat(s string) (float64, error) {
	text := strings.TrimSpace(s)
	if !rustFloat.MatchString(text) {
		text = s
		if strings.Contains(s, "_") && !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && !strings.Contains(s, "__") {
			text = strings.ReplaceAll(s, "_", "")
		}
		if !rustFloat.MatchString(text) {
			return 0, fmt.Errorf("is not a number: %q (read as Harbor's pydantic model reads a string)", firstLine(s))
		}
	}
	if strings.EqualFold(strings.TrimLeft(text, "+-"), "nan") {
		return finite(math.NaN(), firstLine(s))
	}
	r, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("is not a number: %q", firstLine(s))
	}
	return finite(r, firstLine(s))
}

// nanError says a reward is NaN.
type nanError struct{ said string }

func (e nanError) Error() string {
	return fmt.Sprintf("is NaN (%q), which passes no threshold, in Harbor either: no reward", e.said)
}

// finite is r with an infinity as ±math.MaxFloat64; NaN is an error
// (a nanError).
func finite(r float64, said string) (float64, error) {
	switch {
	case math.IsNaN(r):
		return 0, nanError{said}
	case math.IsInf(r, 1):
		return math.MaxFloat64, nil
	case math.IsInf(r, -1):
		return -math.MaxFloat64, nil
	}
	return r, nil
}

// digitValue is a Unicode decimal digit's value, which Python's float()
// reads as the ASCII digit: Unicode keeps each script's digits in runs
// of ten, 0 to 9.
func digitValue(c rune) (rune, bool) {
	if c < 0x80 || !unicode.Is(unicode.Nd, c) {
		return 0, false
	}
	start := c
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return (c - start) % 10, true
}

// parseRewardJSON reads reward.json as Python's json.loads: its
// NaN, Infinity and -Infinity literals too (encoding/json refuses them),
// and a number past float64's range as an infinity.
func parseRewardJSON(data []byte, step bool) (map[string]float64, error) {
	lit, err := jsonLiterals(data, step)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(lit))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("is not a JSON object of numbers: %v", err)
	}
	// Anything but whitespace after the object, as Python's json.loads
	// refuses it ("Extra data"): Harbor then has no reward. Only a valid
	// token was refused here, and `{"reward": 1}` followed by a grader's
	// "graded 1 check" passed (the eighteenth attacker's 5).
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("is not a JSON object of numbers: more after its object")
	}
	if len(raw) == 0 && !step {
		return nil, fmt.Errorf("holds no reward")
	}
	m := make(map[string]float64, len(raw))
	for k, v := range raw {
		var n json.Number
		switch v := v.(type) {
		case json.Number:
			n = v
		case bool:
			// Harbor's VerifierResult (rewards: dict[str, float | int],
			// pydantic's lax mode) reads true as 1 and false as 0.
			m[k] = 0
			if v {
				m[k] = 1
			}
			continue
		case string:
			// And a string as a number where pydantic reads one ("1",
			// "Infinity"); else its model refuses it: no reward.
			r, err := pydanticFloat(v)
			if step && errors.As(err, new(nanError)) {
				r, err = math.NaN(), nil
			}
			if err != nil {
				return nil, fmt.Errorf("%q %v", k, err)
			}
			m[k] = r
			continue
		default:
			return nil, fmt.Errorf("is not a JSON object of numbers: %q is %s", k, jsonKind(v))
		}
		r, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("is not a JSON object of numbers: %q: %v", k, err)
		}
		if m[k], err = finite(r, k); err != nil {
			return nil, fmt.Errorf("%q %v", k, err)
		}
	}
	return m, nil
}

// jsonKind names a decoded JSON value's kind as JSON does.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonLiterals writes Python's JSON literals Infinity and -Infinity,
// outside strings, as numbers past float64's range (read as infinities);
// NaN is an error, as ParseRewards says, or for a step's rewards the
// string "NaN", which the values' reading takes as NaN.
func jsonLiterals(data []byte, step bool) ([]byte, error) {
	var out []byte
	var str jsonString
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !str.part(c) {
			switch {
			case bytes.HasPrefix(data[i:], []byte("Infinity")) && !wordByte(data, i+len("Infinity")):
				out = append(out, "1e999999"...)
				i += len("Infinity") - 1
				continue
			case bytes.HasPrefix(data[i:], []byte("NaN")) && step && !wordByte(data, i+len("NaN")):
				out = append(out, `"NaN"`...)
				i += len("NaN") - 1
				continue
			case bytes.HasPrefix(data[i:], []byte("NaN")):
				return nil, fmt.Errorf("holds NaN, which passes no threshold, in Harbor either: no reward")
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// jsonString follows a JSON text a byte at a time: whether each byte is
// part of a string (its quotes and escapes with it).
type jsonString struct{ in, esc bool }

func (s *jsonString) part(c byte) bool {
	switch {
	case s.in:
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.in = false
		}
		return true
	case c == '"':
		s.in = true
		return true
	}
	return false
}

// wordByte says whether data[i] continues a literal (Infinity1 is none).
func wordByte(data []byte, i int) bool {
	if i >= len(data) {
		return false
	}
	c := data[i]
	return c == '.' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
