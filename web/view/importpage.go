package view

// Import is the upload page, with the summary of an upload when one ran.
type Import struct {
	Available bool // uploads can run (the server has a warehouse to write)
	Kinds     []Option
	Instance  string
	Database  string
	MaxMiB    string
	Problem   string
	Results   []ImportResult
}

// ImportResult is what one uploaded file did (SPEC §3.2).
type ImportResult struct {
	File, Kind                        string
	Read, Added, Duplicates, Rejected string
	Rejects                           []string // "file:line: reason"
	MoreRejects                       string
	Instances                         []Link
	Error                             string
}
