package view

// Restores is the restores list: filters, one page of rows, export links.
type Restores struct {
	Empty  bool // the warehouse holds no restores at all
	Filter RestoreFilter
	Kinds  []Option
	Sorts  []Option
	Rows   []RestoreRow
	// Knees are the restores of the filter's instance and database (all,
	// when it names neither) that slowed sharply part-way.
	Knees  []KneeRow
	Paging Paging
	Total  string
	Note   string // e.g. why some restores are not in this order
	// NoMatch says that the instance or database typed matches no name (or
	// several), with the closest names.
	NoMatch string
	CSV     string
	JSON    string
}

// RestoreFilter is the filter form as the user filled it.
type RestoreFilter struct {
	Instance, Database, Kind, From, To, Build, Source, Sort string
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// RestoreRow is one restore in a table.
type RestoreRow struct {
	URL                         string
	At                          string
	Instance, InstanceURL       string
	Database, DatabaseURL, Kind string
	Duration, DurationSource    string
	Size, Throughput, Read      string
	Build, BuildName, Source    string
	Outlier                     bool
	Knee                        string // "slowed after 55 %" when its progress slowed sharply; "" otherwise
}
