package plan_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// history builds a realistic backup history of one database: a weekly full
// on day 0 and 7 at 00:00, a daily differential at 00:00 on the other days
// and a log backup every 15 minutes, with LSNs that advance 1000 a minute
// the way msdb records them (a log holds [first_lsn, last_lsn); a data
// backup's last_lsn falls inside the log backup taken after it).
type history struct {
	t0   time.Time
	sets []store.BackupSet
	full *store.BackupSet // the last regular full, base of the differentials
	n    int
}

const lsnBase = 39000000010000001

// lsnAt is the LSN the log has reached m minutes after t0.
func lsnAt(m int) int64 { return lsnBase + int64(m)*1000 + 10 }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

const forkA = "AAAAAAAA-0000-0000-0000-000000000001"

func newHistory(days int) *history {
	h := &history{t0: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	for m := 0; m <= days*24*60; m += 15 {
		if m%(24*60) == 0 {
			if (m/(24*60))%7 == 0 {
				h.data("D", m, false)
			} else {
				h.data("I", m, false)
			}
		}
		if m > 0 {
			h.log(m, lsnAt(m-15), lsnAt(m), forkA, forkA, false)
		}
	}
	return h
}

func (h *history) uuid() string {
	h.n++
	return fmt.Sprintf("6C1B0E1E-0000-4A8E-9E1B-%012d", h.n)
}

func (h *history) at(m int) time.Time { return h.t0.Add(time.Duration(m) * time.Minute) }

// data adds a full (D) or differential (I) taken at minute m.
func (h *history) data(typ string, m int, copyOnly bool) *store.BackupSet {
	s := store.BackupSet{Instance: "SQL01", Database: "Sales", UUID: h.uuid(), Type: typ, CopyOnly: copyOnly,
		Checksums: true, FirstLSN: itoa(lsnAt(m) - 500), CheckpointLSN: itoa(lsnAt(m) - 400), LastLSN: itoa(lsnAt(m) + 50),
		Start: h.at(m), Finish: h.at(m).Add(5 * time.Minute), Families: 1, FirstForkGUID: forkA, LastForkGUID: forkA,
		Size: 40 << 30, Files: []store.BackupFile{{LogicalName: "Sales", PhysicalName: `D:\Data\Sales.mdf`, Type: "D"},
			{LogicalName: "Sales_log", PhysicalName: `L:\Log\Sales_log.ldf`, Type: "L"}}}
	kind := "FULL"
	if typ == "I" {
		kind = "DIFF"
		s.Size = 4 << 30
		s.DiffBaseGUID, s.DiffBaseLSN, s.DatabaseBackupLSN = h.full.UUID, h.full.CheckpointLSN, h.full.CheckpointLSN
	}
	s.Media = []store.BackupMedia{{Family: 1, DeviceType: 2, Device: fmt.Sprintf(`\\backup\sql01\Sales_%s_%d.bak`, kind, m)}}
	h.sets = append(h.sets, s)
	p := &h.sets[len(h.sets)-1]
	if typ == "D" && !copyOnly {
		c := *p
		h.full = &c
	}
	return p
}

func (h *history) log(m int, first, last int64, fork1, fork2 string, copyOnly bool) *store.BackupSet {
	s := store.BackupSet{Instance: "SQL01", Database: "Sales", UUID: h.uuid(), Type: "L", CopyOnly: copyOnly, Checksums: true,
		FirstLSN: itoa(first), LastLSN: itoa(last), Start: h.at(m), Finish: h.at(m).Add(time.Minute), Families: 1,
		FirstForkGUID: fork1, LastForkGUID: fork2, Size: 64 << 20,
		Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: fmt.Sprintf(`\\backup\sql01\Sales_LOG_%d.trn`, m)}}}
	h.sets = append(h.sets, s)
	return &h.sets[len(h.sets)-1]
}

// drop removes the set that finished at t and returns its LSN range.
func (h *history) drop(typ string, start time.Time) store.BackupSet {
	for i, s := range h.sets {
		if s.Type == typ && s.Start.Equal(start) {
			h.sets = append(h.sets[:i], h.sets[i+1:]...)
			return s
		}
	}
	panic("no such set")
}
