package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An availability-group database whose backups the AG's backup preference
// spread over two replicas, as Microsoft documents it ("Offload supported
// backups to secondary replicas": full backups on the primary here, log
// backups on the secondary; https://learn.microsoft.com/en-us/sql/database-engine/availability-groups/windows/active-secondaries-backup-on-secondary-replicas-always-on-availability-groups),
// exported from each replica's msdb with backup_history_export.sql (its
// columns; one LSN chain, one family GUID and recovery fork, as the replicas
// of one AG database share them). SQL-A took the full and the differential,
// SQL-B the five logs after them.
func agExport(t *testing.T, dir string, withAG bool) (a, b string) {
	t.Helper()
	const family, fork = "5F2B6C1E-8D3A-4C7B-9E1F-2A3B4C5D6E7F", "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"
	head := "instance,database_name,backup_set_uuid,media_set_id,media_family_count,type,is_copy_only,is_damaged,has_backup_checksums," +
		"has_bulk_logged_data,first_lsn,last_lsn,checkpoint_lsn,database_backup_lsn,differential_base_lsn,differential_base_guid,fork_point_lsn," +
		"first_recovery_fork_guid,last_recovery_fork_guid,backup_start_date,backup_finish_date,time_zone,backup_size,compressed_backup_size," +
		"software_major_version,software_minor_version,software_build_version,server_name,machine_name,recovery_model,device_type," +
		"physical_device_names,logical_name,physical_name,file_type,file_size,filegroup_name,family_guid"
	if withAG {
		head += ",availability_group"
	}
	t0 := time.Date(2026, 11, 3, 1, 0, 0, 0, time.UTC)
	lsn := func(n int) string { return fmt.Sprintf("%d00000000%07d", 41+n/1000, 10000+n) }
	row := func(inst, uuid, typ string, first, last, ckp, dbl int, diffBase, diffGUID string, at time.Time, file, lname, pname, ftype string) string {
		r := []string{`"` + inst + `"`, `"Sales"`, uuid, "1", "1", typ, "0", "0", "1", "0", lsn(first), lsn(last), lsn(ckp), lsn(dbl),
			diffBase, diffGUID, "", fork, fork, at.Format("2006-01-02 15:04:05.000"), at.Add(10 * time.Minute).Format("2006-01-02 15:04:05.000"),
			"0", "1073741824", "", "16", "0", "4135", `"` + inst + `"`, `"` + inst + `"`, "FULL", "2", `"` + file + `"`,
			lname, pname, ftype, "", "", family}
		if withAG {
			r = append(r, "AGSales")
		}
		return strings.Join(r, ",")
	}
	full := "0F0F0F0F-0000-4000-8000-000000000001"
	rowsA := []string{
		row("SQL-A", full, "D", 100, 200, 150, 90, "", "", t0, `\\bk\Sales_FULL.bak`, "Sales", `D:\Data\Sales.mdf`, "D"),
		row("SQL-A", full, "D", 100, 200, 150, 90, "", "", t0, `\\bk\Sales_FULL.bak`, "Sales_log", `L:\Log\Sales_log.ldf`, "L"),
		row("SQL-A", "0F0F0F0F-0000-4000-8000-000000000002", "I", 300, 400, 350, 150, lsn(150), full, t0.Add(6*time.Hour),
			`\\bk\Sales_DIFF.bak`, "", "", ""),
	}
	var rowsB []string
	for i := range 5 {
		rowsB = append(rowsB, row("SQL-B", fmt.Sprintf("0F0F0F0F-0000-4000-8000-00000000001%d", i), "L", 380+100*i, 480+100*i, 380+100*i, 150,
			"", "", t0.Add(time.Duration(7+i)*time.Hour), fmt.Sprintf(`\\bk\Sales_LOG_%d.trn`, i), "", "", ""))
	}
	a, b = filepath.Join(dir, "sql-a.csv"), filepath.Join(dir, "sql-b.csv")
	for p, rows := range map[string][]string{a: rowsA, b: rowsB} {
		if err := os.WriteFile(p, []byte(head+"\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

type agPlan struct {
	Steps []struct {
		Kind string `json:"kind"`
		Set  struct {
			Instance string `json:"instance"`
		} `json:"backup_set"`
	} `json:"steps"`
	Replicas []string `json:"replicas"`
	Via      string   `json:"via"`
	Target   string   `json:"target_instance"`
}

func planJSON(t *testing.T, db, instance string) (agPlan, string) {
	t.Helper()
	out, stderr, code := runMain(t, "plan", "--db", db, "--instance", instance, "--database", "Sales", "--format", "json")
	var p agPlan
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("plan --instance %s: exit %d: %s", instance, code, stderr)
	}
	return p, out
}

// The whole chain, from either replica's name (and from the AG's when the
// export names it): the full and differential taken on SQL-A, then the five
// logs taken on SQL-B, each step naming the replica that holds its file.
// Before, SQL-A's plan stopped after the differential without a word and
// SQL-B's said "no usable full backup".
func TestPlanAcrossAvailabilityGroupReplicas(t *testing.T) {
	for _, withAG := range []bool{false, true} {
		dir := t.TempDir()
		db := newDB(t, "w.db")
		a, b := agExport(t, dir, withAG)
		if out, stderr, code := runMain(t, "import", "backups", "--db", db, a, b); code != 0 || !strings.Contains(out, "rejected 0") {
			t.Fatalf("import exit %d: %s %s", code, stderr, out)
		}
		names := []string{"SQL-A", "sql-b"}
		if withAG {
			names = append(names, "AGSales")
		}
		for _, name := range names {
			p, out := planJSON(t, db, name)
			var got []string
			for _, s := range p.Steps {
				got = append(got, s.Kind+"@"+s.Set.Instance)
			}
			want := "full@SQL-A diff@SQL-A log@SQL-B log@SQL-B log@SQL-B log@SQL-B log@SQL-B"
			if strings.Join(got, " ") != want {
				t.Errorf("AG recorded %v, plan --instance %s: steps %v, want %s", withAG, name, got, want)
			}
			via := "family GUID"
			if withAG {
				via = "availability group AGSales"
			}
			if len(p.Replicas) != 2 || !strings.Contains(p.Via, via) || !strings.Contains(out, "the backup history is merged from") {
				t.Errorf("AG recorded %v, plan --instance %s: replicas %v via %q", withAG, name, p.Replicas, p.Via)
			}
		}
		// The text names each step's replica, and the run of logs the
		// replica that took them.
		out, _, _ := runMain(t, "plan", "--db", db, "--instance", "SQL-B", "--database", "Sales")
		if strings.Count(out, "; taken on SQL-A") != 2 || !strings.Contains(out, "5 log restores from 08:10 to 12:10") ||
			!strings.Contains(out, "; taken on SQL-B (--wide") ||
			!strings.Contains(out, "Note: the backup history is merged from") {
			t.Errorf("text plan:\n%s", out)
		}
	}
}

// LSN sanity at import: a row whose LSNs msdb cannot have recorded (a log
// backup whose first LSN is after its last, a full whose checkpoint is
// before its first LSN) is rejected with its file and line and the reason;
// the rest of the file is imported.
func TestImportRejectsImpossibleLSNs(t *testing.T) {
	dir := t.TempDir()
	db := newDB(t, "w.db")
	_, b := agExport(t, dir, false)
	text, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	f := strings.Split(lines[3], ",") // line 4: the third log
	f[10], f[11] = f[11], f[10]       // first_lsn after last_lsn
	lines[3] = strings.Join(f, ",")
	if err := os.WriteFile(b, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runMain(t, "import", "backups", "--db", db, b)
	if code != 0 || !strings.Contains(out, "added 4") || !strings.Contains(out+stderr, "sql-b.csv:4") ||
		!strings.Contains(out+stderr, "first_lsn") || !strings.Contains(out+stderr, "is after last_lsn") {
		t.Errorf("exit %d:\n%s\n%s", code, out, stderr)
	}
}
