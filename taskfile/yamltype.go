package taskfile

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlTypeLine is one of the YAML decoder's type errors: "line 2: cannot
// unmarshal !!str `abc` into float64", the value's text optional.
var yamlTypeLine = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `([^`]*)`)? into (\\S+)$")

var yamlKeyAt = regexp.MustCompile(`^\s*(?:-\s+)?([A-Za-z0-9_.-]+)\s*:`)

// yamlKeyOnLine is the key written on line n (from 1) of lines, "" where
// none is.
func yamlKeyOnLine(lines []string, n int) string {
	if n >= 1 && n <= len(lines) {
		if k := yamlKeyAt.FindStringSubmatch(lines[n-1]); k != nil {
			return k[1]
		}
	}
	return ""
}

// yamlWrongType says a task.yaml's values of the wrong type as its author
// reads them: the file, the line and key, what the key takes with an
// example, and what was written ("task.yaml:2: max_test_timeout_sec
// takes a number, like max_test_timeout_sec: 60, not the text `abc`"),
// in place of the decoder's Go types (the seventeenth attacker's 6). An
// error that is not a type error is said as the decoder says it.
func yamlWrongType(path string, data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	lines := strings.Split(string(data), "\n")
	var said []string
	for _, e := range te.Errors {
		m := yamlTypeLine.FindStringSubmatch(e)
		if m == nil {
			said = append(said, fmt.Sprintf("%s: %s", path, e))
			continue
		}
		n := 0
		fmt.Sscan(m[1], &n)
		key := yamlKeyOnLine(lines, n)
		got := map[string]string{"str": "text", "int": "a number", "float": "a number", "bool": "true or false", "map": "a mapping of keys", "seq": "a list", "null": "nothing"}[m[2]]
		if got == "" {
			got = "a " + m[2]
		}
		if m[3] != "" {
			got += " `" + m[3] + "`"
		}
		if key == "" || strings.HasPrefix(m[4], "taskfile.") && !strings.HasPrefix(m[4], "[]") && n == 1 {
			said = append(said, fmt.Sprintf("%s:%s: the file must be a mapping of keys (instruction: …, parser_name: …), not %s", path, m[1], got))
			continue
		}
		var takes string
		switch t := strings.TrimPrefix(m[4], "*"); {
		case strings.HasPrefix(t, "float"):
			takes = "a number, like " + key + ": 60"
		case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
			takes = "a whole number, like " + key + ": 10"
		case t == "string":
			takes = "text, like " + key + ": \"…\""
		case t == "bool":
			takes = "true or false"
		case strings.HasPrefix(t, "[]"):
			takes = "a list, one `- item` a line under " + key + ":"
		default:
			takes = "a mapping of keys, indented under " + key + ":"
		}
		said = append(said, fmt.Sprintf("%s:%s: %s takes %s, not %s", path, m[1], key, takes, got))
	}
	return errors.New(strings.Join(said, "; "))
}
