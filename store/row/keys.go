package row

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Occurrences counts identical client-output restores per file, for
// LogKey: one per import.
type Occurrences map[string]int

// LogKey identifies a log restore across re-imports and sources that print the
// same log (the ERRORLOG file, its archive after a cycle, xp_readerrorlog).
// Times are cut to centiseconds: the file has two fractional digits, the
// datetime that xp_readerrorlog returns has three.
//
// Client output shares one completion stamp (or --at) across the statements
// of a batch, so two identical statements of one file are told apart by
// occurrence, the nth of that content in its file (counted in seen): the
// same output saved twice (restore-output.txt and "restore-output (1).txt")
// is one restore, and re-importing a file adds nothing. A restore with no
// time at all is told apart by its position in its file.
func LogKey(seen Occurrences, instanceID int64, l *store.LogRestore) string {
	h := sha256.New()
	src := l.Origin.Source
	if src.ErrorLog() {
		src = store.SourceErrorLog
	}
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00%s\x00%t\x00%s\x00%d\x00%.3f",
		instanceID, src, l.Database, l.Kind, l.MessageID, l.CompletedAt.UnixMilli()/10,
		l.FirstLSN, l.LastLSN, l.Has3014, l.Statement, l.Pages, l.Seconds)
	switch {
	case l.CompletedAt.IsZero():
		fmt.Fprintf(h, "\x00%s\x00%d", l.Origin.File, l.Origin.Line)
	case l.Origin.Source == store.SourceMessages:
		k := l.Origin.File + "\x00" + string(h.Sum(nil))
		n := seen[k]
		seen[k] = n + 1
		fmt.Fprintf(h, "\x00#%d", n)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// HostHash is a host snapshot's content, without its time and origin: a
// live snapshot is kept only when it differs from the one before.
func HostHash(h *store.HostSnapshot) string {
	c := *h
	c.ObservedAt = time.Time{}
	c.Origin = store.Origin{}
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}
