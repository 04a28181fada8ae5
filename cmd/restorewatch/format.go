package main

import (
	"fmt"
	"strings"
	"unicode"
)

// FormatDuration prints seconds as "45.2 s", "12:05", "3:04:05" or, over a
// day, "1 d 02:03:04" — never wrapping at 24 h. Unknown is "unknown".
func FormatDuration(s *float64) string {
	if s == nil || *s <= 0 {
		return "unknown"
	}
	v := *s
	if v < 60 {
		return fmt.Sprintf("%.1f s", v)
	}
	t := int64(v + 0.5)
	d, h, m, sec := t/86400, t/3600%24, t/60%60, t%60
	switch {
	case d > 0:
		return fmt.Sprintf("%d d %02d:%02d:%02d", d, h, m, sec)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}

func formatBytes(b *int64) string {
	if b == nil {
		return "-"
	}
	v := float64(*b)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 || u == "TiB" {
			if u == "B" {
				return fmt.Sprintf("%.0f B", v)
			}
			return fmt.Sprintf("%.1f %s", v, u)
		}
		v /= 1024
	}
	return ""
}

func formatRate(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *v)
}

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
// database name may hold.
func printable(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}
