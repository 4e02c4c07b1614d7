package taskfile

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// An instruction no builder knows is named with its line; known ones, in
// any case, and a Dockerfile that does not parse are not.
func TestDockerfileProblems(t *testing.T) {
	for text, want := range map[string]string{
		"FROM x\nRUNN echo hi\n":                  `dockerfile_inline:2: unknown instruction "RUNN"`,
		"from x\nrun true\ncopy . /app\n":         "",
		"FROM x\nRUN true\nHEALTHCHECK NONE\n":    "",
		"FROM x\nRUN <<EOF\necho\nEOF\nFOO bar\n": `dockerfile_inline:5: unknown instruction "FOO"`,
	} {
		got := strings.Join(DockerfileProblems(&model.Build{Inline: text}), "\n")
		if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
	if DockerfileProblems(nil) != nil || DockerfileProblems(&model.Build{Context: t.TempDir(), Dockerfile: "none"}) != nil {
		t.Error("no build, or no Dockerfile to read: nothing to say (the build says why)")
	}
}
