package csv

import (
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// SourceDbatools is the Origin.Source of the restores read from a
// Restore-DbaDatabase | Export-Csv file: it names where their duration
// comes from (dbatools' own stopwatch around each RESTORE statement).
const SourceDbatools = "dbatools"

// restore turns one Restore-DbaDatabase row (one RESTORE statement that
// dbatools ran, with FileRestoreTime, the time dbatools measured around it)
// into a store.LogRestore whose UpperBoundS is that time: dbatools starts
// its clock before it builds the statement and stops it after SMO returns,
// so the engine's own time is at most that (less up to half a second:
// New-TimeSpan -Seconds takes whole seconds). The row has no restore time,
// LSN or backup type: the warehouse must pair it with the msdb history row
// of the same instance, database and backup files to place it and to know
// its kind, which is taken from the statement text when dbatools kept it
// and is otherwise recorded as full (see testdata/realworld/dbatools).
// Only a sink failure is returned.
func (p *parser) restore(rec []string, line int) error {
	l := store.LogRestore{Origin: store.Origin{Source: SourceDbatools, File: p.opt.File, Line: line}, Kind: store.KindFull}
	var secs float64
	timed := false
	for i, f := range rec {
		c := p.hdr.cols[i]
		if c == colExtra || isNull(f) {
			continue
		}
		bad := func(want string) error {
			p.reject(line, (&fieldError{col: c, value: f, want: want, label: p.hdr.labels[i]}).Error())
			return nil
		}
		switch c {
		case colInstance:
			l.Instance = trimSpace(f)
		case colDatabase:
			l.Database = f
		case colDevices:
			l.Devices = p.list(f)
			l.DeviceType = "DISK"
			for _, d := range l.Devices {
				// dbatools' own rule for a device of type URL.
				if d := strings.ToLower(d); strings.HasPrefix(d, "http") || strings.HasPrefix(d, "s3") {
					l.DeviceType = "URL"
				}
			}
		case colBackupFilesCount:
			n, ok := parseInt(f)
			if !ok || n < 0 {
				return bad(wantInt)
			}
			l.DeviceCount = int(n)
		case colFileRestoreTime:
			s, ok := parseTimeSpan(f)
			if !ok {
				return bad("not a time span (want [d.]hh:mm:ss[.fffffff])")
			}
			secs, timed = s, true
		case colRestoreComplete:
			ok, valid := parseBit(f)
			if !valid {
				return bad(wantBit)
			}
			if !ok {
				p.reject(line, fmt.Sprintf("%s is False: dbatools reports this restore failed, so it is no restore", p.hdr.labels[i]))
				return nil
			}
		case colScript:
			// Usually the type name of SMO's StringCollection, which
			// Export-Csv writes instead of the statements; the text when
			// dbatools built the statement as a string (ExecuteAs, KeepCDC).
			stmt := strings.ToUpper(f)
			switch {
			case strings.Contains(stmt, "RESTORE LOG"):
				l.Kind, l.Statement = store.KindLog, "RESTORE LOG"
			case strings.Contains(stmt, "RESTORE DATABASE"):
				l.Statement = "RESTORE DATABASE"
				switch {
				case strings.Contains(stmt, " PAGE="):
					l.Kind = store.KindPage
				case strings.Contains(stmt, " FILE=") || strings.Contains(stmt, " FILEGROUP="):
					l.Kind = store.KindFile
				}
			}
		}
	}
	if l.Instance == "" {
		l.Instance = p.defInstance
	}
	switch {
	case l.Instance == "":
		p.reject(line, p.label(colInstance)+" is empty (give the instance name for rows without one)")
		return nil
	case l.Database == "":
		p.reject(line, p.label(colDatabase)+" is empty")
		return nil
	case !timed:
		p.reject(line, p.label(colFileRestoreTime)+" is empty")
		return nil
	}
	l.UpperBoundS = secs
	if err := p.sink.LogRestore(l); err != nil {
		return fmt.Errorf("csv: %s:%d: %w", p.opt.File, line, err)
	}
	return nil
}

// parseTimeSpan reads .NET's invariant TimeSpan form, [-][d.]hh:mm:ss[.f],
// which is what ToString() writes whatever the culture. A negative span is
// refused.
func parseTimeSpan(f string) (float64, bool) {
	s := trimSpace(f)
	days := 0
	if i := strings.IndexByte(s, '.'); i >= 0 && i < strings.IndexByte(s+":", ':') {
		d, ok := digits(s[:i])
		if !ok || i == 0 {
			return 0, false
		}
		days, s = d, s[i+1:]
	}
	frac := 0.0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		n, ok := digits(s[i+1:])
		if !ok || i+1 == len(s) || len(s)-i-1 > 7 {
			return 0, false
		}
		frac = float64(n)
		for k := len(s) - i - 1; k > 0; k-- {
			frac /= 10
		}
		s = s[:i]
	}
	if len(s) != 8 || s[2] != ':' || s[5] != ':' {
		return 0, false
	}
	h, ok1 := digits(s[0:2])
	m, ok2 := digits(s[3:5])
	sec, ok3 := digits(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return 0, false
	}
	return float64(((days*24+h)*60+m)*60+sec) + frac, true
}
