package taskfile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// servicesHeader is a [[services]] table's header line.
var servicesHeader = regexp.MustCompile(`^\s*\[\[\s*services\s*\]\]`)

// checkServiceCount refuses a headroom task file with more [[services]]
// than model.MaxSidecars, naming the line of the first one too many.
func checkServiceCount(path string, data []byte, n int) error {
	if n <= model.MaxSidecars {
		return nil
	}
	line, seen := 0, 0
	for i, l := range strings.Split(string(data), "\n") {
		if servicesHeader.MatchString(l) {
			if seen++; seen == model.MaxSidecars+1 {
				line = i + 1
				break
			}
		}
	}
	at := path
	if line > 0 {
		at = fmt.Sprintf("%s:%d", path, line)
	}
	return fmt.Errorf("%s: [[services]] #%d: a task runs at most %d services beside its own container (each holds memory outside the task's limit); this file has %d", at, model.MaxSidecars+1, model.MaxSidecars, n)
}
