package taskfile

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/headroom-eval/headroom/buildignore"
	"github.com/headroom-eval/headroom/model"
	"github.com/moby/buildkit/frontend/dockerfile/command"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// buildKitFlags are instruction flags only BuildKit's Dockerfile frontend
// reads; the engine's classic builder refuses each.
var buildKitFlags = []string{"--mount", "--network", "--security", "--link", "--chmod", "--parents", "--exclude", "--checksum", "--keep-git-dir"}

// parseDockerfile is a Dockerfile's syntax tree and escape token, read
// once for what noteBuildKit asks of it; nil when the text does not parse
// (the build says why then).
func parseDockerfile(text string) *parser.Result {
	res, err := parser.Parse(strings.NewReader(text))
	if err != nil {
		return nil
	}
	return res
}

// instructions are a parsed Dockerfile's instructions (none for nil).
func instructions(res *parser.Result) []*parser.Node {
	if res == nil || res.AST == nil {
		return nil
	}
	return res.AST.Children
}

// buildKitOnly names the first construct of a Dockerfile (root, from
// parseDockerfile) the classic builder refuses ("Dockerfile:4: heredoc in
// RUN"), "" when there is none or it did not parse. name is how the file
// is named in the answer.
func buildKitOnly(name string, root *parser.Result) string {
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
func cacheMounts(name string, root *parser.Result) []string {
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

// fetches names what a Dockerfile (res, its text) has the engine fetch
// itself: each ADD source that is a URL or a git address; each image a
// FROM, a COPY --from or a RUN --mount from= names that is not an earlier
// stage or scratch, an ONBUILD's among them; the `# syntax=` frontend's
// (none when it did not parse). Each is named as the engine will read it:
// ARG and ENV expanded as the builder expands them (its escape token, its
// scoping, its automatic platform args), args (the task's build args)
// over an ARG's default — an `ADD $URL` or a `FROM ${REGISTRY}/x` is
// checked for where it goes, not for how it is spelled. A word that names
// a variable only the engine knows (the base image's ENV) is kept as
// written with Fetch.Unread set: where it goes cannot be told.
func fetches(name string, res *parser.Result, text string, args map[string]string) []model.Fetch {
	var out []model.Fetch
	if ref, _, _, ok := parser.DetectSyntax([]byte(text)); ok && ref != "" {
		out = append(out, model.Fetch{At: name + ": # syntax", Source: ref, Image: true})
	}
	if res == nil {
		return out
	}
	r := fetchReader{name: name, lex: shell.NewLex(res.EscapeToken), args: args, global: platformArgs(), stages: map[string]stage{}}
	for _, n := range instructions(res) {
		r.instruction(n, "", n.StartLine)
	}
	return append(out, r.out...)
}

// fetchReader reads a Dockerfile's instructions in order for fetches.
type fetchReader struct {
	name string
	lex  *shell.Lex
	args map[string]string
	// global holds the ARGs before the first FROM, which only a FROM
	// reads (a stage reads one it names again); env is the current
	// stage's ARGs and ENVs, envs its ENVs alone, which a later stage
	// FROM it inherits (stages, by lower-case name and by index; n of
	// them so far).
	global, env, envs buildEnv
	stages            map[string]stage
	n                 int
	// whole says the current stage's variables are all the file's own:
	// it builds FROM scratch or a stage of the file that did. A stage
	// FROM an image also has that image's ENV, which only the engine
	// knows.
	whole bool
	out   []model.Fetch
}

// stage is what a later stage FROM an earlier one inherits of it: its
// ENVs, and whether they are all the file's own (fetchReader.whole).
type stage struct {
	envs  buildEnv
	whole bool
}

// read is word as the builder expands it in env, and the variables it
// names that env does not hold where the engine may (none: it is read
// whole). whole says env is all there is (the global scope, a stage of
// the file's own): a name it lacks is unset there.
func (r *fetchReader) read(word string, env buildEnv, whole bool) (string, []string) {
	res, err := r.lex.ProcessWordWithMatches(word, env)
	if err != nil {
		return word, []string{"(" + err.Error() + ")"}
	}
	var unread []string
	for k := range res.Unmatched {
		if !whole {
			unread = append(unread, "$"+k)
		}
	}
	sort.Strings(unread)
	return res.Result, unread
}

// fetch keeps one fetch of word (an image, or an ADD source when !image),
// read in env.
func (r *fetchReader) fetch(at, word string, env buildEnv, whole, image bool) {
	v, unread := r.read(word, env, whole)
	if len(unread) > 0 {
		r.out = append(r.out, model.Fetch{At: at, Source: word, Image: image, Unread: strings.Join(unread, ", ")})
		return
	}
	if image {
		if _, stage := r.stages[strings.ToLower(v)]; v == "" || stage || strings.EqualFold(v, "scratch") {
			return
		}
	} else if !isRemoteSource(v) {
		return
	}
	r.out = append(r.out, model.Fetch{At: at, Source: v, Image: image})
}

// instruction reads one instruction at line; within is "ONBUILD " for one
// an ONBUILD holds (it runs where a later stage builds FROM this one:
// read here, in this stage's scope, as a fetch of this file).
func (r *fetchReader) instruction(n *parser.Node, within string, line int) {
	var words []string
	for a := n.Next; a != nil; a = a.Next {
		words = append(words, a.Value)
	}
	instr := strings.ToUpper(n.Value)
	at := fmt.Sprintf("%s:%d: %s%s", r.name, line, within, instr)
	switch {
	case instr == "FROM" && len(words) > 0 && within == "":
		img, _ := r.read(words[0], r.global, true)
		r.env, r.envs, r.whole = buildEnv{}, buildEnv{}, strings.EqualFold(img, "scratch")
		if base, ok := r.stages[strings.ToLower(img)]; ok {
			r.env, r.envs, r.whole = maps.Clone(base.envs), maps.Clone(base.envs), base.whole
		} else {
			r.fetch(at, words[0], r.global, true, true)
		}
		// By index (COPY --from=1), counted apart from the names: the
		// map's size counted both, so a stage after a named one had the
		// wrong index, and COPY --from of it read as an image.
		this := stage{r.envs, r.whole}
		r.stages[fmt.Sprint(r.n)] = this
		r.n++
		if len(words) >= 3 && strings.EqualFold(words[1], "AS") {
			r.stages[strings.ToLower(words[2])] = this
		}
	case instr == "ARG":
		scope := r.env
		if scope == nil {
			scope = r.global
		}
		for _, w := range words {
			k, def, hasDef := strings.Cut(w, "=")
			if r.env != nil && !r.whole {
				// In a stage FROM an image, that image's ENV of the same
				// name overrides an ARG (the builder's rule: ENV wins),
				// and only the engine knows it: the name is unread.
				delete(scope, k)
				continue
			}
			if v, given := r.args[k]; given {
				scope[k] = v
				continue
			}
			switch {
			case hasDef:
				// Here every name is the file's own (a stage FROM an
				// image took the branch above); a default that does not
				// read (a lexer's error) is left unset.
				if v, unread := r.read(def, scope, true); len(unread) == 0 {
					scope[k] = v
				} else {
					delete(scope, k)
				}
			case r.env != nil:
				// A global ARG named again in a stage takes the global's
				// value; one with none stays unset, as the builder has it.
				if v, ok := r.global[k]; ok {
					scope[k] = v
				}
			}
		}
	case r.env == nil:
		// Before the first FROM only ARG is read.
	case instr == "ENV":
		// name, value, separator, repeated
		for i := 0; i+1 < len(words); i += 3 {
			if v, unread := r.read(words[i+1], r.env, r.whole); len(unread) == 0 {
				r.env[words[i]], r.envs[words[i]] = v, v
			} else {
				delete(r.env, words[i])
				delete(r.envs, words[i])
			}
		}
	case instr == "ONBUILD" && n.Next != nil && len(n.Next.Children) > 0 && within == "":
		r.instruction(n.Next.Children[0], "ONBUILD ", line)
	case instr == "ADD" || instr == "COPY":
		for _, f := range n.Flags {
			if from, ok := strings.CutPrefix(f, "--from="); ok {
				r.fetch(at+" --from", from, r.env, r.whole, true)
			}
		}
		if instr == "COPY" || len(words) < 2 {
			return
		}
		for _, src := range words[:len(words)-1] {
			r.fetch(at, src, r.env, r.whole, false)
		}
	case instr == "RUN":
		for _, f := range n.Flags {
			m, ok := strings.CutPrefix(f, "--mount=")
			if !ok {
				continue
			}
			for _, kv := range strings.Split(m, ",") {
				// BuildKit reads a mount's keys in any case.
				k, v, _ := strings.Cut(strings.Trim(strings.TrimSpace(kv), `"'`), "=")
				if strings.EqualFold(strings.TrimSpace(k), "from") {
					r.fetch(at+" --mount from", strings.TrimSpace(v), r.env, r.whole, true)
				}
			}
		}
	}
}

// platformArgs are the builder's automatic global ARGs, valued as this
// machine's (the engine's own is the same on a local engine).
func platformArgs() buildEnv {
	plat := "linux/" + runtime.GOARCH
	return buildEnv{"BUILDPLATFORM": plat, "BUILDOS": "linux", "BUILDARCH": runtime.GOARCH, "BUILDVARIANT": "",
		"TARGETPLATFORM": plat, "TARGETOS": "linux", "TARGETARCH": runtime.GOARCH, "TARGETVARIANT": ""}
}

// buildEnv is what a Dockerfile's ARGs and ENVs hold at a line, as the
// builder expands a word with them (shell.EnvGetter).
type buildEnv map[string]string

func (e buildEnv) Get(k string) (string, bool) { v, ok := e[k]; return v, ok }

func (e buildEnv) Keys() []string { return slices.Collect(maps.Keys(e)) }

// isRemoteSource says whether an ADD source is fetched by the engine from
// the network (a URL, a git address) rather than read from the context.
func isRemoteSource(src string) bool {
	return strings.Contains(src, "://") || scpLike.MatchString(src)
}

// scpLike is a git address in scp's form (git@host:o/r.git, user@host:path).
var scpLike = regexp.MustCompile(`^[\w.-]+@[\w.-]+:`)

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
		if c.NeedsBuildKit == "" {
			c.ClassicDiffers = classicDiffers(name, root, c)
		} else {
			c.NewerBuildKit = newerBuildKitOnly(name, root)
		}
		c.Fetches = fetches(name, root, text, c.Args)
		for _, at := range cacheMounts(name, root) {
			devs = append(devs, cacheMountDeviation(whose, at))
		}
	}
	return &c, devs
}

