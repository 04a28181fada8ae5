package errorlog

import "github.com/restorewatch/restorewatch/ingest/locale"

// The localized texts live in ingest/locale: canonical rewrites a localized
// restore or backup line (its text column) into the English text the
// classifier reads, and looksLikeRestoreStat tells a 3014-shaped line in a
// language it does not know, which is then rejected rather than skipped.
var (
	canonical            = locale.Canonical
	looksLikeRestoreStat = locale.LooksLikeRestoreStat
)
