package taskfile

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// buildKitFlags are instruction flags only BuildKit's Dockerfile frontend
// reads; the engine's classic builder refuses each.
var buildKitFlags = []string{"--mount", "--network", "--security", "--link", "--chmod", "--parents", "--exclude", "--checksum", "--keep-git-dir"}

// buildKitOnly names the first construct of a Dockerfile's text the
// classic builder refuses ("Dockerfile:4: heredoc in RUN"), "" when there
// is none or the text does not parse (the build says why then). name is
// how the file is named in the answer.
func buildKitOnly(name, text string) string {
	res, err := parser.Parse(strings.NewReader(text))
	if err != nil {
		return ""
	}
	for _, n := range res.AST.Children {
		instr := strings.ToUpper(n.Value)
		if len(n.Heredocs) > 0 {
			return fmt.Sprintf("%s:%d: heredoc in %s", name, n.StartLine, instr)
		}
		for _, f := range n.Flags {
			for _, bk := range buildKitFlags {
				if f == bk || strings.HasPrefix(f, bk+"=") {
					return fmt.Sprintf("%s:%d: %s %s", name, n.StartLine, instr, bk)
				}
			}
		}
	}
	return ""
}

// noteBuildKitAll notes what of each of a task's Dockerfiles needs
// BuildKit: its image's, its services', its separate verifier's.
func noteBuildKitAll(t *model.Task) {
	t.Build = noteBuildKit(t.Build)
	for i := range t.Sidecars {
		t.Sidecars[i].Build = noteBuildKit(t.Sidecars[i].Build)
	}
	if v := t.SeparateVerifier; v != nil && v.Build != nil {
		sv := *v
		sv.Build = noteBuildKit(v.Build)
		t.SeparateVerifier = &sv
	}
}

// noteBuildKit returns a copy of b with what of its Dockerfile needs
// BuildKit (nil for nil).
func noteBuildKit(b *model.Build) *model.Build {
	if b == nil {
		return nil
	}
	c := *b
	if c.Inline != "" {
		c.NeedsBuildKit = buildKitOnly("dockerfile_inline", c.Inline)
	} else if data, err := readTaskFile(c.Context, filepath.Join(c.Context, c.Dockerfile)); err == nil {
		c.NeedsBuildKit = buildKitOnly(c.Dockerfile, string(data))
	}
	return &c
}
