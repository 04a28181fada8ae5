package messages

import "github.com/restorewatch/restorewatch/ingest/locale"

// The localized texts live in ingest/locale: canonical rewrites a localized
// restore message into the English text the matchers read, and
// looksLikeRestoreStat tells a 3014-shaped line in a language it does not
// know, which is then rejected rather than skipped.
var (
	canonical            = locale.Canonical
	looksLikeRestoreStat = locale.LooksLikeRestoreStat
)
