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
func pairs(n *yaml.Node) [][2]*yaml.Node { return newMerger(0).pairs(n) }

// merger merges a mapping's merge keys, each merged mapping once: its
// pairs are remembered, so a mapping that merges ten of one that merges ten
// of another costs tens of steps, not ten to the power of the nesting (a
// 682-byte compose file nine levels deep took minutes to load before).
type merger struct {
	memo    map[*yaml.Node][][2]*yaml.Node
	merging map[*yaml.Node]bool // being merged: a merge into itself is left out
	work    int                 // mappings looked at and pairs merged in
	limit   int                 // work allowed, 0 for no bound
	over    *yaml.Node          // the merge key at which work passed limit
}

func newMerger(limit int) *merger {
	return &merger{memo: map[*yaml.Node][][2]*yaml.Node{}, merging: map[*yaml.Node]bool{}, limit: limit}
}

func (m *merger) pairs(n *yaml.Node) [][2]*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode || m.merging[n] || m.over != nil {
		return nil
	}
	m.work++
	if p, ok := m.memo[n]; ok {
		return p
	}
	m.merging[n] = true
	defer delete(m.merging, n)
	var own, merged [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			srcs := []*yaml.Node{resolve(v)}
			if srcs[0] != nil && srcs[0].Kind == yaml.SequenceNode {
				srcs = srcs[0].Content
			}
			for _, src := range srcs {
				p := m.pairs(src)
				m.work += len(p)
				if m.limit > 0 && m.work > m.limit && m.over == nil {
					m.over = k
				}
				if m.over != nil {
					return nil
				}
				merged = append(merged, p...)
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
	m.memo[n] = own
	return own
}

// Merge budget: what merging a compose file's merge keys may cost, in
// mappings looked at and pairs merged in, summed over every mapping of the
// file as the reader goes on to read each: mergeBudgetFloor plus
// mergeBudgetPerNode for each node the file has (yaml.v3 bounds alias
// expansion against the node count the same way), some tens of
// milliseconds of merging at most. A real compose file's x- blocks merged
// into a few services cost tens to hundreds.
const (
	mergeBudgetFloor   = 100000
	mergeBudgetPerNode = 10
)

// checkMerges refuses a compose file whose merge keys cost more to follow
// than the merge budget, at the merge key where the budget ran out, before
// the reader follows them: so the file loads in milliseconds or is refused.
// A mapping with no merge key costs one step and is not looked at.
func (d *composeDoc) checkMerges(root *yaml.Node) error {
	nodes := 0
	var withMerge []*yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		nodes++
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i]; k.Value == "<<" && k.Tag == "!!merge" {
					withMerge = append(withMerge, n)
					break
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	budget := mergeBudgetFloor + mergeBudgetPerNode*nodes
	spent := 0
	for _, n := range withMerge {
		// A merger of its own for each mapping, as each later pairs call
		// has: what it spends is what reading the file will spend.
		m := newMerger(budget)
		m.work = spent
		m.pairs(n)
		if m.over != nil {
			return d.errf(m.over, "the merge key %q merges mappings that merge others so often that following them all takes more than %d steps for a file of %d YAML nodes: merge each x- block once, into the services that use it, rather than mappings merging the same mapping over and over", m.over.Value, budget, nodes)
		}
		spent = m.work
	}
	return nil
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
// $$ for a literal $. A name not set is recorded in unset: true when it
// expands to "", false when a default or alternative stood in for it
// (the harness's own environment may set it: the audit names both).
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
	if !set && (op == "-" || op == "+") {
		if _, said := unset[name]; !said {
			unset[name] = false
		}
	}
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
