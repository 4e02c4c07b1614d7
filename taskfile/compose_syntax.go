package taskfile

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// resolve follows an alias (a YAML anchor's use) to its node.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// pairs lists a mapping's key and value nodes, with YAML merge keys
// ("<<: *base") merged in under the mapping's own keys.
func pairs(n *yaml.Node) [][2]*yaml.Node { return mergedPairs(n, map[*yaml.Node]bool{}) }

// mergedPairs is pairs, minding the mappings being merged: a merge of a
// mapping into itself is left out rather than followed forever.
func mergedPairs(n *yaml.Node, merging map[*yaml.Node]bool) [][2]*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode || merging[n] {
		return nil
	}
	merging[n] = true
	defer delete(merging, n)
	var own, merged [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			srcs := []*yaml.Node{resolve(v)}
			if srcs[0].Kind == yaml.SequenceNode {
				srcs = srcs[0].Content
			}
			for _, src := range srcs {
				merged = append(merged, mergedPairs(src, merging)...)
			}
			continue
		}
		seen[k.Value] = true
		own = append(own, [2]*yaml.Node{k, v})
	}
	for _, kv := range merged {
		if !seen[kv[0].Value] {
			seen[kv[0].Value] = true
			own = append(own, kv)
		}
	}
	return own
}

// mapping indexes a mapping's values by key (nil for anything else).
func mapping(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	for _, kv := range pairs(n) {
		m[kv[0].Value] = resolve(kv[1])
	}
	return m
}

// interpolate expands compose's variable syntax: $NAME, ${NAME},
// ${NAME:-default} and ${NAME-default}, ${NAME:?error} and ${NAME?error},
// ${NAME:+alternative} and ${NAME+alternative}, nested in defaults, and
// $$ for a literal $. A name neither set nor defaulted is recorded in
// unset and expands to "".
func interpolate(s string, vars map[string]string, unset map[string]bool) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '{':
			end := closingBrace(s, i+2)
			if end < 0 {
				return "", fmt.Errorf("unclosed ${ in %q", s)
			}
			v, err := expandBraced(s[i+2:end], vars, unset)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i = end
		case isNameStart(next):
			j := i + 1
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			name := s[i+1 : j]
			v, ok := vars[name]
			if !ok {
				unset[name] = true
			}
			b.WriteString(v)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func closingBrace(s string, from int) int {
	depth := 1
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

func expandBraced(expr string, vars map[string]string, unset map[string]bool) (string, error) {
	j := 0
	for j < len(expr) && isNameChar(expr[j]) {
		j++
	}
	name, rest := expr[:j], expr[j:]
	if name == "" || !isNameStart(name[0]) {
		return "", fmt.Errorf("${%s}: not a variable name", expr)
	}
	v, set := vars[name]
	if rest == "" {
		if !set {
			unset[name] = true
		}
		return v, nil
	}
	op, arg := rest[:1], rest[1:]
	colon := op == ":"
	if colon {
		if len(arg) == 0 {
			return "", fmt.Errorf("${%s}: expected -, ?, or + after the colon", expr)
		}
		op, arg = arg[:1], arg[1:]
	}
	empty := !set || (colon && v == "")
	switch op {
	case "-":
		if empty {
			return interpolate(arg, vars, unset)
		}
		return v, nil
	case "+":
		if empty {
			return "", nil
		}
		return interpolate(arg, vars, unset)
	case "?":
		if empty {
			msg, _ := interpolate(arg, vars, unset)
			return "", fmt.Errorf("required variable %s is not set: %s", name, msg)
		}
		return v, nil
	}
	return "", fmt.Errorf("${%s}: unknown operator %q", expr, op)
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// splitWords splits a command line into words as a POSIX shell would
// (quotes and backslashes), without expanding anything.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unclosed \" in %q", s)
			}
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
