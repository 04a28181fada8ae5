package demo

import (
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// The texts below are the engine's (reference §2.4–§2.6, §4); the parsers
// must read them byte for byte, so they are not paraphrased.

// startup writes the lines that open a file: the banner with the build in
// force, the host lines, the startup trace flags and the server name. A
// restart prints them from "Server"; sp_cycle_errorlog from the session
// that ran it.
func (lw *logWriter) startup(b boundary) {
	in := lw.in
	bld := buildOf(at(in.builds, b.at))
	hw := at(in.hws, b.at)
	src := "Server"
	if !b.restart {
		src = "spid" + itoa(52+b.at.Unix()/60%40)
	}
	if b.restart || lw.pid == 0 {
		lw.pid = 1200 + int(b.at.Unix()/7%8000)
	}
	t := b.at
	banner := bld.bannerLines(in, hw)
	cont := banner[1:]
	if !in.linux {
		cont = append(cont, "") // @@VERSION ends in a newline on Windows
	}
	lw.entry(t, src, banner[0], cont...)
	lw.entry(t, src, "UTC adjustment: "+offsetText(in.tz))
	lw.entry(t, src, "(c) Microsoft Corporation.")
	lw.entry(t, src, "All rights reserved.")
	lw.entry(t, src, "Server process ID is "+itoa(int64(lw.pid))+".")
	if !in.linux {
		lw.entry(t, src, "System Manufacturer: '"+hw.manufacturer+"', System Model: '"+hw.model+"'.")
	}
	lw.entry(t, src, "Authentication mode is MIXED.")
	logPath, dataDir, sep := in.paths(bld)
	lw.entry(t, src, "Logging SQL Server messages in file '"+logPath+"'.")
	if !in.linux {
		lw.entry(t, src, "The service account is '"+in.account+"'. This is an informational message; no user action is required.")
	}
	lw.entry(t, src, "Registry startup parameters: ", "\t -d "+dataDir+sep+"master.mdf", "\t -e "+logPath, "\t -l "+dataDir+sep+"mastlog.ldf")
	var params []string
	if in.inst != "" {
		params = append(params, "\t -s \""+in.inst+"\"")
	}
	for _, f := range in.flags {
		params = append(params, "\t -T "+itoa(int64(f)))
	}
	if len(params) > 0 {
		lw.entry(t, src, "Command Line Startup Parameters:", params...)
	}
	t = t.Add(230 * time.Millisecond)
	lw.entry(t, src, "SQL Server detected "+itoa(int64(hw.sockets))+" sockets with "+itoa(int64(hw.cores))+
		" cores per socket and "+itoa(int64(hw.logical))+" logical processors per socket, "+itoa(int64(hw.cpus()))+
		" total logical processors; using "+itoa(int64(hw.cpus()))+" logical processors based on SQL Server licensing. This is an informational message; no user action is required.")
	lw.entry(t, src, "SQL Server is starting at normal priority base (=7). This is an informational message only. No user action is required.")
	lw.entry(t, src, "Detected "+itoa(int64(hw.ramMB))+" MB of RAM. This is an informational message; no user action is required.")
	ifi := "enabled"
	if !in.ifi {
		ifi = "disabled"
	}
	t = t.Add(120 * time.Millisecond)
	lw.entry(t, src, "Database Instant File Initialization: "+ifi+". For security and performance considerations see the topic 'Database Instant File Initialization' in SQL Server Books Online. This is an informational message only. No user action is required.")
	if b.restart {
		lw.entry(t.Add(600*time.Millisecond), "spid8s", "Starting up database 'master'.")
		lw.entry(t.Add(1100*time.Millisecond), "spid12s", "The resource database build version is "+bld.resourceVersion()+". This is an informational message only. No user action is required.")
	}
	t = t.Add(1300 * time.Millisecond)
	lw.entry(t, src, "Server name is '"+in.name+"'. This is an informational message only. No user action is required.")
	if b.restart {
		lw.entry(t.Add(1200*time.Millisecond), "Server", "SQL Server is now ready for client connections. This is an informational message; no user action is required.")
		lw.entry(t.Add(2900*time.Millisecond), "spid9s", "Recovery is complete. This is an informational message only. No user action is required.")
	} else {
		lw.entry(t, src, "The error log has been reinitialized. See the previous log for older entries.")
	}
}

// paths returns the error log, the data folder and the path separator.
func (in *instance) paths(b engineBuild) (log, data, sep string) {
	if in.linux {
		return "/var/opt/mssql/log/errorlog", "/var/opt/mssql/data", "/"
	}
	inst := in.inst
	if inst == "" {
		inst = "MSSQLSERVER"
	}
	root := `C:\Program Files\Microsoft SQL Server\MSSQL` + itoa(int64(b.major())) + "." + inst + `\MSSQL`
	return root + `\Log\ERRORLOG`, root + `\DATA`, `\`
}

// restore queues the lines one restore prints: trace-flag output from its
// session at the start, then at the end the recovery lines, the completion
// line and, ~30 ms later, the 3014 line with the true duration.
func (lw *logWriter) restore(r *restore) {
	in, s := lw.in, r.s
	spid := "spid" + itoa(int64(r.spid))
	start, end := r.start, r.end()
	clamp := func(t time.Time) time.Time {
		if t.Before(start) {
			return start
		}
		if t.After(end) {
			return end
		}
		return t
	}
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	frac := func(f float64) time.Time {
		return start.Add(time.Duration(f * float64(r.durMS) * float64(time.Millisecond)))
	}
	tf3004, tf3213 := in.hasFlag(3004), in.hasFlag(3213)
	verb := "RestoreDatabase"
	if r.kind == store.KindLog {
		verb = "RestoreLog"
	}
	if tf3004 {
		lw.push(start, spid, verb+": Database "+s.db)
		for i, t := range []string{"Opening backup set", "SetTargetRestoreAge: 0", "Restore: Configuration section loaded",
			"Restore: Backup set is open", "Restore: Planning begins"} {
			lw.push(clamp(start.Add(ms(int64(2+2*i)))), spid, t)
		}
	}
	if tf3213 {
		lw.bufferBlock(clamp(start.Add(ms(12))), spid, r)
	}
	if tf3004 {
		lw.push(clamp(start.Add(ms(30))), spid, "Restore: Planning complete")
		if r.kind != store.KindLog {
			lw.push(clamp(start.Add(ms(40))), spid, "Restore: BeginRestore (offline) on "+s.db)
			lw.push(clamp(start.Add(ms(50))), spid, "Restore: Attached database "+s.db+" as DBID="+itoa(int64(s.dbid)))
			lw.push(clamp(start.Add(ms(60))), spid, "Restore: PreparingContainers")
		}
		if r.kind == store.KindFull {
			ldf := s.ldfPath()
			lw.push(clamp(start.Add(ms(70))), spid, "Zeroing "+ldf+" from page 1 to 1048576 (0x2000 to 0x200000000)")
			zeroed := frac(0.02)
			if limit := start.Add(20 * time.Second); zeroed.After(limit) {
				zeroed = limit // zeroing the log takes seconds whatever the data size
			}
			lw.push(clamp(zeroed), spid, "Zeroing completed on "+ldf)
			lw.push(clamp(frac(0.021)), spid, "Restore: Containers are ready")
		}
		lw.push(clamp(frac(0.022)), spid, "Restore: Restoring backup set")
		lw.push(clamp(frac(0.023)), spid, "Restore: Transferring data to "+s.db)
		lw.push(clamp(frac(0.92)), spid, "Restore: Data transfer complete on "+s.db)
		lw.push(clamp(frac(0.921)), spid, "Restore: Backup set restored")
		if r.recovery {
			lw.push(clamp(frac(0.93)), spid, "Restore-Redo begins on database "+s.db)
		}
		lw.push(clamp(end.Add(-ms(200))), spid, "Restore: Writing history records")
		lw.push(clamp(end.Add(-ms(90))), spid, verb+": Finished")
	}
	if r.recovery {
		lw.push(clamp(end.Add(-ms(180))), spid, "Starting up database '"+s.db+"'.")
		bld := buildOf(at(in.builds, start))
		if src := buildOf(r.srcBuild); src.dbver < bld.dbver {
			lw.push(clamp(end.Add(-ms(170))), spid, "Converting database '"+s.db+"' from version "+itoa(int64(src.dbver))+
				" to the current version "+itoa(int64(bld.dbver))+".")
		}
		lw.push(clamp(end.Add(-ms(120))), spid, bld.recoveryLine(s.db, s.dbid, r.rec[0], r.rec[1], r.rec[2], r.rec[3]))
		lw.push(clamp(end.Add(-ms(60))), "Backup", "Restore is complete on database '"+s.db+"'.  The database is now available.")
	} else {
		lw.push(clamp(end.Add(-ms(60))), spid, "The database '"+s.db+"' is marked RESTORING and is in a state that does not allow recovery to be run.")
	}
	lw.push(clamp(end.Add(-ms(30))), "Backup", r.completionText())
	stmt := "RESTORE DATABASE"
	if r.kind == store.KindLog {
		stmt = "RESTORE LOG"
	}
	lw.push(end, "Backup", stmt+" successfully processed "+itoa(r.totalPages())+" pages in "+seconds(r.durMS)+
		" seconds ("+mbps(r.totalPages(), r.durMS)+" MB/sec).")
}

// completionText is message 18267, 18271 or 18268 with its own trailer.
func (r *restore) completionText() string {
	s := r.s
	var b strings.Builder
	switch r.kind {
	case store.KindFull:
		b.WriteString("Database was restored: ")
	case store.KindDiff:
		b.WriteString("Database changes were restored. ")
	default:
		b.WriteString("Log was restored. ")
	}
	b.WriteString("Database: " + s.db + ", creation date(time): " + s.created.Format("2006/01/02(15:04:05)"))
	b.WriteString(", first LSN: " + r.first.String() + ", last LSN: " + r.last.String())
	b.WriteString(", number of dump devices: " + itoa(int64(len(r.devices))) + ", device information: (FILE=1, TYPE=DISK: {")
	for i, d := range r.devices {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + d + "'")
	}
	b.WriteString("}). ")
	if r.kind == store.KindFull {
		b.WriteString("Informational message. No user action required.")
	} else {
		b.WriteString("This is an informational message. No user action is required.")
	}
	return b.String()
}

// bufferBlock is the trace-flag 3213 block; labels are padded to column 28.
func (lw *logWriter) bufferBlock(t time.Time, spid string, r *restore) {
	hw := at(lw.in.hws, r.start)
	total := max(1, r.buf.count*r.buf.maxKiB/1024)
	lw.push(t, spid, "Backup/Restore buffer configuration parameters")
	for _, kv := range [][2]string{
		{"Memory limit:", itoa(int64(min(hw.ramMB/4, 32767))) + " MB"},
		{"BufferCount:", itoa(r.buf.count)},
		{"Sets Of Buffers:", "1"},
		{"MaxTransferSize:", itoa(r.buf.maxKiB) + " KB"},
		{"Min MaxTransferSize:", "64 KB"},
		{"Total buffer space:", itoa(total) + " MB"},
		{"Tabular data device count:", itoa(int64(len(r.devices)))},
		{"Fulltext data device count:", "0"},
		{"Filestream device count:", "0"},
		{"TXF device count:", "0"},
		{"Filesystem i/o alignment:", itoa(lw.in.align)},
		{"Media Buffer count:", itoa(r.buf.count)},
		{"Media Buffer size:", itoa(r.buf.maxKiB) + " KB"},
		{"Encode Buffer count:", itoa(r.buf.count)},
	} {
		lw.push(t, spid, kv[0]+strings.Repeat(" ", 28-len(kv[0]))+kv[1])
	}
}

func (in *instance) hasFlag(f int) bool {
	for _, x := range in.flags {
		if x == f {
			return true
		}
	}
	return false
}

// ldfPath is where the restored database's log file lives.
func (s *series) ldfPath() string {
	if s.in.linux {
		return "/var/opt/mssql/data/" + safeName(s.db) + "_log.ldf"
	}
	return `L:\SQLLogs\` + safeName(s.db) + "_log.ldf"
}
