//go:build !unix

package web

// fdLimit is unknown here: the connection cap takes its default.
func fdLimit() int { return 0 }
