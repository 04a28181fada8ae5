package mssql

import (
	"context"
	"database/sql"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Host is what the host source read: the snapshot, the engine version that
// gates the other queries, and the server's clock.
type Host struct {
	Snapshot store.HostSnapshot
	Major    int
	// Now is the server's local time when the snapshot was taken (wall
	// clock in a UTC-located time) and Offset its UTC offset in minutes.
	Now    time.Time
	Offset int
	// Degraded maps a part of the snapshot ("host/modules") to why it is
	// missing.
	Degraded map[string]string
}

// Host reads the host snapshot. Only the first query (SERVERPROPERTY,
// @@VERSION, the clock) is required; every other part that fails for a
// permission or an older build is left out and named in Degraded.
func (s *Session) Host(ctx context.Context) (*Host, error) {
	h := &Host{Degraded: map[string]string{}}
	snap := &h.Snapshot
	snap.Instance = s.inst.Name
	snap.Origin = store.Origin{Source: "live", File: s.inst.Name}
	extra := map[string]string{}
	set := func(k string, v sql.NullString) {
		if v.Valid && v.String != "" {
			extra[k] = v.String
		}
	}
	var versionText string
	err := s.each(ctx, SourceHost, "host/properties", nil, func(r *sql.Rows) error {
		var ver, level, upd, ref, edition, machine, inst, server, vtext sql.NullString
		var engine, clustered, hadr sql.NullInt64
		var now time.Time
		if err := r.Scan(&ver, &level, &upd, &ref, &edition, &engine, &machine, &inst, &server,
			&clustered, &hadr, &vtext, &now); err != nil {
			return err
		}
		snap.Version, snap.Level, snap.UpdateLevel, snap.UpdateRef = ver.String, level.String, upd.String, ref.String
		snap.Edition = strings.TrimSuffix(strings.TrimSuffix(edition.String, " (64-bit)"), " (32-bit)")
		set("machine_name", machine)
		set("instance_name", inst)
		set("server_name", server)
		for k, v := range map[string]sql.NullInt64{"engine_edition": engine, "is_clustered": clustered, "is_hadr_enabled": hadr} {
			if v.Valid {
				extra[k] = strconv.FormatInt(v.Int64, 10)
			}
		}
		versionText = vtext.String
		h.Now, h.Offset = wall(now), offsetMinutes(now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	snap.ObservedAt = h.Now
	off := h.Offset
	snap.UTCOffset = &off
	h.Major, _ = strconv.Atoi(strings.SplitN(snap.Version, ".", 2)[0])
	s.Major = h.Major
	fromBanner(snap, versionText, extra)

	parts := []struct {
		name string
		fn   func(*sql.Rows) error
	}{
		{"host/sysinfo", func(r *sql.Rows) error {
			var cpus, ht, sockets, mem sql.NullInt64
			var vm sql.NullString
			var started sql.NullTime
			if err := r.Scan(&cpus, &ht, &sockets, &mem, &vm, &started); err != nil {
				return err
			}
			snap.Cores, snap.Sockets, snap.MemoryMB = ptrInt(cpus), ptrInt(sockets), ptrInt(mem)
			if ht.Valid {
				extra["hyperthread_ratio"] = strconv.FormatInt(ht.Int64, 10)
			}
			if vm.Valid && vm.String != "" {
				v := !strings.EqualFold(vm.String, "NONE")
				snap.Hypervisor = &v
				extra["virtual_machine_type"] = vm.String
			}
			if started.Valid {
				extra["sqlserver_start_time"] = wall(started.Time).Format("2006-01-02 15:04:05")
			}
			return nil
		}},
		{"host/os", func(r *sql.Rows) error {
			var platform, dist, release, sp sql.NullString
			if err := r.Scan(&platform, &dist, &release, &sp); err != nil {
				return err
			}
			set("host_platform", platform)
			if os := strings.TrimSpace(strings.Join([]string{dist.String, release.String, sp.String}, " ")); os != "" && dist.String != "" {
				snap.OS = strings.Join(strings.Fields(os), " ")
			}
			return nil
		}},
		{"host/services", func(r *sql.Rows) error {
			var name, account, ifi sql.NullString
			if err := r.Scan(&name, &account, &ifi); err != nil {
				return err
			}
			set("service_account", account)
			if ifi.Valid && ifi.String != "" {
				v := strings.EqualFold(ifi.String, "Y")
				snap.IFI = &v
			}
			return nil
		}},
		{"host/config", func(r *sql.Rows) error {
			var name string
			var v sql.NullInt64
			if err := r.Scan(&name, &v); err != nil {
				return err
			}
			if v.Valid {
				key := strings.NewReplacer(" (MB)", "_mb", " ", "_").Replace(strings.ToLower(name))
				extra[key] = strconv.FormatInt(v.Int64, 10)
			}
			return nil
		}},
		{"host/traceflags", func(r *sql.Rows) error {
			var flag, status, global, session any
			if err := r.Scan(&flag, &status, &global, &session); err != nil {
				return err
			}
			f, ok1 := anyInt(flag)
			st, ok2 := anyInt(status)
			g, ok3 := anyInt(global)
			if ok1 && ok2 && ok3 && st == 1 && g == 1 {
				snap.TraceFlags = append(snap.TraceFlags, int(f))
			}
			return nil
		}},
		{"host/modules", func(r *sql.Rows) error {
			var name, company, desc, ver sql.NullString
			if err := r.Scan(&name, &company, &desc, &ver); err != nil {
				return err
			}
			if name.String != "" {
				snap.Modules = append(snap.Modules, path.Base(strings.ReplaceAll(name.String, `\`, "/")))
			}
			return nil
		}},
		{"host/volumes", func(r *sql.Rows) error {
			var mount, fs sql.NullString
			var total, canView sql.NullInt64
			if err := r.Scan(&mount, &fs, &total, &canView); err != nil {
				return err
			}
			if canView.Valid && canView.Int64 == 0 {
				h.Degraded["host/volumes"] = "volumes of databases other than master's and tempdb's not listed: the login lacks VIEW ANY DEFINITION (optional in permissions.sql)"
			}
			v := strings.TrimSpace(fmt.Sprintf("%s %s %.0f GiB", mount.String, fs.String, float64(total.Int64)/(1<<30)))
			if extra["volumes"] != "" {
				v = extra["volumes"] + "; " + v
			}
			extra["volumes"] = v
			return nil
		}},
	}
	for _, p := range parts {
		if err := s.each(ctx, SourceHost, p.name, nil, p.fn); err != nil {
			if IsFatal(err) {
				return nil, err
			}
			h.Degraded[p.name] = err.(*Error).Msg
		}
	}
	// Availability-group membership on every pass, whether or not the
	// instance backs anything up: a replica that never does is a member.
	switch ms, note, err := s.Availability(ctx, SourceHost); {
	case err != nil && IsFatal(err):
		return nil, err
	case err != nil:
		h.Degraded["host/availability"] = err.(*Error).Msg
	default:
		snap.AvailabilityGroups, snap.AGsRead = ms, true
		if note != "" {
			h.Degraded["host/availability"] = note
		}
	}
	slices.Sort(snap.TraceFlags)
	snap.TraceFlags = slices.Compact(snap.TraceFlags)
	slices.Sort(snap.Modules)
	snap.Modules = slices.Compact(snap.Modules)
	snap.Extra = extra
	return h, nil
}

// fromBanner fills from @@VERSION what SERVERPROPERTY leaves NULL on older
// builds: "Microsoft SQL Server 2016 (SP1-CU8) (KB4077064) - 13.0.4474.0
// (X64) \n\t… \n\tDeveloper Edition (64-bit) on Windows Server … (Hypervisor)".
func fromBanner(snap *store.HostSnapshot, text string, extra map[string]string) {
	lines := strings.Split(strings.ReplaceAll(text, "\r", ""), "\n")
	first := lines[0]
	if head, _, ok := strings.Cut(first, " - "); ok {
		product, groups, _ := strings.Cut(head, " (")
		extra["product"] = strings.TrimSpace(product)
		for _, g := range strings.Split(groups, "(") {
			g = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(g), ")"))
			switch {
			case g == "":
			case strings.HasPrefix(g, "KB"):
				if snap.UpdateRef == "" {
					snap.UpdateRef = g
				}
			default:
				parts := strings.Split(g, "-")
				if snap.Level == "" {
					snap.Level = parts[0]
				}
				for _, p := range parts[1:] {
					if strings.HasPrefix(p, "CU") && snap.UpdateLevel == "" {
						snap.UpdateLevel = p
					}
				}
			}
		}
	}
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" && len(lines) > 1 {
		last = strings.TrimSpace(lines[len(lines)-2])
	}
	if _, osText, ok := strings.Cut(last, " on "); ok && len(lines) > 1 {
		hyper := strings.Contains(osText, "(Hypervisor)")
		osText = strings.NewReplacer("(Hypervisor)", "", "<X64>", "", ": )", ")").Replace(osText)
		if snap.OS == "" {
			snap.OS = strings.Join(strings.Fields(osText), " ")
		}
		if snap.Hypervisor == nil && (hyper || strings.HasPrefix(snap.OS, "Windows")) {
			snap.Hypervisor = &hyper
		}
	}
}
