package store

import (
	"slices"
	"strings"
)

// DestinationFolders is the "destination" factor: the folders a restore
// wrote the database's files to (msdb's restorefile), each once, sorted,
// compared without case as Windows paths are; "" when no source said.
// Moving the data files to another volume changes it.
func DestinationFolders(files []string) string {
	var dirs []string
	seen := map[string]bool{}
	for _, f := range files {
		i := strings.LastIndexAny(f, `\/`)
		if i < 0 {
			continue
		}
		d := f[:i+1]
		if k := strings.ToLower(d); !seen[k] {
			seen[k] = true
			dirs = append(dirs, d)
		}
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return strings.Join(dirs, " | ")
}

// SizeClass buckets a backup size by powers of ten, so "the database grew
// into a new class" can be a factor without every byte being a change.
func SizeClass(bytes int64) string {
	const gib = 1 << 30
	switch {
	case bytes <= 0:
		return ""
	case bytes < gib:
		return "< 1 GiB"
	case bytes < 10*gib:
		return "1–10 GiB"
	case bytes < 100*gib:
		return "10–100 GiB"
	case bytes < 1024*gib:
		return "100 GiB–1 TiB"
	}
	return "≥ 1 TiB"
}
