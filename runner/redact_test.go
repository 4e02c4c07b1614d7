package runner

import (
	"encoding/base64"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A multi-line secret reaches the redactor a line at a time: each of its
// lines is masked on its own, as well as the whole; short lines (which
// would mask ordinary output) and other secrets' text are left alone.
func TestRedactorMasksEachLineOfAMultiLineSecret(t *testing.T) {
	pem := "-----BEGIN PRIVATE KEY-----\r\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw\r\n  ggSjAgEAAoIBAQC7Vx1  \r\nab\r\n-----END PRIVATE KEY-----\r\n"
	r := Redactor(map[string]string{"PEM": pem, "TOKEN": "tok-123456", "SAME": "tok-123456"})
	cases := map[string]string{
		"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw": "[redacted PEM]",
		"key: ggSjAgEAAoIBAQC7Vx1 (line 2)":    "key: [redacted PEM] (line 2)",
		"-----BEGIN PRIVATE KEY-----":          "[redacted PEM]",
		"ab cd":                                "ab cd",
		pem:                                    "[redacted PEM]",
		"Authorization: tok-123456":            "Authorization: [redacted SAME]",
		"echo MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw | x": "echo [redacted PEM] | x",
	}
	for in, want := range cases {
		if got := r(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	for _, line := range strings.Split(pem, "\n") {
		if l := strings.TrimSpace(line); len(l) >= model.MinSecretLen && strings.Contains(r(line), l) {
			t.Errorf("line %q of the secret survives: %q", l, r(line))
		}
	}
}

// Text cut before it is masked keeps a secret's start before the cut
// mark, or its end after it: each is masked, so clip-then-redact leaks
// nothing of 6 characters or more (the reward reason quoted the first 40
// characters of a --pass-env secret).
func TestRedactorMasksASecretCutShort(t *testing.T) {
	redact := Redactor(map[string]string{"TOKEN": "SeCrEt0123456789012345678901234567890123456789-tail"})
	for in, want := range map[string]string{
		`is not a number: "SeCrEt0123456789012345678901234567890123…"`: `is not a number: "[redacted TOKEN]…"`,
		"…789-tail and more":          "…[redacted TOKEN] and more",
		"x SeCrEt01… y …3456789-tail": "x [redacted TOKEN]… y …[redacted TOKEN]",
		"cut at Secr… (too short)":    "cut at Secr… (too short)",
		"nothing cut SeCrEt0":         "nothing cut SeCrEt0",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A shell trace (bash -x) writes a value with a single quote as
// 'hunter2 pa'\”ss-SuperSecret9', and one with control characters as
// $'...' (${v@Q}, printf %q, newer bash's xtrace): each form is masked,
// for the whole value and for each line of a multi-line one (the quoted
// secret reached trials.jsonl, log.txt and the progress line whole).
func TestRedactorMasksTheFormsAShellTraceWritesASecretIn(t *testing.T) {
	redact := Redactor(map[string]string{
		"TOKEN": "hunter2 pa'ss-SuperSecret9",
		"CTRL":  "a\tb\x01c\x1bd'e\\f-long-enough",
		"PEM":   "first line's key\nsecond-line-of-it",
	})
	for in, want := range map[string]string{
		`+ check 'hunter2 pa'\''ss-SuperSecret9'`:               `+ check '[redacted TOKEN]'`,
		`+ auth='Bearer hunter2 pa'\''ss-SuperSecret9'`:         `+ auth='Bearer [redacted TOKEN]'`,
		`+ check hunter2 pa'ss-SuperSecret9`:                    `+ check [redacted TOKEN]`,
		`+ check $'a\tb\001c\Ed\'e\\f-long-enough'`:             `+ check $'[redacted CTRL]'`,
		`+ check 'a` + "\tb\x01c\x1bd" + `'\''e\f-long-enough'`: `+ check '[redacted CTRL]'`,
		`+ k=$'first line\'s key\nsecond-line-of-it'`:           `+ k=$'[redacted PEM]'`,
		`+ k='first line'\''s key`:                              `+ k='[redacted PEM]`,
		`+ check 'pa'\''ss'`:                                    `+ check 'pa'\''ss'`,
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// What bash itself writes a value in — `declare -p`, `export -p`,
// printf %q, a trace — each masked (the sixteenth attacker's 8:
// declare -p and printf %q showed it).
func TestRedactorMasksWhatBashWritesASecretAs(t *testing.T) {
	// Each secret, and a piece of it that no masked line may hold once
	// backslashes are taken out.
	for secret, tell := range map[string]string{
		`Zq9s3cr3t VALUE$abc'def"XYZ`:           "3cr3t",
		"back\\slash`tick{brace}|pipe;semi&amp": "brace",
		"~tilde#hash at the start":              "tilde",
		"#hash-first*star?query[x]":             "query",
		"Zq9s3cr3tVALUE42 é":                    "VALUE42",
	} {
		redact := Redactor(map[string]string{"K": secret})
		out, err := exec.Command("bash", "-c", `K=$1; declare -p K; export K; export -p | grep ' K='; printf '%q\n' "$K"; set -x; : "$K"; [[ x == "$K" ]]; [[ "sk-$K" == "sk-$K" ]]`, "bash", secret).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if got := redact(line); strings.Contains(strings.ReplaceAll(got, `\`, ""), tell) {
				t.Errorf("secret %q: bash wrote %q, redacted to %q", secret, line, got)
			}
		}
	}
}

// A line past 1 MiB reaches the step's output in pieces, each but the
// last ending in a newline (LineWriter): a secret across a cut is masked
// whole, each stream's pieces joined with their own, and the pieces'
// text joined is the line's, masked.
func TestPieceMaskMasksAcrossACut(t *testing.T) {
	secret := "Zq9s3cr3tVALUEabcdefXYZ"
	secrets := map[string]string{"K": secret}
	line := strings.Repeat("a", 100) + secret + strings.Repeat("b", 10)
	for cut := 90; cut <= 100+len(secret)+10; cut++ {
		redact, span := redaction(secrets)
		p := &pieceMask{redact: redact, span: span}
		var got strings.Builder
		for _, piece := range []struct{ stream, text string }{
			{"stdout", line[:cut] + "\n"},
			{"stderr", "other " + secret},
			{"stdout", line[cut:]},
		} {
			out := p.mask(piece.stream, piece.text)
			if strings.Contains(out, secret[1:]) || strings.Contains(out, secret[:len(secret)-1]) {
				t.Errorf("cut at %d: %s piece %q", cut, piece.stream, out)
			}
			if piece.stream == "stdout" {
				got.WriteString(strings.TrimSuffix(out, "\n"))
			}
		}
		if want := strings.Repeat("a", 100) + "[redacted K]" + strings.Repeat("b", 10); got.String() != want {
			t.Errorf("cut at %d: the line's pieces are %q, want %q", cut, got.String(), want)
		}
	}
}

// A secret's hex and base64 are masked wherever the secret sits in what
// was encoded: the trace of a verifier that sends `printf %s
// "judge:$KEY" | base64` as a header showed the key's base64 (the
// twentieth attacker's 4). What the secret does not wholly decide (the
// characters its neighbours share) stays.
func TestRedactorMasksASecretsHexAndBase64(t *testing.T) {
	const secret = "s3cr3t-KEY-0123456789"
	redact := Redactor(map[string]string{"KEY": secret})
	for _, c := range []struct{ prefix, encoded string }{
		{"curl -H 'Authorization: Basic ", base64.StdEncoding.EncodeToString([]byte("judge:" + secret))},
		{"auth=", base64.StdEncoding.EncodeToString([]byte("ab" + secret + "!"))},
		{"auth=", base64.URLEncoding.EncodeToString([]byte("a" + secret))},
		{"auth=", base64.RawStdEncoding.EncodeToString([]byte(secret))},
		{"sig=", hex.EncodeToString([]byte("x" + secret))},
		{"SIG=", strings.ToUpper(hex.EncodeToString([]byte(secret)))},
	} {
		got := redact(c.prefix + c.encoded)
		rest, ok := strings.CutPrefix(got, c.prefix)
		if !ok || !strings.Contains(rest, "[redacted KEY]") {
			t.Errorf("%q: not masked: %q", c.prefix+c.encoded, got)
			continue
		}
		// What is left is the neighbours' (at most six bytes here) and
		// the partial groups the secret shares with them.
		if left := strings.Replace(rest, "[redacted KEY]", "", 1); len(left) > 16 {
			t.Errorf("%q: %d characters of its encoding left: %q", c.prefix+c.encoded, len(left), got)
		}
	}
	if got := redact("hello world, nothing secret"); got != "hello world, nothing secret" {
		t.Errorf("plain text changed: %q", got)
	}
}
