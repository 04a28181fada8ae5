//go:build unix

package web

import "syscall"

// fdLimit is the process's soft limit of open descriptors (0 if unknown).
func fdLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
