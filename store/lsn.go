package store

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// LSNFromLog converts the error log's "a:b:c" LSN (decimal VLF sequence, log
// block, slot) into msdb's numeric(25,0) form a·10^15 + b·10^5 + c, as
// canonical decimal text. The parts are bounded (b < 10^10, c < 10^5) so the
// number is the digits of a followed by b and c zero-padded; no big arithmetic
// is needed and a 25-digit value never overflows.
func LSNFromLog(s string) (string, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return "", fmt.Errorf("lsn %q: want a:b:c", s)
	}
	var n [3]uint64
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return "", fmt.Errorf("lsn %q: part %d is not a decimal number", s, i+1)
		}
		n[i] = v
	}
	if n[0] > 9_999_999_999 || n[1] >= 10_000_000_000 || n[2] >= 100_000 {
		return "", fmt.Errorf("lsn %q: part out of range", s)
	}
	if n[0] == 0 {
		if n[1] == 0 {
			return strconv.FormatUint(n[2], 10), nil
		}
		return fmt.Sprintf("%d%05d", n[1], n[2]), nil
	}
	return fmt.Sprintf("%d%010d%05d", n[0], n[1], n[2]), nil
}

// LSNToLog converts msdb's numeric LSN back to "a:b:c".
func LSNToLog(numeric string) (string, error) {
	s := strings.TrimLeft(strings.TrimSpace(numeric), "0")
	if s == "" {
		return "0:0:0", nil
	}
	if !isDigits(s) || len(s) > 25 {
		return "", fmt.Errorf("lsn %q: not a numeric(25,0)", numeric)
	}
	pad := strings.Repeat("0", 25-len(s)) + s
	a, _ := strconv.ParseUint(pad[:10], 10, 64)
	b, _ := strconv.ParseUint(pad[10:20], 10, 64)
	c, _ := strconv.ParseUint(pad[20:], 10, 64)
	return fmt.Sprintf("%d:%d:%d", a, b, c), nil
}

// CanonicalLSN normalises a numeric LSN as msdb exports it ("39000000115200001",
// "39000000115200001.0", with spaces or leading zeros) to canonical digits.
func CanonicalLSN(s string) (string, error) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if strings.Trim(s[i+1:], "0") != "" {
			return "", fmt.Errorf("lsn %q: has a fraction", s)
		}
		s = s[:i]
	}
	if !isDigits(s) {
		return "", fmt.Errorf("lsn %q: not a number", s)
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		s = "0"
	}
	if len(s) > 25 {
		return "", fmt.Errorf("lsn %q: more than 25 digits", s)
	}
	return s, nil
}

// CompareLSN compares two canonical numeric LSNs (CanonicalLSN's digits,
// no leading zeros): by length, then digit by digit.
func CompareLSN(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}
