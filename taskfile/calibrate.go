package taskfile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

var (
	environmentHeader = regexp.MustCompile(`(?m)^[ \t]*\[environment\][ \t]*(#.*)?$`)
	tableHeader       = regexp.MustCompile(`(?m)^[ \t]*\[`)
)

// MemoryEdit is a task file's new contents with a calibration's memory
// written in, checked to load.
type MemoryEdit struct {
	Path  string
	Data  []byte
	Lines []string // the memory lines as written
	What  string   // what was written, and why
}

// Write writes the edit over Path, keeping the file's mode.
func (e MemoryEdit) Write() error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(e.Path); err == nil {
		mode = st.Mode().Perm()
	}
	return os.WriteFile(e.Path, e.Data, mode)
}

// EditMemory writes a recommendation into the file a task came from, as
// the file's fields mean it, in the form the file already uses (memory_mb
// = 208 or memory = "208M"), keeping every other line, and checks that the
// result loads as the same kind of task:
//   - a Harbor task.toml (and any file of a format with one memory field)
//     gets the recommended limit: its memory_mb is the whole spec, which
//     the 1x ratio makes the hard limit;
//   - a headroom TOML gets the guarantee (memory) and the limit
//     (memory_limit) both.
func EditMemory(path, format string, c model.Calibration, exp string) (MemoryEdit, error) {
	if path == "" || strings.HasPrefix(path, "builtin:") {
		return MemoryEdit{}, fmt.Errorf("%s is a built-in task; copy its file into a --tasks-dir to change it", c.Task)
	}
	if filepath.Base(path) == "task.yaml" {
		return MemoryEdit{}, fmt.Errorf("%s: terminal-bench's task.yaml has no memory field; set the limit where the task runs, or move the task to a task.toml", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return MemoryEdit{}, err
	}
	if format == "" && filepath.Base(path) == "task.toml" {
		format = model.FormatHarbor
	}
	text := string(data)
	e := MemoryEdit{Path: path}
	verb := "raised"
	if c.LimitBytes < c.SpecBytes {
		verb = "lowered"
	}
	if format != model.FormatHeadroom {
		// One memory field: the 1x limit.
		note := fmt.Sprintf("  # headroom calibrate %s: the 1x hard limit (memory_mb is the whole spec), %s from %s; median need %s", exp, verb, model.FormatBytes(c.SpecBytes), medianNote(c))
		text, line := setEnvironmentKey(text, []string{"memory_mb", "memory"}, "memory_mb", c.LimitBytes, note)
		e.Data, e.Lines = []byte(text), []string{line}
		e.What = fmt.Sprintf("the recommended hard limit %s, %s from %s (its one memory field is the whole spec, hence the 1x limit; a sweep at 1x now runs with this limit)", model.FormatBytes(c.LimitBytes), verb, model.FormatBytes(c.SpecBytes))
	} else {
		gNote := fmt.Sprintf("  # headroom calibrate %s: guarantee (median need %s)", exp, medianNote(c))
		lNote := fmt.Sprintf("  # headroom calibrate %s: the 1x hard limit, %s from %s", exp, verb, model.FormatBytes(c.SpecBytes))
		var gLine, lLine string
		text, gLine = setEnvironmentKey(text, []string{"memory_mb", "memory"}, "memory", c.GuaranteeBytes, gNote)
		text, lLine = setEnvironmentKey(text, []string{"memory_limit"}, "memory_limit", c.LimitBytes, lNote)
		e.Data, e.Lines = []byte(text), []string{gLine, lLine}
		e.What = fmt.Sprintf("guarantee %s and hard limit %s (memory and memory_limit; a sweep's ratios now scale the limit)", model.FormatBytes(c.GuaranteeBytes), model.FormatBytes(c.LimitBytes))
	}
	if _, err := ParseSource(path, e.Data); err != nil {
		return MemoryEdit{}, fmt.Errorf("the edited file would not load (%v); left unchanged", err)
	}
	return e, nil
}

// setEnvironmentKey sets the first of keys found in [environment] (or adds
// key, or an [environment] table, when none is there) to bytes, written
// in the form of the key found (memory_mb: whole MiB; others: "208M"),
// keeping the line's indent and the user's own comment (a previous
// calibration's note is replaced by note). It returns the text and the
// line as written.
func setEnvironmentKey(text string, keys []string, key string, bytes int64, note string) (string, string) {
	value := func(k string) string {
		if k == "memory_mb" {
			return fmt.Sprint((bytes + model.MiB - 1) / model.MiB)
		}
		return strconv.Quote(MemoryString(bytes))
	}
	h := environmentHeader.FindStringIndex(text)
	if h == nil {
		line := key + " = " + value(key) + note
		return strings.TrimRight(text, "\n") + "\n\n[environment]\n" + line + "\n", line
	}
	start, end := h[1], len(text)
	if next := tableHeader.FindStringIndex(text[start:]); next != nil {
		end = start + next[0]
	}
	section := text[start:end]
	re := regexp.MustCompile(`(?m)^([ \t]*)(` + strings.Join(keys, "|") + `)([ \t]*=[ \t]*)([^#\n]*?)([ \t]*#[^\n]*)?$`)
	if m := re.FindStringSubmatchIndex(section); m != nil {
		indent, k, eq := section[m[2]:m[3]], section[m[4]:m[5]], section[m[6]:m[7]]
		comment := note
		if m[10] >= 0 && !strings.Contains(section[m[10]:m[11]], "# headroom calibrate") {
			comment = section[m[10]:m[11]] // the user's own comment stays
		}
		line := indent + k + eq + value(k) + comment
		return text[:start] + section[:m[0]] + line + section[m[1]:] + text[end:], strings.TrimSpace(line)
	}
	line := key + " = " + value(key) + note
	return text[:start] + "\n" + line + text[start:], line
}

// medianNote is the median as a task file's comment keeps it, with the
// runs it stands on when some were censored: "306MiB (Kaplan–Meier, 3 of
// 20 runs censored)".
func medianNote(c model.Calibration) string {
	if c.Censored == 0 {
		return model.FormatBytes(c.MedianBytes)
	}
	return fmt.Sprintf("%s (Kaplan–Meier, %d of %d runs censored)", model.FormatBytes(c.MedianBytes), c.Censored, c.Runs())
}

// MemoryString is bytes as a task file's memory key writes them: whole
// MiB, rounded up ("208M").
func MemoryString(b int64) string { return fmt.Sprintf("%dM", (b+model.MiB-1)/model.MiB) }