// DockerfileProblems are what a task's Dockerfile holds that its build
// will refuse, each as "FILE:LINE: …": an instruction no builder knows
// (RUNN), which validate said ok and only the build refused (the new
// user of 2026-12-06). A Dockerfile that does not parse, or cannot be
// read, is left to the build, which says why.
func DockerfileProblems(b *model.Build) []string {
	if b == nil {
		return nil
	}
	name, text := filepath.Join(b.Context, b.Dockerfile), b.Inline
	if text == "" {
		data, err := readTaskFile(b.Context, name)
		if err != nil {
			return nil
		}
		text = string(data)
	} else {
		name = "dockerfile_inline"
	}
	var out []string
	root := parseDockerfile(text)
	for _, n := range instructions(root) {
		if _, ok := command.Commands[strings.ToLower(n.Value)]; !ok {
			word, _, _ := strings.Cut(strings.TrimSpace(n.Original), " ")
			out = append(out, fmt.Sprintf("%s:%d: unknown instruction %q: the build will refuse it (FROM, RUN, COPY, ADD, ENV, ARG, WORKDIR, USER, CMD, ENTRYPOINT… are the instructions)", name, n.StartLine, word))
		}
	}
	if len(out) == 0 {
		out = missingSources(name, root, *b)
	}
	return out
}

