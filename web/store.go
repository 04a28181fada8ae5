package web

import (
	"context"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// Store is what the dashboard reads and writes: exactly the methods its
// handlers call. *sqlite.DB satisfies it; tests may wrap it.
type Store interface {
	Ping(ctx context.Context) error
	DataVersion(ctx context.Context) (string, error)
	HasTable(ctx context.Context, name string) (bool, error)
	LatestRuns(ctx context.Context) ([]store.CollectorRun, error)
	Runs(ctx context.Context, instance string, limit int) ([]store.CollectorRun, error)
	InflightCurves(ctx context.Context, since time.Time) ([]store.InflightCurve, error)
	InflightCurveFor(ctx context.Context, instance, database string, started time.Time, tolerance time.Duration) (*store.InflightCurve, error)
	Totals(ctx context.Context) (store.Totals, error)
	RTOCandidates(ctx context.Context) ([]store.RTOCandidate, error)
	ListExposures(ctx context.Context) ([]store.Exposure, error)

	// Restores answers every list, export and API page of restores: one
	// filter, one meaning (store.RestoreQuery).
	Restores(ctx context.Context, q store.RestoreQuery) (store.RestorePage, error)
	ListRestores(ctx context.Context, f store.RestoreFilter) ([]store.Restore, int, error) // the knee findings' read
	UpdateOrders(ctx context.Context, old store.FleetOrders) (store.FleetOrders, error)
	// What a running server keeps for its next start (keep.go).
	LoadOrders(ctx context.Context) (store.FleetOrders, error)
	// The heads of the orders kept, for the list's first pages while the
	// orders load.
	LoadOrderHeads(ctx context.Context) (store.OrderHeads, error)
	SaveOrders(ctx context.Context, o store.FleetOrders) error
	Aggregates(ctx context.Context) ([]store.Aggregate, error)
	SaveAggregate(ctx context.Context, a store.Aggregate) error
	RestoresByID(ctx context.Context, ids []int64) ([]store.Restore, error)
	GetRestoreDetail(ctx context.Context, id int64) (*store.RestoreDetail, error)
	RelativeSpeeds(ctx context.Context, f store.RestoreFilter) ([]store.RelativeSpeed, error)
	RelativeByBuild(ctx context.Context) (byInstance, bySource map[string][]float64, measured int, err error)
	ChartPoints(ctx context.Context, f store.RestoreFilter) ([]store.ChartPoint, error)

	ListInstances(ctx context.Context, name string) ([]store.InstanceSummary, error)
	GetInstance(ctx context.Context, name string) (*store.InstanceSummary, error)
	HostHistory(ctx context.Context, instance string) ([]store.HostRecord, error)
	InstanceBackups(ctx context.Context, instance string) ([]store.DatabaseBackups, error)
	BackupOfDevices(ctx context.Context, devices []string) (*store.DeviceBackup, error)
	ListSeries(ctx context.Context, f store.SeriesFilter) ([]store.Series, error)
	// ListWatches lists the series watched since a restore beyond their usual (issue 37).
	ListWatches(ctx context.Context, f store.WatchFilter) ([]store.Watch, error)
	RestoreFactors(ctx context.Context, ids []int64) (map[int64]map[string]string, error)

	// Alerts: the outbox with its deliveries, acknowledgements, silences.
	Alerts(ctx context.Context, f store.AlertFilter) ([]store.Alert, error)
	AckAlert(ctx context.Context, ref, by, why string) (store.Alert, error)
	Silences(ctx context.Context, since time.Time) ([]store.AlertSilence, error)
	AddSilence(ctx context.Context, s store.AlertSilence) (int64, error)
	EndSilence(ctx context.Context, id int64) error
	AlertDeliveryCounts(ctx context.Context) (map[string]int64, error)

	GetRegression(ctx context.Context, id int64) (*store.Regression, error)
	SetRegressionStatus(ctx context.Context, id int64, status, note string) error

	// Restore plans and the RTO projections made from them read what a
	// plan reads (ListRegressions among it), and the fleet's rates of
	// chosen restores.
	plan.Source
	RestoreRatesOf(ctx context.Context, ids []int64) ([]store.RestoreRate, error)
}
