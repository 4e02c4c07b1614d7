package taskfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task.yaml value of the wrong type is said as its author reads it:
// the line, the key, what it takes with an example and what was written,
// never the decoder's Go types ("cannot unmarshal !!str `abc` into
// float64", "into []taskfile.tbDescription": the seventeenth attacker's 6).
func TestTaskYAMLWrongTypeIsSaidAsWritten(t *testing.T) {
	for body, want := range map[string]string{
		"instruction: hi\nmax_test_timeout_sec: \"abc\"\n": "task.yaml:2: max_test_timeout_sec takes a number, like max_test_timeout_sec: 60, not text `abc`",
		"instruction: hi\ndescriptions: {}\n":              "task.yaml:2: descriptions takes a list, one `- item` a line under descriptions:, not a mapping of keys",
		"- just a list\n":                                  "task.yaml:1: the file must be a mapping of keys (instruction: …, parser_name: …), not a list",
		"instruction: [a]\n":                               "task.yaml:1: instruction takes text, like instruction: \"…\", not a list",
		"instruction: hi\ntags: 5\n":                       "task.yaml:2: tags takes a list, one `- item` a line under tags:, not a number `5`",
	} {
		dir := t.TempDir()
		for name, text := range map[string]string{"task.yaml": body, "Dockerfile": "FROM x\n", "run-tests.sh": "#!/bin/bash\n"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := LoadTaskDir(dir)
		if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "unmarshal") {
			t.Errorf("%q: %v\nwant …%s", body, err, want)
		}
	}
}