// dockerStage is one stage of a Dockerfile: its name (lower case, "" when
// unnamed), what its FROM names, and its instructions after the FROM.
type dockerStage struct {
	name, base string
	line       int
	nodes      []*parser.Node
}

// stagesOf splits a parsed Dockerfile into its stages.
func stagesOf(root *parser.Result) []dockerStage {
	var out []dockerStage
	for _, n := range instructions(root) {
		if strings.EqualFold(n.Value, "from") {
			args := nodeArgs(n)
			s := dockerStage{line: n.StartLine}
			if len(args) > 0 {
				s.base = strings.ToLower(args[0])
			}
			if len(args) >= 3 && strings.EqualFold(args[1], "as") {
				s.name = strings.ToLower(args[2])
			}
			out = append(out, s)
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].nodes = append(out[len(out)-1].nodes, n)
		}
	}
	return out
}

// nodeArgs are an instruction's words after its name.
func nodeArgs(n *parser.Node) []string {
	var out []string
	for a := n.Next; a != nil; a = a.Next {
		out = append(out, a.Value)
	}
	return out
}

// stageIndex is the stage a FROM, --from= or from= names (a name, or an
// earlier stage's number), before stage before; -1 for an image.
func stageIndex(stages []dockerStage, ref string, before int) int {
	ref = strings.ToLower(ref)
	if i, err := strconv.Atoi(ref); err == nil && i >= 0 && i < before {
		return i
	}
	for i := before - 1; i >= 0; i-- {
		if stages[i].name != "" && stages[i].name == ref {
			return i
		}
	}
	return -1
}

