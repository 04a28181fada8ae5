package store

import (
	"context"
	"time"
)

// Warehouse is the one contract every engine keeps (issue 41): what ingest,
// the CLI, the alert sender and the dashboard need of the warehouse, grouped
// by use. store/sqlite (the embedded default) and store/postgres (the shared
// warehouse of several servers) satisfy it; the contract test suite
// (store/storetest) holds both to it.
//
// Packages that need less still declare their own, narrower interfaces
// (analysis.Warehouse, plan.Source, web.Store, alert.Store); Warehouse is
// what a command opens and hands them.
type Warehouse interface {
	Admin
	ImportSink
	Derivation
	Pages
	Collector
	Tokens
	Alerts
}

// Admin is what owning the warehouse needs: its health, its identity, a
// consistent copy and a clean close.
type Admin interface {
	// Engine names the engine and, for a server, where it is ("sqlite
	// /var/lib/rw.db", "postgres db.example:5432/rw"); never a secret.
	Engine() string
	Ping(ctx context.Context) error
	// Check runs the engine's own consistency checks.
	Check(ctx context.Context) error
	// Backup writes a consistent copy of the warehouse to path, readable by
	// the same engine (a SQLite file; a PostgreSQL custom-format dump).
	Backup(ctx context.Context, path string) error
	// DataVersion changes whenever what the pages show may have changed.
	DataVersion(ctx context.Context) (string, error)
	HasTable(ctx context.Context, name string) (bool, error)
	// SetProgress has fn called as long operations (derivation, analysis)
	// move on; Report hands it one step.
	SetProgress(fn func(Progress))
	Report(p Progress)
	// Prune applies the retention: what it removes and what it keeps.
	Prune(ctx context.Context, r Retention, now time.Time) (PruneStats, error)
	Close() error
}

// Import is one stream of records on its way into the warehouse: a Sink that
// commits in batches (or whole, WholeInOne) and then reports what it added.
type Import interface {
	Sink
	// WholeInOne commits everything at Commit in one transaction; call it
	// before handing records.
	WholeInOne()
	// MarkPush makes the import a collector's push: Commit records the
	// batch applied, with its run records, in the transaction of its last
	// commit (with WholeInOne, its only one), so a push whose apply fails
	// midway leaves nothing and its resend applies it whole, once. A batch
	// another apply marked first commits nothing (Commit's summary says
	// every record was a duplicate).
	MarkPush(p PushMark)
	// Handed says how many records were handed in and which were rejected.
	Handed() (read int64, rejects []Reject)
	// Flush commits what is buffered.
	Flush() error
	// Commit commits the rest and reports; the restores are not derived yet.
	Commit() (ImportSummary, error)
	// CommitAndReconcile commits and derives the touched instances.
	CommitAndReconcile() (ImportSummary, error)
}

// ImportSink is where parsers' records go: imports, the files already read,
// and the facts an import is told rather than reads.
type ImportSink interface {
	NewImport(ctx context.Context, source, file string) (Import, error)
	ImportedFile(ctx context.Context, fingerprint string) (f ImportedFile, ok bool, err error)
	MarkImported(ctx context.Context, files []ImportedFile) error
	SetDefaultOffset(ctx context.Context, instance string, minutes int) error
	AddInflightSamples(ctx context.Context, instance string, samples []InflightSample) error
}

// Derivation turns stored facts into restores and restores into findings:
// reconciliation, the analysis' reads and writes, and the work left pending
// by a run that stopped.
type Derivation interface {
	// Reconcile derives the instances whose facts changed; ReconcileAll
	// derives every instance.
	Reconcile(ctx context.Context) error
	ReconcileAll(ctx context.Context) error
	InstanceIDs(ctx context.Context) ([]int64, error)
	RestoresPerInstance(ctx context.Context) (int64, error)
	CountAllRestores(ctx context.Context) (int64, error)
	AnalysisPending(ctx context.Context) (map[int64]int64, error)
	LoadSeries(ctx context.Context, ids []int64) ([]SeriesRestores, error)
	SaveFindings(ctx context.Context, instanceID, pending int64, series []Series, regs []Regression, exp []Exposure) error
	Pending(ctx context.Context) (PendingWork, error)
	CompletePending(ctx context.Context, analyse func(ctx context.Context, ids []int64) error) (PendingWork, error)
	Untimed(ctx context.Context) ([]Untimed, error)
	UntimedIn(ctx context.Context, instanceIDs []int64) (int64, error)
}

