package view

// KneeRow is a restore whose progress slowed sharply part-way, as the
// overview, instance, database, restores and live pages list it (from one
// analysis.KneeFinding each).
type KneeRow struct {
	Instance, InstanceURL string
	Database, DatabaseURL string
	Started               string
	Running               bool
	// URL is the restore's page, or the database page's progress curves
	// while no restore matches the run.
	URL      string
	Label    string // "slowed after 55 %: 1.7 GiB/s → 175 MiB/s"
	Percent  string // "55 %"
	Before   string // the copy rate before the knee
	After    string
	Slowdown string // "10×"
	Size     string
	Issues   []KneeIssue
	Checks   []KneeCheck
}

// KneeIssue is a known issue whose build range and conditions the restore
// meets.
type KneeIssue struct {
	ID, Title, Why, Fixed string
}

// KneeCheck is one check that may explain a knee, with the command that
// performs it.
type KneeCheck struct {
	Name, Why, Command string
	Fits               bool
}

// Lead is the first check the restore's facts point to, or "".
func (k KneeRow) Lead() string {
	for _, c := range k.Checks {
		if c.Fits {
			return c.Name
		}
	}
	return ""
}
