package taskfile

import (
	"regexp"
	"strings"
)

// tracesItself says whether a harness script turns bash's trace on
// itself: a `set` at a command's start whose options hold x (`set -x`,
// `set -euxo pipefail`, `set -e -x`) or `-o xtrace`, or a shebang that
// runs it with -x. Such a script runs untraced by headroom
// (model.Step.SelfTraced), its own trace on its stderr as under the
// harness: SWE-bench's eval scripts (`set -uxo pipefail`) write their
// `: '>>>>> Start Test Output'` markers only through it, into the log
// their grader reads, and under headroom's trace, which has a descriptor
// of its own, the grader found none and failed every task (the
// seventeenth attacker's last). A file that cannot be read inside the
// task (root), a link out of it, is not.
func tracesItself(root, path string) bool {
	data, err := readTaskFile(root, path)
	if err != nil {
		return false
	}
	return scriptTracesItself(string(data))
}

var (
	// setCommand is a `set` at a command's start and its words to the
	// command's end.
	setCommand = regexp.MustCompile(`(?m)(?:^|[;&|({]|\bthen|\bdo|\belse)[ \t]*set((?:[ \t]+[^ \t\n;&|)]+)+)`)
	shebangX   = regexp.MustCompile(`^#![^\n]*\b(?:ba)?sh[ \t]+(?:-[a-zA-Z]*x|-o[ \t]+xtrace)`)
)

func scriptTracesItself(script string) bool {
	if shebangX.MatchString(script) {
		return true
	}
	for _, m := range setCommand.FindAllStringSubmatch(script, -1) {
		words := strings.Fields(m[1])
		for i, w := range words {
			if w == "--" {
				break
			}
			if len(w) > 1 && w[0] == '-' && w[1] != 'o' && strings.ContainsRune(w, 'x') && !strings.ContainsAny(w, "=/$\"'") {
				return true
			}
			if (w == "-o" || strings.HasPrefix(w, "-") && strings.HasSuffix(w, "o")) && i+1 < len(words) && words[i+1] == "xtrace" {
				return true
			}
		}
	}
	return false
}
