// Command restorewatch keeps every SQL Server restore, measures it, and
// explains every slowdown. See README.md and SPEC §6.1 for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "dev"

// CLI is the command line of SPEC §6.1.
type CLI struct {
	DB             string `name:"db" env:"RW_DB" default:"restorewatch.db" help:"Warehouse: a SQLite file, or a postgres://user@host/database URL shared by several servers (its password from RW_DB_PASSWORD_FILE or RW_DB_PASSWORD, never the command line; TLS verified unless the URL sets sslmode)."`
	BuildReference string `name:"build-reference" help:"A newer dbatools-format build list (JSON) to name builds with." type:"existingfile"`

	Import      ImportCmd      `cmd:"" help:"Import offline files: errorlog, history (CSV) or messages."`
	Restores    RestoresCmd    `cmd:"" help:"List restores."`
	Analyze     AnalyzeCmd     `cmd:"" help:"Re-derive the restores whose facts changed (all with --rederive) and recompute every finding."`
	Regressions RegressionsCmd `cmd:"" help:"List regressions."`
	Report      ReportCmd      `cmd:"" help:"Write a printable evidence report (HTML or PDF)."`
	Serve       ServeCmd       `cmd:"" help:"Serve the dashboard."`
	Collect     CollectCmd     `cmd:"" help:"Collect from live SQL Server instances."`
	Demo        DemoCmd        `cmd:"" help:"Write a realistic demo fleet and import it."`
	Backup      BackupCmd      `cmd:"" help:"Write a consistent online copy of the warehouse."`
	Migrate     MigrateCmd     `cmd:"" help:"Copy a SQLite warehouse whole into an empty PostgreSQL one and check the counts."`
	Token       TokenCmd       `cmd:"" help:"Create, list and revoke the tokens of collectors that push from other network zones."`
	Plan        PlanCmd        `cmd:"" help:"Print the restore plan of a database: the backups to restore, the script, the expected time."`
	Alerts      AlertsCmd      `cmd:"" help:"Send, test, list, acknowledge and silence alerts."`
	Version     VersionCmd     `cmd:"" help:"Print the version and the commit it was built from."`
	Service     ServiceCmd     `cmd:"" help:"Install or remove restorewatch as a service (systemd on Linux, the Windows service manager on Windows)."`
}

// Main is the program: ParseFlags, Run, Close, so tests boot it whole.
type Main struct {
	Stdout, Stderr io.Writer
	Logger         *slog.Logger
	// IsTerminal tells whether stderr is a terminal (progress bars).
	IsTerminal bool
	// Width is how many columns the tables may use (0: no limit; --wide
	// lifts it).
	Width int

	cli    CLI
	kctx   *kong.Context
	db     store.Warehouse
	closer []func() error
	// analysis is the command's analysis options (its flags, its
	// configuration), which completePending analyses with as an import
	// would; the defaults for a command without any.
	analysis analysis.Options
}

// NewMain returns a Main writing to the process's stdout and stderr.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, IsTerminal: isTerminal(os.Stderr), Width: terminalWidth(os.Stdout),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
}

// usageError marks errors that exit with status 2.
type usageError struct{ error }

// ParseFlags parses the command line.
func (m *Main) ParseFlags(args []string) error {
	exited := false
	// Bare restorewatch and "restorewatch help [COMMAND]" print the usage
	// that --help prints, rather than an error.
	if len(args) == 0 {
		args = []string{"--help"}
	} else if args[0] == "help" {
		args = append(slices.Clone(args[1:]), "--help")
	}
	parser, err := kong.New(&m.cli,
		kong.Name("restorewatch"),
		kong.Description("Keeps every SQL Server restore, measures it, and explains every slowdown."),
		kong.Writers(m.Stdout, m.Stderr),
		kong.Exit(func(int) { exited = true }),
		kong.UsageOnError(),
		kong.Help(helpPrinter),
	)
	if err != nil {
		return err
	}
	kctx, err := parser.Parse(args)
	if exited {
		return errHelpShown
	}
	if err != nil {
		return usageError{err}
	}
	if !postgres.IsURL(m.cli.DB) {
		m.cli.DB = kong.ExpandPath(m.cli.DB)
	}
	m.kctx = kctx
	return nil
}

var errHelpShown = errors.New("help shown")

// Run runs the parsed command.
func (m *Main) Run(ctx context.Context) error {
	m.kctx.BindTo(ctx, (*context.Context)(nil))
	return m.kctx.Run(m)
}

// Close releases what Run opened.
func (m *Main) Close() error {
	var errs []error
	for i := len(m.closer) - 1; i >= 0; i-- {
		errs = append(errs, m.closer[i]())
	}
	m.closer = nil
	return errors.Join(errs...)
}

// openExisting opens the warehouse for a command that only reads it (or,
// like analyze, needs what is in it): a missing file is an error that says
// how to make one, never a new empty warehouse left behind.
func (m *Main) openExisting(ctx context.Context) (store.Warehouse, error) {
	if m.db == nil && !postgres.IsURL(m.cli.DB) {
		if _, err := os.Stat(m.cli.DB); errors.Is(err, fs.ErrNotExist) {
			return nil, store.Errorf(store.ENOTFOUND, "no warehouse at %s: run \"restorewatch import …\" or \"restorewatch demo\"", m.cli.DB)
		}
	}
	return m.openDB(ctx)
}

