// Package demo writes a realistic demo fleet of SQL Server restore history as
// files in the formats a user imports (the history CSV of SPEC §3.3, error
// logs with their startup banners and trace-flag output, captured SSMS
// messages) and imports them through the same importers. Going through the
// real formats, rather than inserting records, means the demo exercises the
// parsers and the reconciliation exactly as real files do, and a page that
// looks wrong on the demo is a bug a user would hit too.
//
// The fleet tells the stories of the project's seeds (a source upgrade that
// makes compressed restores 3× slower, a 4 h restore that now takes 10 h, a
// share move, lost BUFFERCOUNT tuning, a CU, growth, an outlier, new
// hardware); Fleet.Stories records the truth of each so tests can check that
// analysis finds them. Generation streams: memory depends on the number of
// jobs per instance, not on the number of restores, so the dashboard
// benchmark's million restores fit.
package demo

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
)

// DefaultNow is the end of the demo period when Config.Now is zero: a fixed
// instant, so that the same seed always writes the same bytes.
var DefaultNow = time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)

// Config says how big a fleet to write and where.
type Config struct {
	// Instances is the number of restoring instances (default 12). The
	// first 12 carry the stories; more instances repeat their shapes with
	// stable behaviour and names of their own.
	Instances int
	// Restores is the total number of restores to write. Zero means what the
	// fleet's jobs naturally run in the period (nightly fulls, full+diff
	// refreshes, hourly log shipping): about 7,000 for 12 instances over six
	// months. Another value stretches or compresses every job's cadence in
	// proportion; the result can be a few short when a job would end after
	// Now (Fleet.Restores says how many were written).
	Restores int
	// Seed makes the fleet: the same seed and config write the same bytes.
	Seed uint64
	// Now is the end of the period (default DefaultNow; the CLI passes time.Now()).
	Now time.Time
	// Months is the length of the period (default 6).
	Months int
	// Dir is where the files are written; it is created if missing. Files
	// an earlier, larger fleet left there are not removed (a directory the
	// user named is not ours to empty); Fleet.Files lists what was written.
	Dir string
	// BackupInstances is how many instances, from the first, get a backup
	// history for restore plans (0: the first DefaultBackupInstances, which
	// covers the default fleet whole; a 2,000-instance benchmark fleet would
	// otherwise write millions of 15-minute log backups). The databases of
	// the others have restores but no backup history, and their plan pages
	// say so.
	BackupInstances int
	// Truth also writes truth.csv: every restore's true start, end, duration
	// and whether its completion reached an error log, for tests. It is not
	// an import format.
	Truth bool
}

// Story is one behaviour planted in the fleet, with the truth an analysis
// should find.
type Story struct {
	Name     string // "source upgrade", "4h to 10h", …, "stable"
	Instance string
	Database string
	Kind     store.Kind
	// ChangedAt is when the first restore showing the change completed, in
	// UTC (the warehouse's restore time); for an outlier, that restore's.
	// Zero for stable and growth series.
	ChangedAt time.Time
	// Expect is "regression", "growth", "stable", "improvement" or "outlier".
	Expect string
	// Factor is the SPEC §6.1 factor that changed at ChangedAt, or "" when
	// nothing SQL Server can see changed.
	Factor        string
	Before, After string
	// KnownIssue is the catalogue id that matches, "KB4088193", or "".
	KnownIssue string
}

// File is one written file and the importer it is meant for.
type File struct {
	Kind ingest.FileKind
	Path string
	// Instance is the instance the file belongs to ("" for the fleet-wide
	// history CSV). Captured messages do not name their server, so Import
	// passes it as --instance does.
	Instance string
}

// Fleet is what Generate wrote.
type Fleet struct {
	Files    []File
	Stories  []Story
	Restores int   // restores written to the history CSV
	Bytes    int64 // bytes written, all files
	// Truth is the path of truth.csv when Config.Truth was set.
	Truth string
	// Backups says what the backup history (for restore plans) holds.
	Backups BackupTruth
}

