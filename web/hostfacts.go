package web

import "strings"

// hostLabels names the extra host facts the error log and the live
// collector record (ingest/errorlog/host.go, ingest/mssql/host.go) as the
// instance page shows them: words, never the raw keys (issue 30).
var hostLabels = map[string]string{
	"authentication_mode":           "Authentication mode",
	"available_memory_mb":           "Memory available to SQL Server (MB)",
	"banner_level":                  "Level in the startup banner",
	"build_date":                    "Build date",
	"command_line_parameters":       "Command-line startup parameters",
	"cores_per_socket":              "Cores per socket",
	"engine_edition":                "Engine edition",
	"host_platform":                 "Host platform",
	"hyperthread_ratio":             "Logical processors per physical core",
	"instance_name":                 "Instance name",
	"is_clustered":                  "Failover cluster instance",
	"is_hadr_enabled":               "Always On availability groups enabled",
	"log_file":                      "Error log file",
	"logical_processors_per_socket": "Logical processors per socket",
	"machine_name":                  "Machine name",
	"platform":                      "Platform",
	"process_id":                    "Process ID",
	"product":                       "Product",
	"registry_parameters":           "Registry startup parameters",
	"resource_db_version":           "Resource database version",
	"server_name":                   "Server name",
	"service_account":               "Service account",
	"sqlserver_start_time":          "Started (instance local)",
	"total_logical_processors":      "Logical processors",
	"virtual_machine_type":          "Virtual machine type",
}

// hostLabel is a host fact's label: from hostLabels, else the key in words
// ("page_verify" → "Page verify"), so a fact added to an ingest later still
// reads as a label.
func hostLabel(key string) string {
	if l, ok := hostLabels[key]; ok {
		return l
	}
	s := strings.TrimSpace(strings.ReplaceAll(key, "_", " "))
	if s == "" {
		return key
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