// stageDeps are the earlier stages stage i builds on or copies from.
func stageDeps(stages []dockerStage, i int) []int {
	var out []int
	if d := stageIndex(stages, stages[i].base, i); d >= 0 {
		out = append(out, d)
	}
	for _, n := range stages[i].nodes {
		for _, f := range n.Flags {
			var refs []string
			if v, ok := strings.CutPrefix(f, "--from="); ok {
				refs = append(refs, v)
			}
			if v, ok := strings.CutPrefix(f, "--mount="); ok {
				for _, field := range strings.Split(v, ",") {
					if k, val, ok := strings.Cut(field, "="); ok && strings.EqualFold(strings.TrimSpace(k), "from") {
						refs = append(refs, strings.TrimSpace(val))
					}
				}
			}
			for _, r := range refs {
				if d := stageIndex(stages, r, i); d >= 0 {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// classicDiffers names the first construct of a Dockerfile (root, b's)
// that the engine's classic builder builds otherwise than BuildKit's
// Dockerfile frontend, Harbor's builder (`docker compose build` on a
// current engine), "" when there is none or it did not parse (the
// twenty-first attacker's 1 and 3, each checked by building both ways):
//   - a Dockerfile's own ignore file (Dockerfile.dockerignore), which
//     BuildKit reads in place of .dockerignore and the classic builder
//     does not: a file it leaves out was in the image;
//   - a stage the image does not use: BuildKit skips it, the classic
//     builder builds it (a failing one failed the build);
//   - WORKDIR under a USER who is not root: BuildKit makes the directory
//     that user's, the classic builder root's (the agent could not write
//     its own working directory);
//   - a COPY or ADD wildcard that matches nothing in the context:
//     BuildKit copies nothing, the classic builder fails.
func classicDiffers(name string, root *parser.Result, b model.Build) string {
	if root == nil {
		return ""
	}
	if b.Inline == "" {
		df := cmp.Or(b.Dockerfile, "Dockerfile")
		if _, err := os.Lstat(filepath.Join(b.Context, df+".dockerignore")); err == nil {
			return fmt.Sprintf("%s.dockerignore: BuildKit leaves out what it names, the classic builder reads .dockerignore only", filepath.Base(df))
		}
	}
	stages := stagesOf(root)
	if len(stages) == 0 {
		return ""
	}
	target, used := usedStages(stages, b)
	for i := 0; i < target; i++ {
		if !used[i] {
			what := "stage " + strconv.Itoa(i)
			if stages[i].name != "" {
				what = "stage " + stages[i].name
			}
			return fmt.Sprintf("%s:%d: %s is not used by the image: BuildKit skips it, the classic builder builds it", name, stages[i].line, what)
		}
	}
	users := make([]string, len(stages))
	for i := 0; i <= target; i++ {
		user := ""
		if d := stageIndex(stages, stages[i].base, i); d >= 0 {
			user = users[d]
		}
		for _, n := range stages[i].nodes {
			args := nodeArgs(n)
			switch strings.ToLower(n.Value) {
			case "user":
				if len(args) > 0 {
					user = args[0]
				}
			case "workdir":
				if used[i] && user != "" && !rootUser(user) && len(args) > 0 {
					return fmt.Sprintf("%s:%d: WORKDIR %s under USER %s: BuildKit makes the directory the user's, the classic builder root's", name, n.StartLine, args[0], user)
				}
			case "copy", "add":
				if !used[i] || b.Inline != "" || len(args) < 2 || slices.ContainsFunc(n.Flags, func(f string) bool { return strings.HasPrefix(f, "--from=") }) {
					continue
				}
				for _, src := range args[:len(args)-1] {
					if !strings.ContainsAny(src, "*?[") || strings.Contains(src, "$") || strings.Contains(src, "..") || isRemoteSource(src) {
						continue
					}
					if m, err := filepath.Glob(filepath.Join(b.Context, src)); err == nil && !sentAny(b.Context, m) {
						return fmt.Sprintf("%s:%d: %s %s matches nothing in the context: BuildKit copies nothing, the classic builder fails", name, n.StartLine, strings.ToUpper(n.Value), src)
					}
				}
			}
		}
		users[i] = user
	}
	return ""
}

// usedStages is the stage a build makes its image of (its target, else
// the last) and the stages it builds from, that one included.
func usedStages(stages []dockerStage, b model.Build) (int, map[int]bool) {
	target := len(stages) - 1
	if b.Target != "" {
		if i := stageIndex(stages, b.Target, len(stages)); i >= 0 {
			target = i
		}
	}
	used := map[int]bool{}
	var reach func(int)
	reach = func(i int) {
		if used[i] {
			return
		}
		used[i] = true
		for _, d := range stageDeps(stages, i) {
			reach(d)
		}
	}
	reach(target)
	return target, used
}

// missingSources are a used stage's COPY and ADD sources named literally
// (no wildcard, variable, URL, heredoc or --from) that the build context
// does not send: every builder refuses them ("file not found in build
// context"), and validate said ok (a new user's COPY data.csv).
func missingSources(name string, root *parser.Result, b model.Build) []string {
	if root == nil || b.Inline != "" {
		return nil
	}
	stages := stagesOf(root)
	if len(stages) == 0 {
		return nil
	}
	_, used := usedStages(stages, b)
	var out []string
	for i, st := range stages {
		if !used[i] {
			continue
		}
		for _, n := range st.nodes {
			v := strings.ToLower(n.Value)
			args := nodeArgs(n)
			if (v != "copy" && v != "add") || len(args) < 2 || slices.ContainsFunc(n.Flags, func(f string) bool { return strings.HasPrefix(f, "--from=") }) {
				continue
			}
			for _, src := range args[:len(args)-1] {
				if strings.ContainsAny(src, "*?[$") || strings.HasPrefix(src, "<<") || strings.Contains(src, "..") || isRemoteSource(src) || filepath.IsAbs(src) {
					continue
				}
				p := filepath.Join(b.Context, src)
				if _, err := os.Lstat(p); err != nil || !sentAny(b.Context, []string{p}) {
					out = append(out, fmt.Sprintf("%s:%d: %s %s: no such file in the build context %s (or .dockerignore leaves it out): the build will refuse it", name, n.StartLine, strings.ToUpper(n.Value), src, b.Context))
				}
			}
		}
	}
	return out
}

// rootUser says whether a Dockerfile USER is root (by name or id, with
// or without a group).
func rootUser(u string) bool {
	name, _, _ := strings.Cut(u, ":")
	return name == "root" || name == "0"
}

// octalMode is a --chmod value in octal, which every BuildKit reads.
var octalMode = regexp.MustCompile(`^[0-7]{3,4}$`)

// newerBuildKitOnly names the first construct of a Dockerfile (root)
// that the BuildKit of an engine before Docker 23 builds otherwise than
// written when headroom's own, newer Dockerfile frontend asks it (the
// twenty-first attacker's 2, on Docker 20.10: `COPY --exclude` copied
// what it excludes; `COPY --chmod=u+x,g+x` made the file mode 0), "" when
// none. `--chmod` in octal, `--parents` and `--link` build as written.
func newerBuildKitOnly(name string, root *parser.Result) string {
	for _, n := range instructions(root) {
		instr := strings.ToUpper(n.Value)
		for _, f := range n.Flags {
			switch {
			case f == "--exclude" || strings.HasPrefix(f, "--exclude="):
				return fmt.Sprintf("%s:%d: %s --exclude", name, n.StartLine, instr)
			case strings.HasPrefix(f, "--chmod="):
				if v := strings.TrimPrefix(f, "--chmod="); !octalMode.MatchString(v) && !strings.Contains(v, "$") {
					return fmt.Sprintf("%s:%d: %s %s (not in octal)", name, n.StartLine, instr, f)
				}
			}
		}
	}
	return ""
}

// sentAny says whether any of paths (under the build context ctx) is
// sent to the build: one its .dockerignore leaves out is not there for a
// COPY (the twenty-second attacker's 6: `COPY *.local.cfg` whose only
// match .dockerignore names failed under the classic builder, which the
// check had not seen). An unreadable .dockerignore leaves every path in.
func sentAny(ctx string, paths []string) bool {
	if len(paths) == 0 {
		return false
	}
	pm, err := buildignore.Read(ctx)
	if err != nil || pm == nil {
		return true
	}
	for _, p := range paths {
		rel, err := filepath.Rel(ctx, p)
		if err != nil {
			return true
		}
		if out, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel)); err != nil || !out {
			return true
		}
	}
	return false
}