// Generate writes the fleet into cfg.Dir.
func Generate(cfg Config) (Fleet, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Fleet{}, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return Fleet{}, fmt.Errorf("demo: %w", err)
	}
	p := newPlan(cfg)
	g := &gen{plan: p, cfg: cfg}
	if err := g.open(); err != nil {
		g.closeAll()
		return Fleet{}, err
	}
	for _, in := range p.instances {
		if err := g.instance(in); err != nil {
			g.closeAll()
			return Fleet{}, err
		}
	}
	if err := g.close(); err != nil {
		return Fleet{}, err
	}
	backups := filepath.Join(cfg.Dir, "backups", "backup-history.csv")
	bt, err := g.writeBackups(backups)
	if err != nil {
		return Fleet{}, err
	}
	f := Fleet{Stories: p.stories, Restores: g.restores, Bytes: g.bytes, Backups: bt}
	f.Files = append(f.Files, File{Kind: ingest.History, Path: g.history.path})
	f.Files = append(f.Files, File{Kind: ingest.Backups, Path: backups})
	f.Files = append(f.Files, g.logFiles...)
	if g.messages.n > 0 {
		f.Files = append(f.Files, File{Kind: ingest.Messages, Path: g.messages.path, Instance: g.messages.instance})
	}
	if g.truth != nil {
		f.Truth = g.truth.path
	}
	return f, nil
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Dir == "" {
		return cfg, store.Errorf(store.EINVALID, "demo: no directory given")
	}
	if cfg.Instances < 0 || cfg.Restores < 0 || cfg.Months < 0 {
		return cfg, store.Errorf(store.EINVALID, "demo: instances, restores and months cannot be negative")
	}
	if cfg.Instances == 0 {
		cfg.Instances = 12
	}
	if cfg.Months == 0 {
		cfg.Months = 6
	}
	if cfg.Now.IsZero() {
		cfg.Now = DefaultNow
	}
	// Milliseconds are the finest unit any of the formats carries.
	cfg.Now = cfg.Now.UTC().Truncate(time.Millisecond)
	return cfg, nil
}

// gen holds the writers shared by all instances while the fleet is written.
type gen struct {
	plan     *plan
	cfg      Config
	history  *historyWriter
	messages *messagesWriter
	truth    *truthWriter
	logFiles []File
	logBuf   *bufio.Writer // shared by the error logs, written one at a time
	restores int
	bytes    int64
}

func (g *gen) open() error {
	var err error
	if g.history, err = newHistoryWriter(filepath.Join(g.cfg.Dir, "history", "restore-history.csv")); err != nil {
		return err
	}
	g.messages = &messagesWriter{dir: filepath.Join(g.cfg.Dir, "messages")}
	if g.cfg.Truth {
		if g.truth, err = newTruthWriter(filepath.Join(g.cfg.Dir, "truth.csv")); err != nil {
			return err
		}
	}
	return nil
}

func (g *gen) close() error {
	var first error
	keep := func(n int64, err error) {
		g.bytes += n
		if err != nil && first == nil {
			first = err
		}
	}
	keep(g.history.close())
	keep(g.messages.close())
	if g.truth != nil {
		// truth.csv is a test aid, not part of the fleet's size.
		_, err := g.truth.close()
		keep(0, err)
	}
	return first
}

// closeAll closes what is open after a failure; the first error is already
// being returned.
func (g *gen) closeAll() {
	if g.history != nil {
		_, _ = g.history.close()
	}
	if g.messages != nil {
		_, _ = g.messages.close()
	}
	if g.truth != nil {
		_, _ = g.truth.close()
	}
}

// createFile creates path (and its directory) behind a large buffer that
// counts what it writes. A writer passed in is reset and reused: a big fleet
// writes tens of thousands of error logs, and a fresh buffer for each shows
// up as memory clearing in the profile.
func createFile(path string, reuse ...*bufio.Writer) (*os.File, *bufio.Writer, *counter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("demo: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("demo: %w", err)
	}
	c := &counter{w: f}
	if len(reuse) > 0 && reuse[0] != nil {
		reuse[0].Reset(c)
		return f, reuse[0], c, nil
	}
	return f, bufio.NewWriterSize(c, 256<<10), c, nil
}

// counter counts bytes on their way to a file.
type counter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
