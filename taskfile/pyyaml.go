package taskfile

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// terminal-bench reads task.yaml with PyYAML's safe_load, a YAML 1.1
// reader, where headroom's decoder reads YAML 1.2. The two read a few
// plain scalars and mappings differently, and where they do headroom
// reads the file as the harness does, saying so, or refuses what the
// harness refuses:
//   - a key given twice: PyYAML keeps the last, silently (headroom's
//     decoder refused the file, a task the harness runs);
//   - a number in base 60 (`1:30`, YAML 1.1's sexagesimal): 90 to PyYAML,
//     text to headroom's decoder (refused as not a number);
//   - `0o74` (and `0X3C`, `0O74`, `0B111100`): 60 to headroom's decoder,
//     text to PyYAML, which terminal-bench's model then refuses as a
//     number (headroom ran it with a timeout of 60 s, a task the harness
//     does not load).

// pyYAMLDedupe removes from every mapping under n each key given again
// later in it, keeping the last as PyYAML does, and returns a warning for
// each ("task.yaml:5: max_agent_timeout_sec is given twice (also at line
// 2): the last is read, as terminal-bench's YAML reader reads it").
func pyYAMLDedupe(path string, n *yaml.Node) []string {
	var notes []string
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || depth > 64 {
			return
		}
		if n.Kind == yaml.MappingNode && len(n.Content)%2 == 0 {
			last := map[string]int{}
			for i := 0; i < len(n.Content); i += 2 {
				if k := n.Content[i]; k.Kind == yaml.ScalarNode {
					last[k.Value] = i
				}
			}
			kept := n.Content[:0:0]
			for i := 0; i < len(n.Content); i += 2 {
				k := n.Content[i]
				if j, ok := last[k.Value]; ok && k.Kind == yaml.ScalarNode && j != i {
					notes = append(notes, fmt.Sprintf("%s:%d: %s is given again at line %d: the last is read, as terminal-bench's YAML reader (PyYAML) reads it", path, k.Line, k.Value, n.Content[j].Line))
					continue
				}
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
			n.Content = kept
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return notes
}

var (
	// PyYAML's YAML 1.1 resolvers for base-60 integers and floats.
	pySexagesimal = regexp.MustCompile(`^[-+]?([1-9][0-9_]*(:[0-5]?[0-9])+|[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*)$`)
	// A number PyYAML reads as text, where headroom's decoder reads a
	// number: YAML 1.2's octal (0o74), and any base prefix in capitals
	// (0X3C, 0O74, 0B111100: PyYAML's resolver takes 0x and 0b only).
	yaml12Octal = regexp.MustCompile(`^[-+]?0(o|O|X|B)[0-9a-fA-F_]+$`)
)

// plainScalar is a scalar written without quotes or a block style: the
// only kind a YAML reader resolves to a number.
func plainScalar(node *yaml.Node) bool {
	return node.Kind == yaml.ScalarNode && node.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

// sexagesimal reads a base-60 number as PyYAML does ("1:30" is 90,
// "-1:00:00.5" is -3600.5).
func sexagesimal(s string) (float64, bool) {
	if !pySexagesimal.MatchString(s) {
		return 0, false
	}
	s = strings.ReplaceAll(s, "_", "")
	sign := 1.0
	switch s[0] {
	case '-':
		sign, s = -1, s[1:]
	case '+':
		s = s[1:]
	}
	var v float64
	for _, part := range strings.Split(s, ":") {
		f, err := strconv.ParseFloat(part, 64)
		if err != nil || math.IsInf(f, 0) {
			return 0, false
		}
		v = v*60 + f
	}
	return sign * v, true
}

// yamlRefused is a task.yaml value terminal-bench refuses, at its line.
type yamlRefused struct {
	line int
	why  string
}

func (e *yamlRefused) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.why) }
