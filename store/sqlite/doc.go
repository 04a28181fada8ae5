// Package sqlite is restorewatch's warehouse on SQLite (modernc.org/sqlite,
// pure Go): the embedded migrations, the import pipeline's writer, the
// reconciliation that derives restores from facts, and every query the
// dashboard, the CLI and the analysis make. Its types are store's
// vocabulary; what it adds is DB, the warehouse itself, and the in-memory
// orders of the fleet's restores (RestoreOrders) that spare a page a scan.
package sqlite
