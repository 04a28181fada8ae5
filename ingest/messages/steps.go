package messages

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
)

// recoveryStep reports whether a 3014 line ends a statement that read no
// backup: "RESTORE DATABASE d WITH RECOVERY" (or STANDBY) after a NORECOVERY
// chain prints "successfully processed 0 pages" and no "Processed ... pages
// for database" line, and writes no restorehistory row. Other 0-page
// statements are restores: one echoed with FROM read a backup (WITH
// METADATA_ONLY restores a snapshot backup and reads no page), one with
// "Processed 0 pages ... on file N" lines read a backup set (an empty log
// backup), and an unechoed RESTORE LOG is no recovery step (only a bare
// echoed statement, no FROM, says so for a log).
func (s *statement) recoveryStep(d done3014) bool {
	if d.pages != 0 || s.database != "" || s.echo.from || s.echo.metadataOnly {
		return false
	}
	return s.echo.database != "" || strings.HasPrefix(d.statement, "RESTORE DATABASE")
}

// recoveryStep sets a recovery step aside. Its seconds are the recovery of
// the restore it completes: when that restore is still waiting in this
// batch (same database, or the last one when the step names none), they
// become its recovery time and the line one of its phases.
func (p *parser) recoveryStep(cur statement, d done3014) {
	p.st.Ignored[RuleRecoveryStep]++
	db := unwrap.Name(firstOf(cur.hint, cur.echo.database))
	p.recovered(db)
	for i := len(p.undated) - 1; i >= 0; i-- {
		l := &p.undated[i]
		if db != "" && !strings.EqualFold(l.Database, db) {
			continue
		}
		if l.Recovery == nil {
			l.Recovery = &store.RecoveryTiming{Seconds: int64(math.Round(d.seconds))}
		}
		p.recovered(l.Database)
		l.Phases = append(l.Phases, cur.phases...)
		l.Phases = append(l.Phases, store.Phase{Text: fmt.Sprintf("%s WITH RECOVERY: %.3f seconds", d.statement, d.seconds)})
		return
	}
}

func firstNonZero(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// clip shortens s for a reject reason, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// kindOf maps a 3014 statement to a restore kind; file and page restores
// print "RESTORE DATABASE ... FILE=<name>" (or PAGE=).
func kindOf(stmt string) store.Kind {
	switch {
	case strings.HasPrefix(stmt, "RESTORE LOG"):
		return store.KindLog
	case strings.Contains(stmt, "FILE=") || strings.Contains(stmt, "FILEGROUP="):
		return store.KindFile
	case strings.Contains(stmt, "PAGE="):
		return store.KindPage
	}
	return store.KindFull // full or differential: fullOrDiff decides
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
