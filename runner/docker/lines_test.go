package docker

import (
	"os/exec"
	"strings"
	"testing"
)

// runLogged relays a command's stdout and stderr, line by line.
func TestRunLoggedRelaysBothStreams(t *testing.T) {
	var got []string
	err := runLogged(exec.Command("sh", "-c", "echo one; echo two >&2; printf three"), func(s string) { got = append(got, s) })
	if err != nil || strings.Join(got, "|") != "one|two|three" {
		t.Fatalf("got %q, %v", got, err)
	}
}
