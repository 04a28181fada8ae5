package messages

import (
	"regexp"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// A backup file's name often says its kind: Ola Hallengren's FULL and DIFF
// folders and _FULL_/_DIFF_ names, "_diff.bak", "Differential".
var (
	reDiffName = regexp.MustCompile(`(?i)(^|[^a-z])(diff|differential|dif)([^a-z]|$)`)
	reFullName = regexp.MustCompile(`(?i)(^|[^a-z])(full)([^a-z]|$)`)
)

// seqState is what a database's last restore in this text was.
type seqState struct {
	database   bool // a RESTORE DATABASE (full or differential)
	norecovery bool // its statement said NORECOVERY (or STANDBY)
}

// fullOrDiff settles the kind of a restore ending now. The 3014 text of a
// RESTORE DATABASE is the same for a full and a differential, so it is
// KindFullOrDiff unless the text says more: the statement restores a SQL
// Server 2022 snapshot backup (METADATA_ONLY: a full), the backup file's
// name says FULL or DIFF, or the statement follows a NORECOVERY RESTORE
// DATABASE of the same database with no log restore between — a
// differential on its full base, which that makes the previous one.
func (p *parser) fullOrDiff(kind store.Kind, db string, e echo) store.Kind {
	key := strings.ToLower(db)
	prev, had := p.seq[key]
	if kind != store.KindFull {
		p.seq[key] = seqState{}
		return kind
	}
	k := store.KindFullOrDiff
	switch {
	case e.metadataOnly:
		k = store.KindFull
	case e.device != "" && reDiffName.MatchString(e.device):
		k = store.KindDiff
	case e.device != "" && reFullName.MatchString(e.device):
		k = store.KindFull
	case had && prev.database && prev.norecovery:
		k = store.KindDiff
		p.rekind(db, store.KindFull)
	}
	p.seq[key] = seqState{database: true, norecovery: e.norecovery}
	return k
}

// rekind settles the kind of the newest held restore of db, when its own
// text left it open.
func (p *parser) rekind(db string, k store.Kind) {
	for _, held := range [][]store.LogRestore{p.undated, p.ready} {
		for i := len(held) - 1; i >= 0; i-- {
			if strings.EqualFold(held[i].Database, db) {
				if held[i].Kind == store.KindFullOrDiff {
					held[i].Kind = k
				}
				return
			}
		}
	}
}

// recovered notes that db was recovered: a RESTORE DATABASE after this
// starts a new chain.
func (p *parser) recovered(db string) {
	delete(p.seq, strings.ToLower(db))
}
