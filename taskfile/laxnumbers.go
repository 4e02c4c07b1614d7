package taskfile

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// Harbor's task model is pydantic's, in its lax mode: a numeric field
// takes a number written as a string (`timeout_sec = "20"`, `memory_mb =
// "2048"`), which headroom refused as a type error at its line — a task
// Harbor runs that headroom would not. laxNumbers reads such a value as
// the number it writes, where pydantic would: a decimal for a float
// field, a whole number for an integer one; anything else is still the
// type error it was.
var (
	laxFloat = regexp.MustCompile(`^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$`)
	laxInt   = regexp.MustCompile(`^\s*[+-]?\d+\s*$`)
)

// maxLaxNumbers bounds the values one file may have read so (a file has
// a few numeric keys; each read is a decode of the file).
const maxLaxNumbers = 32

// laxNumbers returns data with each numeric field written as a string
// unquoted, line for line (every line keeps its number), and a warning
// for each, naming its line ("task.toml:7: agent.timeout_sec = \"20\": a
// number written as a string, read as 20, as Harbor's model reads it").
// A value pydantic would refuse stays as written, for the decoder's
// error to name; the rest are read past it (probe holds a 0 in its place).
func laxNumbers(path string, data []byte) ([]byte, []string) {
	if checkTOMLShape(path, data) != nil {
		// Never decoded: the decoder took 24 GB for a file 50,000
		// tables deep (the hostile suite's deep task file); decode's
		// own check refuses it next, naming why.
		return data, nil
	}
	var notes []string
	out := strings.Split(string(data), "\n")
	probe := append([]string(nil), out...)
	for range maxLaxNumbers {
		var f fileTask
		_, err := toml.Decode(strings.Join(probe, "\n"), &f)
		if err == nil {
			break
		}
		m := typeMismatch.FindStringSubmatch(err.Error())
		if m == nil || m[3] != "string" {
			break
		}
		valid := laxFloat
		switch m[4] {
		case "float", "float64", "float32":
		case "integer", "int", "int64", "int32", "int16", "int8", "uint", "uint64", "uint32", "uint16", "uint8":
			valid = laxInt
		default:
			return []byte(strings.Join(out, "\n")), notes
		}
		key := m[2][strings.LastIndexByte(m[2], '.')+1:]
		at := regexp.MustCompile(`(^|[\s{,])` + regexp.QuoteMeta(key) + `\s*=\s*("([^"\\]*)"|'([^']*)')`)
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(probe) || !at.MatchString(probe[n-1]) {
			if n = valueLine([]byte(strings.Join(probe, "\n")), key, "string"); n == 0 {
				break
			}
		}
		loc := at.FindStringSubmatchIndex(probe[n-1])
		if loc == nil {
			break
		}
		quoted := probe[n-1][loc[4]:loc[5]]
		value := strings.TrimSpace(quoted[1 : len(quoted)-1])
		if !valid.MatchString(value) {
			probe[n-1] = probe[n-1][:loc[4]] + "0" + probe[n-1][loc[5]:]
			continue
		}
		probe[n-1] = probe[n-1][:loc[4]] + value + probe[n-1][loc[5]:]
		if o := at.FindStringSubmatchIndex(out[n-1]); o != nil {
			out[n-1] = out[n-1][:o[4]] + value + out[n-1][o[5]:]
		}
		notes = append(notes, fmt.Sprintf("%s:%d: %s = %s: a number written as a string, read as %s, as Harbor's model reads it", path, n, m[2], quoted, value))
	}
	return []byte(strings.Join(out, "\n")), notes
}

// yamlNumber is a task.yaml number that terminal-bench's pydantic model
// takes written as a string too (`max_agent_timeout_sec: "60"`), and a
// plain `1:30` as PyYAML's base-60 number: how and line say where it was
// either ("" where it was a plain number). A plain `0o74` is refused:
// text to PyYAML, which the model refuses (pyyaml.go).
type yamlNumber struct {
	v    float64
	how  string
	line int
}

func (n *yamlNumber) UnmarshalYAML(node *yaml.Node) error {
	if plainScalar(node) {
		if v, ok := sexagesimal(node.Value); ok {
			n.v, n.line = v, node.Line
			n.how = fmt.Sprintf("%s: a number in base 60 (YAML 1.1), read as %g", node.Value, v)
			return nil
		}
		if yaml12Octal.MatchString(node.Value) {
			return &yamlRefused{node.Line, fmt.Sprintf("%s is the text %q to terminal-bench's YAML reader (PyYAML reads YAML 1.1, where octal is written 074, and takes only 0x and 0b in small letters), and its model refuses that as a number: write the seconds in decimal", node.Value, node.Value)}
		}
	}
	if node.Kind == yaml.ScalarNode && node.Tag == "!!str" && laxFloat.MatchString(node.Value) {
		v, err := strconv.ParseFloat(strings.TrimSpace(node.Value), 64)
		if err != nil {
			return err
		}
		n.v, n.line = v, node.Line
		n.how = fmt.Sprintf("%q: a number written as a string, read as %g", node.Value, v)
		return nil
	}
	return node.Decode(&n.v)
}

// float is the number, nil where the key was not given.
func (n *yamlNumber) float() *float64 {
	if n == nil {
		return nil
	}
	return &n.v
}
