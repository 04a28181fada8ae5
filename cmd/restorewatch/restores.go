package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/export"
)

// RestoresCmd lists restores.
type RestoresCmd struct {
	Instance string `help:"Only this instance."`
	Database string `help:"Only this database."`
	Kind     string `help:"Only this kind (full, diff, log, file, page)." enum:",full,diff,log,file,page" default:""`
	Format   string `help:"table, json or csv." enum:"table,json,csv" default:"table"`
	Limit    int    `help:"At most this many (newest first); 0 = all."`
}

// Run implements the command.
func (c *RestoresCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	namer, err := m.namer()
	if err != nil {
		return err
	}
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Instance: c.Instance, Database: c.Database,
		Kind: store.Kind(c.Kind), Limit: c.Limit})
	if err != nil {
		return err
	}
	rows := make([]export.RestoreRow, len(rs))
	for i := range rs {
		rows[i] = export.Row(&rs[i], namer)
	}
	switch c.Format {
	case "json":
		return export.WriteJSON(m.Stdout, rows)
	case "csv":
		w, err := export.NewCSVWriter(m.Stdout)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FINISHED (UTC)\tINSTANCE\tDATABASE\tKIND\tDURATION\tSOURCE\tSIZE\tMiB/s LOGICAL\tMiB/s READ\tBUILD\tFROM SERVER\tFROM BUILD\tDEVICE")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.At.Format("2006-01-02 15:04:05"), printable(r.Instance), printable(r.Database), r.Kind,
			FormatDuration(r.DurationS), r.DurationSource, formatBytes(r.BackupBytes), formatRate(r.LogicalMiBps),
			formatRate(r.ReadMiBps), namedBuild(namer, r.InstanceBuild), printable(r.SourceServer),
			namedBuild(namer, r.SourceBuild), r.DeviceKind)
	}
	if len(rs) == 0 {
		fmt.Fprintln(tw, "(no restores: import some with `restorewatch import`, or run `restorewatch demo`)")
	}
	return tw.Flush()
}
