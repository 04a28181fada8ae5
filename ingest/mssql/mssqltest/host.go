package mssqltest

import (
	"bufio"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

// versionText is @@VERSION for the host, in the banner's shape.
func (in *Instance) versionText() string {
	h := in.host
	year := map[string]string{"10": "2008 R2", "11": "2012", "12": "2014", "13": "2016", "14": "2017", "15": "2019",
		"16": "2022", "17": "2025"}[strings.SplitN(h.Version, ".", 2)[0]]
	level := h.Level
	if h.UpdateLevel != "" {
		level += "-" + h.UpdateLevel
	}
	kb := ""
	if h.UpdateRef != "" {
		kb = " (" + h.UpdateRef + ")"
	}
	return fmt.Sprintf("Microsoft SQL Server %s (%s)%s - %s (X64) \n\tJan  1 2024 00:00:00 \n\tCopyright (C) Microsoft Corporation\n\t%s on Windows Server 2019 Datacenter 10.0 <X64> (Build 17763: ) (Hypervisor)\n",
		year, level, kb, h.Version, h.Edition)
}

// hostPart answers a host query; c says which branch of it the version
// runs (none: no result set, as SQL Server sends none).
func (in *Instance) hostPart(name string, c checked) ([]tdstest.ResultSet, error) {
	h := in.host
	nv128 := func(n string) tdstest.Column { return col(n, tdstest.NVarChar, 128) }
	var rs tdstest.ResultSet
	switch name {
	case "host/properties":
		inst := any(nil)
		if _, i, ok := strings.Cut(in.name, `\`); ok {
			inst = i
		}
		rs.Columns = []tdstest.Column{nv128("product_version"), nv128("product_level"), nv128("product_update_level"),
			nv128("product_update_reference"), nv128("edition"), col("engine_edition", tdstest.Int, 0), nv128("machine_name"),
			nv128("instance_name"), nv128("server_name"), col("is_clustered", tdstest.Int, 0), col("is_hadr_enabled", tdstest.Int, 0),
			col("version_text", tdstest.NVarChar, 300), col("server_time", tdstest.DateTimeOffset, 0)}
		rs.Rows = [][]any{{h.Version, h.Level, nv(h.UpdateLevel), nv(h.UpdateRef), h.Edition, 3, h.Machine, inst, in.name,
			0, 0, in.versionText(), in.sysdatetimeoffset()}}
	case "host/sysinfo":
		rs.Columns = []tdstest.Column{col("cpu_count", tdstest.Int, 0), col("hyperthread_ratio", tdstest.Int, 0),
			col("socket_count", tdstest.Int, 0), col("memory_mb", tdstest.BigInt, 0),
			col("virtual_machine_type_desc", tdstest.NVarChar, 60), col("sqlserver_start_time", tdstest.DateTime, 0)}
		sockets := any(h.Sockets)
		if !c.selects("sys.dm_os_sys_info", "socket_count") {
			sockets = nil // the branch without the column selects NULL
		}
		rs.Rows = [][]any{{h.CPUs, h.CPUs / max(1, h.Sockets), sockets, h.MemoryMB, h.VM,
			time.Date(2024, 1, 1, 6, 0, 0, 0, time.UTC)}}
	case "host/os":
		rs.Columns = []tdstest.Column{col("host_platform", tdstest.NVarChar, 256), col("host_distribution", tdstest.NVarChar, 256),
			col("host_release", tdstest.NVarChar, 256), col("host_service_pack_level", tdstest.NVarChar, 256)}
		switch {
		case c.selects("sys.dm_os_host_info", "host_distribution"):
			rs.Rows = [][]any{{"Windows", "Windows Server 2019 Datacenter", "10.0", ""}}
		case c.selects("sys.dm_os_windows_info", "windows_release"):
			rs.Rows = [][]any{{"Windows", nil, "10.0", ""}}
		default:
			return nil, nil
		}
	case "host/services":
		if !c.selects("sys.dm_server_services", "servicename") {
			return nil, nil
		}
		ifi := nv(h.IFI)
		if !c.selects("sys.dm_server_services", "instant_file_initialization_enabled") {
			ifi = nil
		}
		rs.Columns = []tdstest.Column{col("servicename", tdstest.NVarChar, 256), col("service_account", tdstest.NVarChar, 256),
			col("instant_file_initialization_enabled", tdstest.NVarChar, 1)}
		rs.Rows = [][]any{{"SQL Server (MSSQLSERVER)", h.ServiceAccount, ifi}}
	case "host/config":
		rs.Columns = []tdstest.Column{col("name", tdstest.NVarChar, 35), col("value_in_use", tdstest.BigInt, 0)}
		keys := make([]string, 0, len(h.Config))
		for k := range h.Config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rs.Rows = append(rs.Rows, []any{k, h.Config[k]})
		}
	case "host/traceflags":
		rs.Columns = []tdstest.Column{col("TraceFlag", tdstest.SmallInt, 0), col("Status", tdstest.SmallInt, 0),
			col("Global", tdstest.SmallInt, 0), col("Session", tdstest.SmallInt, 0)}
		for _, f := range h.TraceFlags {
			rs.Rows = append(rs.Rows, []any{f, 1, 1, 0})
		}
	case "host/modules":
		rs.Columns = []tdstest.Column{col("name", tdstest.NVarChar, 255), col("company", tdstest.NVarChar, 255),
			col("description", tdstest.NVarChar, 255), col("file_version", tdstest.VarChar, 23)}
		for _, m := range h.Modules {
			rs.Rows = append(rs.Rows, []any{m, "Vendor Inc.", "filter", "1.0.0.0"})
		}
	case "host/volumes":
		if !c.selects("sys.dm_os_volume_stats", "volume_mount_point") {
			return nil, nil
		}
		rs.Columns = []tdstest.Column{col("volume_mount_point", tdstest.NVarChar, 512), col("file_system_type", tdstest.NVarChar, 512),
			col("total_bytes", tdstest.BigInt, 0), col("can_view_definition", tdstest.Int, 0)}
		backups.Lock()
		canView := int64(1)
		if backups.noDefinitions[in] {
			canView = 0
		}
		backups.Unlock()
		rs.Rows = [][]any{{`F:\`, "NTFS", int64(2) << 40, canView}}
	default:
		return nil, tdstest.Error{Number: 2812, Message: "no such host query " + name}
	}
	return []tdstest.ResultSet{rs}, nil
}

// RowsFromErrorLog turns the text of an ERRORLOG file into the rows
// xp_readerrorlog returns for it: one row per line, a continuation line
// (startup banner, parameters) as a row of its own with its entry's LogDate
// and ProcessInfo and the leading TAB removed.
func RowsFromErrorLog(text string) ([]LogRow, error) {
	var out []LogRow
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if len(line) >= 23 && line[4] == '-' && line[10] == ' ' {
			at, err := time.Parse("2006-01-02 15:04:05.00", line[:22])
			if err != nil {
				return nil, fmt.Errorf("line %q: %w", line, err)
			}
			rest := strings.TrimLeft(line[22:], " \t")
			src, txt, _ := strings.Cut(rest, " ")
			out = append(out, LogRow{At: at, Source: src, Text: strings.TrimLeft(txt, " ")})
			continue
		}
		if len(out) == 0 {
			continue
		}
		prev := out[len(out)-1]
		out = append(out, LogRow{At: prev.At, Source: prev.Source, Text: strings.TrimPrefix(line, "\t")})
	}
	return out, sc.Err()
}