// openDB opens the warehouse once per run, creating it when it does not
// exist: for the commands that write (import, demo, serve, collect).
func (m *Main) openDB(ctx context.Context) (store.Warehouse, error) {
	if m.db != nil {
		return m.db, nil
	}
	if postgres.IsURL(m.cli.DB) {
		db, err := postgres.Open(ctx, m.cli.DB)
		if err != nil {
			return nil, err
		}
		return m.opened(ctx, db)
	}
	// An upgrade migrates existing data before anything else happens: say
	// so, or a large warehouse looks hung.
	if v, err := sqlite.WarehouseSchema(ctx, m.cli.DB); err == nil && v > 0 && v < sqlite.SchemaVersion() {
		fmt.Fprintf(m.Stderr, "upgrading the warehouse %s from schema %d to %d (a large warehouse takes a while)\n",
			m.cli.DB, v, sqlite.SchemaVersion())
	}
	db, err := sqlite.Open(ctx, m.cli.DB)
	if err != nil {
		return nil, err
	}
	return m.opened(ctx, db)
}

// opened keeps db for the run and completes what an interrupted run left,
// with the running command's analysis options (issue 41: set once here,
// not by each command before it opens the warehouse).
func (m *Main) opened(ctx context.Context, db store.Warehouse) (store.Warehouse, error) {
	m.db = db
	m.closer = append(m.closer, db.Close)
	opt, err := m.analysisOptions()
	if err != nil {
		return nil, err
	}
	m.analysis = opt
	if err := m.completePending(ctx, db); err != nil {
		return nil, err
	}
	return db, nil
}

// analysisOptions are the running command's analysis options (its
// AnalysisFlags, or its own options method), or the defaults for a command
// without any.
func (m *Main) analysisOptions() (analysis.Options, error) {
	if m.kctx != nil {
		if n := m.kctx.Selected(); n != nil && n.Target.IsValid() && n.Target.CanAddr() {
			if o, ok := n.Target.Addr().Interface().(interface {
				options() (analysis.Options, error)
			}); ok {
				return o.options()
			}
		}
	}
	if m.analysis.Config == (analysis.Config{}) {
		// Not the zero config: a command without analysis flags (restores,
		// regressions) completing an interrupted run once analysed with
		// a ratio of 0 and no minimum.
		return analysis.Options{Config: analysis.DefaultConfig(), KnownIssues: m.analysis.KnownIssues}, nil
	}
	return m.analysis, nil
}

// warehouseName names --db in messages: the file, or the URL without its
// password.
func (m *Main) warehouseName() string {
	if postgres.IsURL(m.cli.DB) {
		return postgres.Redact(m.cli.DB)
	}
	return m.cli.DB
}

// completePending finishes, before any command reads the warehouse, what a
// crashed run left marked pending: derivation, the indexes a large import
// dropped, and the analysis of the restores derived since the last one,
// with the command's analysis options as an import analyses.
func (m *Main) completePending(ctx context.Context, db store.Warehouse) error {
	p, err := db.Pending(ctx)
	if err != nil || !p.Any() {
		return err
	}
	fmt.Fprintf(m.Stderr, "completing what an interrupted run left in %s: %d instances to derive, %d to analyse, %d indexes to build\n",
		m.warehouseName(), p.Derive, p.Analyse, p.Indexes)
	_, err = db.CompletePending(ctx, func(ctx context.Context, ids []int64) error {
		_, err := analysis.Run(ctx, db, ids, m.analysis)
		return err
	})
	return err
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if path := os.Getenv("RW_CPUPROFILE"); path != "" {
		// A developer's switch for profiling imports and analysis.
		if f, err := os.Create(path); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if path := os.Getenv("RW_TRACE"); path != "" {
		// Which goroutine ran when, and what each waited for: the
		// pipeline's timeline (go tool trace).
		if f, err := os.Create(path); err == nil {
			_ = trace.Start(f)
			defer trace.Stop()
		}
	}
	if path := os.Getenv("RW_BLOCKPROFILE"); path != "" {
		// Where goroutines wait (channels, locks, the SQLite pools):
		// what a CPU profile cannot show of a pipeline that idles.
		runtime.SetBlockProfileRate(int(10 * time.Microsecond))
		defer func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("block").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	m := NewMain()
	if err := m.ParseFlags(args); err != nil {
		if errors.Is(err, errHelpShown) {
			return 0
		}
		fmt.Fprintf(m.Stderr, "restorewatch: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := m.Run(ctx)
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintf(m.Stderr, "restorewatch: %v\n", err)
			return 2
		}
		fmt.Fprintf(m.Stderr, "restorewatch: %s\n", store.ErrorMessage(errOrInternal(err)))
		return 1
	}
	return 0
}

// errOrInternal keeps user-facing errors and turns the rest into one clear
// sentence that still names what failed.
func errOrInternal(err error) error {
	if store.ErrorCode(err) != store.EINTERNAL {
		return err
	}
	return store.Errorf(store.EINTERNAL, "%v", err)
}

// VersionCmd prints the version.
type VersionCmd struct{}

// Run implements the command.
func (c *VersionCmd) Run(m *Main) error {
	fmt.Fprintf(m.Stdout, "restorewatch %s (%s, %s %s/%s, schema %d)\n", Version, commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH, sqlite.SchemaVersion())
	return nil
}

// BackupCmd writes a consistent copy of the warehouse.
type BackupCmd struct {
	Out string `short:"o" required:"" help:"File to write." type:"path"`
}

// Run implements the command.
func (c *BackupCmd) Run(ctx context.Context, m *Main) error {
	if _, err := os.Stat(c.Out); err == nil {
		return store.Errorf(store.ECONFLICT, "%s already exists: choose a new file", c.Out)
	}
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	if err := db.Backup(ctx, c.Out); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "wrote %s\n", c.Out)
	return nil
}

// where names the warehouse in messages: the file of a SQLite warehouse,
// else the engine and server (never a password).
func where(db store.Warehouse) string {
	if f, ok := db.(interface{ Path() string }); ok {
		return f.Path()
	}
	return db.Engine()
}
