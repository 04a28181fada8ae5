package main

import (
	"strings"
)

// ServiceCmd installs restorewatch as a service: a hardened systemd unit
// on Linux (service_unix.go), a Windows service (service_windows.go).
type ServiceCmd struct {
	Install   ServiceInstallCmd   `cmd:"" help:"Install the service (a systemd unit on Linux, a Windows service on Windows)."`
	Uninstall ServiceUninstallCmd `cmd:"" help:"Remove the service."`
	Run       ServiceRunCmd       `cmd:"" hidden:"" help:"What the Windows service manager starts."`
}

// ServiceInstallCmd holds what the service runs and as whom.
type ServiceInstallCmd struct {
	Name   string `default:"restorewatch" help:"Service (unit) name."`
	Config string `help:"The collector's configuration (default /etc/restorewatch/restorewatch.toml; on Windows %ProgramData%\\restorewatch\\restorewatch.toml)." type:"path"`
	DB     string `name:"warehouse" help:"The warehouse (default /var/lib/restorewatch/restorewatch.db; on Windows %ProgramData%\\restorewatch\\restorewatch.db)." type:"path"`
	Serve  bool   `help:"Serve the dashboard and collect (serve --config), instead of collecting only."`
	Addr   string `default:"127.0.0.1:8080" help:"The dashboard's address, with --serve."`
	// Account is the Linux user, or the Windows account: a virtual
	// account (NT SERVICE\restorewatch, the default), a gMSA
	// (CORP\svc-restorewatch$) or a domain user.
	Account string `help:"Account the service runs as: a Linux user (default restorewatch); on Windows NT SERVICE\\NAME (default, the computer's identity on the network), a gMSA (DOMAIN\\name$) or a domain user."`
	// Password is read from this environment variable, for a Windows
	// domain user (a gMSA and a virtual account have none).
	PasswordEnv string `help:"Windows: environment variable holding the password of a domain user account (none for a gMSA or virtual account)."`
	Log         string `help:"Windows: the service's log file (default %ProgramData%\\restorewatch\\restorewatch.log); start, stop and failures also go to the Application event log." type:"path"`
	UnitDir     string `default:"/etc/systemd/system" help:"Linux: where the unit goes." type:"path"`
	Exe         string `hidden:"" help:"The restorewatch binary the service starts (default: this one)." type:"path"`
}

// ServiceUninstallCmd removes a service.
type ServiceUninstallCmd struct {
	Name    string `default:"restorewatch" help:"Service (unit) name."`
	UnitDir string `default:"/etc/systemd/system" help:"Linux: where the unit is." type:"path"`
}

// ServiceRunCmd is the command line the Windows service manager starts:
// it runs the restorewatch command after "--" until the service is
// stopped.
type ServiceRunCmd struct {
	Name string   `default:"restorewatch" help:"Service name."`
	Log  string   `help:"Also write the log to this file." type:"path"`
	Args []string `arg:"" passthrough:"" help:"The restorewatch command the service runs."`
}

// commandArgs is the restorewatch command line the service runs.
func (c *ServiceInstallCmd) commandArgs(config, db string) []string {
	if c.Serve {
		return []string{"serve", "--config", config, "--db", db, "--addr", c.Addr}
	}
	return []string{"collect", "--config", config, "--db", db}
}

// quoteArgs joins a command line for display, quoting what needs it.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$") {
			a = `"` + strings.ReplaceAll(a, `"`, `\"`) + `"`
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
