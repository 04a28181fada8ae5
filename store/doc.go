// Package store is restorewatch's domain vocabulary: the records every
// source hands in (HistoryRow, LogRestore, HostSnapshot, BackupSet), the
// restores derived from them, the findings of the analysis (Series,
// Regression, Exposure), the filters that ask for them, the Sink readers
// stream into, and the error codes every layer shares. It imports nothing of
// the project and no database: parsers, derivation, analysis and plans build
// on it alone.
//
// The packages under store/ are what the warehouse is made of: derive turns
// facts into restores, analysis judges them, plan builds restore chains,
// human words figures, export writes them out, and sqlite keeps all of it in
// a SQLite file. Each of them imports store and none imports sqlite; the
// dashboard (web) speaks only store too. The program (cmd) and the import
// pipeline (ingest: the loader, the collector, push) open and write the
// SQLite warehouse.
package store
