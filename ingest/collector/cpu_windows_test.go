//go:build windows

package collector_test

// cpuSeconds is 0 on Windows, where the benchmark reports wall time only.
func cpuSeconds() float64 { return 0 }
