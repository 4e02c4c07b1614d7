package taskfile

import "testing"

// Which scripts turn bash's trace on themselves: SWE-bench's eval
// scripts' `set -uxo pipefail`, and the other ways bash takes it; not a
// `set +x`, an echo of the words, a comment, or `set --` arguments.
func TestScriptTracesItself(t *testing.T) {
	for script, want := range map[string]bool{
		"#!/bin/bash\nset -uxo pipefail\ncd /testbed\n":                   true,
		"#!/bin/bash\nset -x\n":                                           true,
		"#!/bin/bash\nset -e -x\n":                                        true,
		"#!/bin/bash\nset -euxo pipefail\n":                               true,
		"#!/bin/bash\nset -o xtrace\n":                                    true,
		"#!/bin/bash\nset -eo xtrace\n":                                   true,
		"#!/bin/bash -x\necho hi\n":                                       true,
		"#!/usr/bin/env -S bash -ex\necho hi\n":                           true,
		"#!/bin/bash\nif true; then set -x; fi\n":                         true,
		"#!/bin/bash\ncd /app && set -x\n":                                true,
		"#!/bin/bash\nset -euo pipefail\n":                                false,
		"#!/bin/bash\nset +x\n":                                           false,
		"#!/bin/bash\necho set -x\n":                                      false,
		"#!/bin/bash\n# set -x for debugging\n":                           false,
		"#!/bin/bash\nset -- -x foo\n":                                    false,
		"#!/bin/bash\nset -o pipefail\n":                                  false,
		"#!/bin/bash\nreset -x\n":                                         false,
		"#!/bin/bash\noffset -x 3\n":                                      false,
		"#!/bin/bash\nset -e\nexec > >(tee \"$LOG_FILE\") 2>&1\nset -x\n": true,
		// What looks at the trace or changes it.
		"#!/bin/bash\nPS4='+ ${BASH_SOURCE}:${LINENO}: '\necho hi\n": true,
		"#!/bin/bash\nexport PS4='>> '\n":                            true,
		"#!/bin/bash\ncd /app; declare -x PS4=x\n":                   true,
		"#!/bin/bash\nexport SHELLOPTS\nbash child.sh\n":             true,
		"#!/bin/bash\ncase $- in *i*) exit;; esac\n":                 true,
		"#!/bin/bash\necho ${-}\n":                                   true,
		"#!/bin/bash\nif [[ -o xtrace ]]; then echo on; fi\n":        true,
		"#!/bin/bash\nexec {BASH_XTRACEFD}>/tmp/t\n":                 true,
		"#!/bin/bash\necho PS4 is a prompt\n":                        false,
		"#!/bin/bash\nMYPS4=1\n":                                     false,
		"#!/bin/bash\nrm -f a-b; echo $HOME-x\n":                     false,
	} {
		if got := scriptTracesItself(script); got != want {
			t.Errorf("%q: %v, want %v", script, got, want)
		}
	}
}
