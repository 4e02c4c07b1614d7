// Package themes will hold the console's semantic colour roles (Text,
// Muted, OK, Warn, Danger, Guaranteed, Limit, OOM) for dark, light and
// high-contrast terminals.
package themes
