package store

import "time"

// ImportedFile is a file an import read to its end and committed, known by
// a fingerprint of its content and of the options that shaped its records.
type ImportedFile struct {
	Fingerprint string
	Path        string
	Size        int64
	Records     int64 // records the file handed in
	Rejected    int64 // lines it rejected
	ImportedAt  time.Time
}