// Pages is what the dashboard, the CLI's listings, restore plans and the
// evidence report read, and the few writes a user makes from a page.
type Pages interface {
	Totals(ctx context.Context) (Totals, error)
	RTOCandidates(ctx context.Context) ([]RTOCandidate, error)
	ListExposures(ctx context.Context) ([]Exposure, error)
	InflightCurves(ctx context.Context, since time.Time) ([]InflightCurve, error)
	InflightCurveFor(ctx context.Context, instance, database string, started time.Time, tolerance time.Duration) (*InflightCurve, error)

	Restores(ctx context.Context, q RestoreQuery) (RestorePage, error)
	ListRestores(ctx context.Context, f RestoreFilter) ([]Restore, int, error)
	GetRestore(ctx context.Context, id int64) (*Restore, error)
	RestoresByID(ctx context.Context, ids []int64) ([]Restore, error)
	GetRestoreDetail(ctx context.Context, id int64) (*RestoreDetail, error)
	RelativeSpeeds(ctx context.Context, f RestoreFilter) ([]RelativeSpeed, error)
	RelativeByBuild(ctx context.Context) (byInstance, bySource map[string][]float64, measured int, err error)
	ChartPoints(ctx context.Context, f RestoreFilter) ([]ChartPoint, error)
	RestoreFactors(ctx context.Context, ids []int64) (map[int64]map[string]string, error)
	RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]RestoreRate, error)
	RestoreRatesOf(ctx context.Context, ids []int64) ([]RestoreRate, error)

	// The dashboard's fleet-wide orders, and what a server keeps of them
	// and of its aggregates for its next start.
	UpdateOrders(ctx context.Context, old FleetOrders) (FleetOrders, error)
	LoadOrders(ctx context.Context) (FleetOrders, error)
	LoadOrderHeads(ctx context.Context) (OrderHeads, error)
	SaveOrders(ctx context.Context, o FleetOrders) error
	Aggregates(ctx context.Context) ([]Aggregate, error)
	SaveAggregate(ctx context.Context, a Aggregate) error

	ListInstances(ctx context.Context, name string) ([]InstanceSummary, error)
	GetInstance(ctx context.Context, name string) (*InstanceSummary, error)
	HostHistory(ctx context.Context, instance string) ([]HostRecord, error)
	InstanceTags(ctx context.Context, instance string) (map[string]string, error)
	SetInstanceTags(ctx context.Context, instance string, tags map[string]string) error
	ListSeries(ctx context.Context, f SeriesFilter) ([]Series, error)
	ListWatches(ctx context.Context, f WatchFilter) ([]Watch, error)
	ListRegressions(ctx context.Context, f RegressionFilter) ([]Regression, error)
	GetRegression(ctx context.Context, id int64) (*Regression, error)
	SetRegressionStatus(ctx context.Context, id int64, status, note string) error

	// Backup history, for restore plans.
	InstanceBackups(ctx context.Context, instance string) ([]DatabaseBackups, error)
	BackupOfDevices(ctx context.Context, devices []string) (*DeviceBackup, error)
	BackupSets(ctx context.Context, instance, database string, logsFrom time.Time) ([]BackupSet, error)
	BackupDatabases(ctx context.Context) (map[string]bool, error)
	BackupReplicas(ctx context.Context, name, database string) (Replicas, error)
	FileFolders(ctx context.Context, instance string) (data, log string, err error)
}

// Collector is what a collector pass and a push record: runs, watermarks and
// the pushes already applied.
type Collector interface {
	StartRun(ctx context.Context, instance string, started time.Time) (int64, error)
	FinishRun(ctx context.Context, r CollectorRun) error
	LatestRuns(ctx context.Context) ([]CollectorRun, error)
	Runs(ctx context.Context, instance string, limit int) ([]CollectorRun, error)
	Watermark(ctx context.Context, instance, source string) (string, bool, error)
	SetWatermark(ctx context.Context, instance, source, value string) error
	PushApplied(ctx context.Context, collector, batch string) (bool, error)
	RecordPush(ctx context.Context, collector, batch string, records, added int64, runs ...CollectorRun) error
	AuthorizePush(ctx context.Context, collector string, instances []string) error
}

// Tokens are the collectors' push credentials and the instances each may
// push for.
type Tokens interface {
	CreateCollectorToken(ctx context.Context, name string, instances ...string) (string, error)
	CollectorTokens(ctx context.Context) ([]CollectorToken, error)
	RevokeCollectorToken(ctx context.Context, name string) error
	CollectorForToken(ctx context.Context, token string) (string, error)
	SetCollectorAGs(ctx context.Context, name string, ags []string) error
}

// Alerts is the outbox: conditions found, alerts routed to channels,
// deliveries claimed and marked, acknowledgements and silences.
type Alerts interface {
	SyncAlertConditions(ctx context.Context, kind string, found []AlertEvent) (int, error)
	EnqueueAlerts(ctx context.Context, es ...AlertEvent) error
	RouteAlerts(ctx context.Context, limit int, route func(*Alert) []AlertDelivery) (int, error)
	AlertTags(ctx context.Context, instance string) (map[string]string, error)
	ClaimDeliveries(ctx context.Context, channel, mode string, now, horizon time.Time, lease time.Duration, limit int) ([]Alert, error)
	MarkDeliveries(ctx context.Context, channel string, rs []DeliveryResult) error
	Alerts(ctx context.Context, f AlertFilter) ([]Alert, error)
	AckAlert(ctx context.Context, ref, by, why string) (Alert, error)
	Silences(ctx context.Context, since time.Time) ([]AlertSilence, error)
	AddSilence(ctx context.Context, s AlertSilence) (int64, error)
	EndSilence(ctx context.Context, id int64) error
	AlertDeliveryCounts(ctx context.Context) (map[string]int64, error)
	PruneAlerts(ctx context.Context, before time.Time) (int64, error)
}
