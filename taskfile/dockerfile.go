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

// parseDockerfile is a Dockerfile's syntax tree, read once for what
// noteBuildKit asks of it; nil when the text does not parse (the build
// says why then).
func parseDockerfile(text string) *parser.Node {
	res, err := parser.Parse(strings.NewReader(text))
	if err != nil {
		return nil
	}
	return res.AST
}

// instructions are a parsed Dockerfile's instructions (none for nil).
func instructions(root *parser.Node) []*parser.Node {
	if root == nil {
		return nil
	}
	return root.Children
}

// buildKitOnly names the first construct of a Dockerfile (root, from
// parseDockerfile) the classic builder refuses ("Dockerfile:4: heredoc in
// RUN"), "" when there is none or it did not parse. name is how the file
// is named in the answer.
func buildKitOnly(name string, root *parser.Node) string {
	for _, n := range instructions(root) {
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

// cacheMounts names each RUN of a Dockerfile (root) with a
// --mount=type=cache ("Dockerfile:4"), none when it did not parse.
// BuildKit keeps such a cache on the engine, shared by every build that
// names the same id or target, and past the build: what one task's build
// leaves there (a sitecustomize.py in a pip cache) another's reads.
func cacheMounts(name string, root *parser.Node) []string {
	var out []string
	for _, n := range instructions(root) {
		for _, f := range n.Flags {
			v, ok := strings.CutPrefix(f, "--mount=")
			if !ok {
				continue
			}
			cache := false
			for _, field := range strings.Split(v, ",") {
				k, val, _ := strings.Cut(field, "=")
				if strings.EqualFold(strings.TrimSpace(k), "type") && strings.EqualFold(strings.TrimSpace(val), "cache") {
					cache = true
				}
			}
			if cache {
				out = append(out, fmt.Sprintf("%s:%d", name, n.StartLine))
				break
			}
		}
	}
	return out
}

// fetches names what a Dockerfile (root) has the engine fetch itself: each
// ADD source that is a URL or a git address, and each FROM image that is
// not an earlier stage or scratch (none when it did not parse).
// A reference built from an ARG is named as written: the engine expands
// it, and the build checks what it can read (runner/docker's
// checkFetches).
func fetches(name string, root *parser.Node) []model.Fetch {
	var out []model.Fetch
	stages := map[string]bool{}
	for _, n := range instructions(root) {
		var args []string
		for a := n.Next; a != nil; a = a.Next {
			args = append(args, a.Value)
		}
		switch strings.ToUpper(n.Value) {
		case "FROM":
			if len(args) == 0 {
				continue
			}
			if img := args[0]; img != "scratch" && !stages[strings.ToLower(img)] {
				out = append(out, model.Fetch{At: fmt.Sprintf("%s:%d: FROM", name, n.StartLine), Source: img, Image: true})
			}
			if len(args) >= 3 && strings.EqualFold(args[1], "AS") {
				stages[strings.ToLower(args[2])] = true
			}
		case "ADD":
			if len(args) < 2 {
				continue
			}
			for _, src := range args[:len(args)-1] {
				if isRemoteSource(src) {
					out = append(out, model.Fetch{At: fmt.Sprintf("%s:%d: ADD", name, n.StartLine), Source: src})
				}
			}
		}
	}
	return out
}

// isRemoteSource says whether an ADD source is fetched by the engine from
// the network (a URL, a git address) rather than read from the context.
func isRemoteSource(src string) bool {
	return strings.Contains(src, "://") || strings.HasPrefix(src, "git@")
}

// cacheMountDeviation is the note a RUN --mount=type=cache gets, at its
// Dockerfile line; whose names the image it builds ("image", "service db").
func cacheMountDeviation(whose, at string) model.Deviation {
	return model.Deviation{What: "build cache shared past the trial",
		Detail: whose + " " + at + ": RUN --mount=type=cache shares a cache with every build on this engine (and with other tenants'); its content survives the trial: " +
			"another task's build may have left anything there, and what this build leaves, the next one reads (headroom prunes no engine cache); vendor what the step fetches, or drop the cache mount"}
}

// noteBuildKitAll notes what of each of a task's Dockerfiles needs
// BuildKit: its image's, its services', its separate verifier's; and each
// RUN --mount=type=cache among them as a deviation.
func noteBuildKitAll(t *model.Task) {
	var caches []model.Deviation
	t.Build, caches = noteBuildKit(t.Build, "image", caches)
	for i := range t.Sidecars {
		t.Sidecars[i].Build, caches = noteBuildKit(t.Sidecars[i].Build, "service "+t.Sidecars[i].Name, caches)
	}
	if v := t.SeparateVerifier; v != nil && v.Build != nil {
		sv := *v
		sv.Build, caches = noteBuildKit(v.Build, "verifier", caches)
		t.SeparateVerifier = &sv
	}
	t.Deviations = append(t.Deviations, caches...)
}

// noteBuildKit returns a copy of b with what of its Dockerfile needs
// BuildKit (nil for nil), and devs with its cache mounts' notes added.
func noteBuildKit(b *model.Build, whose string, devs []model.Deviation) (*model.Build, []model.Deviation) {
	if b == nil {
		return nil, devs
	}
	c := *b
	name, text := "", ""
	if c.Inline != "" {
		name, text = "dockerfile_inline", c.Inline
	} else if data, err := readTaskFile(c.Context, filepath.Join(c.Context, c.Dockerfile)); err == nil {
		name, text = c.Dockerfile, string(data)
	}
	if name != "" {
		root := parseDockerfile(text)
		c.NeedsBuildKit = buildKitOnly(name, root)
		c.Fetches = fetches(name, root)
		for _, at := range cacheMounts(name, root) {
			devs = append(devs, cacheMountDeviation(whose, at))
		}
	}
	return &c, devs
}
