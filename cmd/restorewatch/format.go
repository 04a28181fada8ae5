package main

import "github.com/restorewatch/restorewatch/store/human"

func formatBytes(b *int64) string {
	if b == nil || *b <= 0 {
		return "-"
	}
	return human.Bytes(*b)
}

func formatRate(v *float64) string {
	if v == nil {
		return "-"
	}
	return human.MiBps(*v)
}

// group writes a count with thousands separated ("1,234").
func group(n int) string { return human.Count(int64(n)) }

func namedBuild(n func(string) string, v string) string {
	if v == "" {
		return "-"
	}
	if n == nil {
		return v
	}
	if name := n(v); name != "" {
		return name + " (" + v + ")"
	}
	return v
}

// printable keeps a terminal safe from control characters a server name or
// database name may hold (human.Printable).
func printable(s string) string { return human.Printable(s) }
