package report

import "strings"

// mdHTML escapes the three characters that make markdown raw HTML: a
// task's own text ("<script>x</script>" printed by a step as a measure's
// unit, a task named "a<img src=x>") is shown as text in a rendered
// report, never run as markup. Quotes are left: outside a tag they are
// text, and benign names keep their look.
var mdHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mdText is a task's text on a markdown line outside a table (a list
// item, a heading): its HTML escaped.
func mdText(s string) string { return mdHTML.Replace(s) }

// mdCode is text in a markdown code span inside a table's cell: HTML is
// already text there (an escape would show as "&lt;"), but a `|` still
// ends the cell in GitHub's tables.
func mdCode(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// csvText is a text cell of the CSV form (a task's or agent's name, a
// reason, a label): one a spreadsheet would read as a formula, starting
// with = + - @ a tab or a carriage return, gets a leading ' (OWASP's
// advice on CSV injection), so "=HYPERLINK(...)" is shown, not
// evaluated, whatever its quotes. Numeric columns are never passed
// here: a negative number stays a number.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
