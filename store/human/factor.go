package human

// factorLabels are the words for the analysis's factor names (SPEC §6.1,
// analysis.FactorNames) and for the conditions the known-issue catalogue
// keys on (analysis.KnownIssue.Conditions). The machine keys stay in JSON
// and CSV; people read these. A test checks that every factor the analysis
// can emit and every condition of the shipped catalogue has words here.
var factorLabels = map[string]string{
	// Factors: what can differ between the restores before and after a change.
	"instance_build":    "Instance build",
	"source_build":      "Source build (of the backup)",
	"source_server":     "Source server",
	"compression":       "Backup compression",
	"encryption":        "Backup encryption",
	"checksum":          "Backup checksum",
	"device_kind":       "Backup device",
	"stripes":           "Stripes (backup files)",
	"buffer_count":      "Buffer count",
	"max_transfer_size": "Max transfer size",
	"io_alignment":      "File-system I/O alignment (bytes)",
	"ifi":               "Instant file initialisation",
	"cpu_count":         "CPU count",
	"memory":            "Memory",
	"loaded_modules":    "Loaded non-Microsoft modules",
	"trace_flags":       "Trace flags",
	"size_class":        "Database size class",
	"destination":       "Restored to (folders)",

	// Known-issue conditions: facts that must hold for an issue to apply.
	"compressed":        "Compressed backup",
	"encrypted":         "Encrypted backup",
	"tde":               "Transparent data encryption",
	"ekm":               "TDE key in an EKM provider",
	"io_alignment_4096": "4 KiB I/O alignment",
	"vdi":               "Virtual-device (VDI) backup",
	"striped":           "Striped backup (several files)",
	"linux":             "SQL Server on Linux",
	"many_vlfs":         "Many virtual log files",
	"automatic_seeding": "Availability-group automatic seeding",
}

// FactorLabel returns the words for an analysis factor or known-issue
// condition key ("source_build" → "Source build (of the backup)",
// "io_alignment_4096" → "4 KiB I/O alignment"). A key it does not know (a
// condition from a user's own catalogue) is returned as it is, since it is
// the only name there is; HasFactorLabel tells the two cases apart.
func FactorLabel(key string) string {
	if l, ok := factorLabels[key]; ok {
		return l
	}
	return key
}

// HasFactorLabel reports whether key has words of its own.
func HasFactorLabel(key string) bool {
	_, ok := factorLabels[key]
	return ok
}

// deviceWords are the words for a backup device kind (store.Device*).
var deviceWords = map[string]string{
	"local": "local disk", "unc_share": "network share (UNC)", "url": "URL (cloud storage)",
	"virtual_device": "virtual device (VDI)", "tape": "tape",
}

// FactorValue words one value of a factor for people: a device kind in
// words ("unc_share" → "network share (UNC)"), a blank as "unknown", any
// other value as it is. Every surface — pages, reports, the CLI — says a
// factor's values this way; JSON and CSV keep the keys.
func FactorValue(factor, v string) string {
	switch {
	case v == "":
		return "unknown"
	case factor == "device_kind":
		if w, ok := deviceWords[v]; ok {
			return w
		}
	}
	return v
}
