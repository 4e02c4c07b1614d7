package model

// Image names a task may give for headroom's real Debian userland images
// (made by `headroom images build --real`, each backend's own way):
// plain, and with the data-science stack in apt's cache.
const (
	BuiltinDebian      = "builtin-debian"
	BuiltinDebianCache = "builtin-debian-cache"
)
