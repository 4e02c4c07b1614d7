package model

import "fmt"

// MinSecretLen is the shortest secret headroom will pass: shorter values
// cannot be redacted from output without mangling it.
const MinSecretLen = 6

// CheckSecret refuses a secret's value too short to redact from output
// (under MinSecretLen characters): the one rule both the agent settings
// and the runner hold a secret to.
func CheckSecret(value string) error {
	if len(value) < MinSecretLen {
		return fmt.Errorf("its value is shorter than %d characters, too short to redact from output safely", MinSecretLen)
	}
	return nil
}
