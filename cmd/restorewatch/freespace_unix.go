//go:build linux || darwin

package main

import "syscall"

// freeSpace returns the bytes an unprivileged user may still write under
// dir; ok is false when the system does not say.
func freeSpace(dir string) (free int64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
