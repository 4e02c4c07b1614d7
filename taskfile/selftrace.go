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
//
// So is a script that looks at its trace or changes it (seesTrace):
// traced by headroom, one that assigned PS4 took the trace over (its
// later commands' trace lines, without headroom's mark, were its output
// and Harbor's oracle.txt), one that exported SHELLOPTS handed xtrace to
// the bash scripts it ran (their "+ " lines on their stderr), and one
// that read `$-` found x there (the sixteenth and seventeenth
// attackers' 4 and 11). Untraced, each is as under its harness.
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
	// seesTrace is what a script looks at its trace or changes it by:
	// an assignment to PS4 (bare, or by export, declare, typeset,
	// local, readonly), SHELLOPTS or BASH_XTRACEFD named at all, `$-`
	// or `${-…}` read, xtrace named (`set -o xtrace`, `[[ -o xtrace ]]`,
	// `shopt -qo xtrace`).
	seesTrace = regexp.MustCompile(`(?m)(?:(?:^|[;&|({]|\bthen|\bdo|\belse)[ \t]*(?:(?:export|declare|typeset|local|readonly)(?:[ \t]+-[a-zA-Z]+)*[ \t]+)?PS4\+?=|\bSHELLOPTS\b|\bBASH_XTRACEFD\b|\$-|\$\{-|\bxtrace\b)`)
)

func scriptTracesItself(script string) bool {
	if shebangX.MatchString(script) || seesTrace.MatchString(script) {
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
