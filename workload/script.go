package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/headroom-eval/headroom/workload/wire"
)

type timedLine struct {
	at   float64 // fraction of the step's duration
	text string
}

// script is the output a step prints, shaped like the tool it stands for.
type script struct {
	p     wire.Profile
	rng   *rand.Rand
	lines []timedLine

	successLines []string
}

func newScript(p wire.Profile, rng *rand.Rand) *script {
	s := &script{p: p, rng: rng}
	var texts []string
	switch p.Style {
	case "pip":
		texts = s.pip()
	case "apt":
		texts = s.apt()
	case "build":
		texts = s.build()
	case "pytest":
		texts = []string{
			"============================= test session starts ==============================",
			"platform linux -- Python 3.11.2, pytest-8.3.4, pluggy-1.5.0",
			fmt.Sprintf("collected %d items", 12+rng.IntN(20)),
			"",
			"tests/test_outputs.py ........                                           [ 40%]",
			"tests/test_model.py ............                                         [100%]",
		}
	case "python":
		for i := 1; i <= 6; i++ {
			texts = append(texts, fmt.Sprintf("iteration %d: log-likelihood %.2f", i, -2000/float64(i)-rng.Float64()*10))
		}
	case "edit":
		texts = []string{"reading src/app.py", "applying edit (3 hunks)", "wrote src/app.py"}
	}
	for i, t := range texts {
		s.lines = append(s.lines, timedLine{at: float64(i) / float64(len(texts)+1), text: t})
	}
	return s
}

var versions = map[string]string{
	"pandas": "2.2.3", "networkx": "3.4.2", "scikit-learn": "1.6.1", "numpy": "2.2.1",
	"scipy": "1.15.1", "pytest": "8.3.4", "uv": "0.5.21", "torch": "2.5.1",
}

func version(pkg string) string {
	if v, ok := versions[pkg]; ok {
		return v
	}
	return "1.0.0"
}

func (s *script) pip() []string {
	var out, names []string
	pkgs := append([]string(nil), s.p.Packages...)
	if len(pkgs) > 0 && (pkgs[0] == "pandas" || pkgs[0] == "scikit-learn") {
		pkgs = append(pkgs, "numpy", "scipy")
	}
	for _, p := range pkgs {
		out = append(out, "Collecting "+p,
			fmt.Sprintf("  Downloading %s-%s-cp311-cp311-manylinux_2_17_x86_64.whl (%.1f MB)", strings.ReplaceAll(p, "-", "_"), version(p), 1+s.rng.Float64()*30))
		names = append(names, p+"-"+version(p))
	}
	out = append(out, "Installing collected packages: "+strings.Join(pkgs, ", "))
	s.successLines = []string{"Successfully installed " + strings.Join(names, " ")}
	return out
}

func (s *script) apt() []string {
	out := []string{"Reading package lists...", "Building dependency tree...", "The following NEW packages will be installed:", "  " + strings.Join(s.p.Packages, " ")}
	for i, p := range s.p.Packages {
		out = append(out, fmt.Sprintf("Get:%d http://deb.debian.org/debian bookworm/main amd64 %s [%.1f MB]", i+1, p, 1+s.rng.Float64()*8))
	}
	for _, p := range s.p.Packages {
		out = append(out, "Unpacking "+p+" ...")
	}
	for _, p := range s.p.Packages {
		out = append(out, "Setting up "+p+" ...")
	}
	return out
}

func (s *script) build() []string {
	files := []string{"parser", "lexer", "ast", "typecheck", "codegen", "optimize", "runtime", "main"}
	var out []string
	for i, f := range files {
		out = append(out, fmt.Sprintf("[%3d%%] Building C object CMakeFiles/app.dir/src/%s.c.o", (i+1)*100/(len(files)+1), f))
	}
	out = append(out, "[100%] Linking C executable app")
	return out
}

// successLines, if set by a style, replace the default success summary.
func (s *script) success() []string {
	if s.successLines != nil {
		return s.successLines
	}
	switch s.p.Style {
	case "pytest":
		return []string{fmt.Sprintf("============================== %d passed in %.2fs ===============================", 24, float64(s.p.DurationMS)/1000)}
	case "build":
		return []string{"[100%] Built target app"}
	case "python":
		return []string{"converged; wrote /app/model.json"}
	}
	return nil
}

func (s *script) failure() []string {
	switch s.p.Style {
	case "pytest":
		return []string{"FAILED tests/test_outputs.py::test_structure - AssertionError: edge set differs",
			"========================= 1 failed, 23 passed in 2.10s ========================="}
	case "build":
		return []string{"src/codegen.c:212:9: error: use of undeclared identifier 'reg'", "make: *** [Makefile:14: all] Error 1"}
	case "pip":
		return []string{"ERROR: Could not find a version that satisfies the requirement"}
	}
	return []string{"Traceback (most recent call last):", "AssertionError: result does not match the expected output"}
}

func (s *script) missing(marker string) []string {
	if s.p.Style == "pytest" {
		return []string{"E   FileNotFoundError: " + marker + " was never produced",
			"========================= 1 failed, 0 passed in 0.10s ========================="}
	}
	return []string{"error: " + marker + " is missing: an earlier step did not finish"}
}
