package store

// Untimed is a count of log records that reconciliation kept but could place
// nowhere in time, from one source: they are stored, not restores, until an
// import dates them.
type Untimed struct {
	Source    Source `json:"source"`
	Records   int64  `json:"records"`
	Instances int64  `json:"instances"`
}

// Remedy says how to date the records, in the words of the import command.
func (u Untimed) Remedy() string {
	switch u.Source {
	case SourceDbatools:
		return "import the instance's restore history (Get-DbaDbRestoreHistory | Export-Csv, or the history export), which places each Restore-DbaDatabase row"
	case SourceMessages:
		return "re-import the client output with --at (the time the statements completed)"
	}
	return "import a source that states when the restores completed (the error log or the restore history)"
}
