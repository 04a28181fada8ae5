//go:build !windows

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/restorewatch/restorewatch/store"
)

// unitTemplate is the hardened systemd unit; docs/deploy/restorewatch.service
// is what it gives for the defaults (a test keeps them equal).
var unitTemplate = template.Must(template.New("unit").Parse(`# {{.Name}}.service: restorewatch {{.Verb}} as a hardened systemd service.
# Written by "restorewatch service install"; see the README's "Deploying on Linux".
# The account: useradd --system --home-dir /var/lib/{{.Name}} --shell /usr/sbin/nologin {{.User}}
# Secrets the service reads (a keytab, a password file) go in /etc/{{.Name}}/, owned by {{.User}}, mode 0600.
[Unit]
Description=restorewatch: SQL Server restore history collector{{if .Serve}} and dashboard{{end}}
Documentation=https://github.com/restorewatch/restorewatch#deploying-on-linux
Wants=network-online.target
After=network-online.target time-sync.target

[Service]
Type=simple
User={{.User}}
Group={{.User}}
ExecStart={{.Exec}}
Restart=on-failure
RestartSec=30s
TimeoutStopSec=60s
# The warehouse lives in the state directory, the only place it may write.
StateDirectory={{.Name}}
StateDirectoryMode=0700
ConfigurationDirectory={{.Name}}
ConfigurationDirectoryMode=0750
WorkingDirectory=/var/lib/{{.Name}}
# Kerberos without a keytab: a credential cache kept fresh by k5start or sssd.
Environment=KRB5CCNAME=FILE:/var/lib/{{.Name}}/krb5cc
# Password variables (password_env), one NAME=value a line; systemd reads it as root: root-owned, mode 0600.
EnvironmentFile=-/etc/{{.Name}}/environment
UMask=0077

NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
ProcSubset=pid
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RemoveIPC=yes
LockPersonality=yes
MemoryDenyWriteExecute=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged
SystemCallErrorNumber=EPERM
CapabilityBoundingSet=
AmbientCapabilities=

[Install]
WantedBy=multi-user.target
`))

// unit renders the unit for c.
func (c *ServiceInstallCmd) unit() (string, error) {
	exe := c.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", err
		}
	}
	if strings.ContainsAny(c.Name, "/ \\") || c.Name == "" {
		return "", store.Errorf(store.EINVALID, "service name %q: want a plain name such as restorewatch", c.Name)
	}
	config, db := c.Config, c.DB
	if config == "" {
		config = "/etc/" + c.Name + "/restorewatch.toml"
	}
	if db == "" {
		db = "/var/lib/" + c.Name + "/restorewatch.db"
	}
	user := c.Account
	if user == "" {
		user = "restorewatch"
	}
	verb := "collect"
	if c.Serve {
		verb = "serve"
	}
	var b bytes.Buffer
	err := unitTemplate.Execute(&b, map[string]any{"Name": c.Name, "User": user, "Serve": c.Serve, "Verb": verb,
		"Exec": quoteArgs(append([]string{exe}, c.commandArgs(config, db)...))})
	return b.String(), err
}

// Run writes the unit and says what to run next.
func (c *ServiceInstallCmd) Run(m *Main) error {
	u, err := c.unit()
	if err != nil {
		return err
	}
	path := filepath.Join(c.UnitDir, c.Name+".service")
	if err := os.WriteFile(path, []byte(u), 0o644); err != nil {
		return store.Errorf(store.EINVALID, "write %s: %v (installing a unit needs root)", path, err)
	}
	fmt.Fprintf(m.Stdout, "wrote %s\nnext:\n  systemd-analyze verify %s\n  systemctl daemon-reload\n  systemctl enable --now %s\n  journalctl -u %s -f\n",
		path, path, c.Name, c.Name)
	return nil
}

// Run removes the unit.
func (c *ServiceUninstallCmd) Run(m *Main) error {
	path := filepath.Join(c.UnitDir, c.Name+".service")
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return store.Errorf(store.ENOTFOUND, "no unit at %s", path)
		}
		return store.Errorf(store.EINVALID, "remove %s: %v", path, err)
	}
	fmt.Fprintf(m.Stdout, "removed %s (run systemctl disable --now %s first if it was running; then systemctl daemon-reload)\n"+
		"the warehouse stays in /var/lib/%s\n", path, c.Name, c.Name)
	return nil
}

// Run is the Windows service manager's entry point; elsewhere services
// run the command itself (ExecStart).
func (c *ServiceRunCmd) Run(m *Main) error {
	return store.Errorf(store.EINVALID, "service run is what the Windows service manager starts; under systemd the unit runs %q itself",
		quoteArgs(c.Args))
}
