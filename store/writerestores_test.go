package store

import (
	"fmt"
	"hash/fnv"
	"testing"
)

// TestContentHashForm checks the fast content hash against the "%v|" text
// form it replaced, so the hashes stored by earlier versions stay valid and
// unchanged restores are not rewritten after an upgrade.
func TestContentHashForm(t *testing.T) {
	f, i, b := 12.5, int64(-7), true
	rows := [][]any{
		{int64(1), int64(2), int64(0), nil, int64(5), "db\u00e9|x", "FULL", 1e21, 1234567.0, 0.0001, &f, &i, &b, (*float64)(nil), (*int64)(nil), (*bool)(nil), true, 3, "", float32(1.5)},
	}
	for _, v := range rows {
		h := fnv.New64a()
		for k, x := range v {
			if k == 2 {
				continue
			}
			switch x := x.(type) {
			case *float64:
				if x == nil {
					h.Write([]byte("nil|"))
				} else {
					fmt.Fprintf(h, "%v|", *x)
				}
			case *int64:
				if x == nil {
					h.Write([]byte("nil|"))
				} else {
					fmt.Fprintf(h, "%d|", *x)
				}
			case *bool:
				if x == nil {
					h.Write([]byte("nil|"))
				} else {
					fmt.Fprintf(h, "%t|", *x)
				}
			default:
				fmt.Fprintf(h, "%v|", x)
			}
		}
		if want, got := int64(h.Sum64()>>1), contentHash(v); got != want {
			t.Errorf("contentHash(%v) = %d, want %d", v, got, want)
		}
	}
}
