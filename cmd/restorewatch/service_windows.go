//go:build windows

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/eventlog"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/restorewatch/restorewatch/store"
)

// programData is where the service keeps its configuration and warehouse.
func programData(name string) string {
	d := os.Getenv("ProgramData")
	if d == "" {
		d = `C:\ProgramData`
	}
	return filepath.Join(d, name)
}

// Run creates the Windows service: automatic (delayed) start, restarted
// by the service manager after a failure, its messages registered with
// the Application event log.
func (c *ServiceInstallCmd) Run(m *Main) error {
	exe := c.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	config, db := c.Config, c.DB
	if config == "" {
		config = filepath.Join(programData(c.Name), "restorewatch.toml")
	}
	if db == "" {
		db = filepath.Join(programData(c.Name), "restorewatch.db")
	}
	account := c.Account
	if account == "" {
		// A virtual account: its own SID for file permissions, the
		// computer account (DOMAIN\HOST$) on the network, no password.
		account = `NT SERVICE\` + c.Name
	}
	var password string
	if c.PasswordEnv != "" {
		password = os.Getenv(c.PasswordEnv)
		if password == "" {
			return store.Errorf(store.EINVALID, "--password-env %s is not set", c.PasswordEnv)
		}
	}
	logFile := c.Log
	if logFile == "" {
		logFile = filepath.Join(programData(c.Name), "restorewatch.log")
	}
	if err := os.MkdirAll(programData(c.Name), 0o750); err != nil {
		return store.Errorf(store.EINVALID, "create %s: %v", programData(c.Name), err)
	}
	args := []string{"service", "run", "--name", c.Name, "--log", logFile}
	args = append(append(args, "--"), c.commandArgs(config, db)...)

	sm, err := mgr.Connect()
	if err != nil {
		return store.Errorf(store.EINVALID, "connect to the service manager: %v (installing a service needs an elevated prompt)", err)
	}
	defer sm.Disconnect()
	if s, err := sm.OpenService(c.Name); err == nil {
		s.Close()
		return store.Errorf(store.ECONFLICT, "service %s exists already: restorewatch service uninstall --name %s first", c.Name, c.Name)
	}
	s, err := sm.CreateService(c.Name, exe, mgr.Config{
		DisplayName: "restorewatch (" + c.Name + ")",
		Description: "Collects SQL Server restore history into the restorewatch warehouse " + db + ".",
		StartType:   mgr.StartAutomatic, DelayedAutoStart: true,
		ServiceStartName: account, Password: password,
		SidType: windows.SERVICE_SID_TYPE_UNRESTRICTED,
	}, args...)
	if err != nil {
		return store.Errorf(store.EINVALID, "create service %s: %v", c.Name, err)
	}
	defer s.Close()
	if err := s.SetRecoveryActions([]mgr.RecoveryAction{
		{Type: mgr.ServiceRestart, Delay: 30 * time.Second},
		{Type: mgr.ServiceRestart, Delay: 2 * time.Minute},
		{Type: mgr.ServiceRestart, Delay: 10 * time.Minute},
	}, uint32((24 * time.Hour).Seconds())); err != nil {
		fmt.Fprintf(m.Stderr, "restorewatch: warning: recovery actions: %v\n", err)
	}
	if err := eventlog.InstallAsEventCreate(c.Name, eventlog.Error|eventlog.Warning|eventlog.Info); err != nil &&
		!strings.Contains(err.Error(), "exists") {
		fmt.Fprintf(m.Stderr, "restorewatch: warning: event log source: %v\n", err)
	}
	fmt.Fprintf(m.Stdout, "installed service %s running as %s:\n  %s %s\n"+
		"give %s read access to %s and modify access to %s and %s, then: sc.exe start %s\n",
		c.Name, account, exe, quoteArgs(args), account, config, filepath.Dir(db), filepath.Dir(logFile), c.Name)
	return nil
}

// Run stops and deletes the service; its configuration and warehouse stay.
func (c *ServiceUninstallCmd) Run(m *Main) error {
	sm, err := mgr.Connect()
	if err != nil {
		return store.Errorf(store.EINVALID, "connect to the service manager: %v (removing a service needs an elevated prompt)", err)
	}
	defer sm.Disconnect()
	s, err := sm.OpenService(c.Name)
	if err != nil {
		return store.Errorf(store.ENOTFOUND, "no service %s: %v", c.Name, err)
	}
	defer s.Close()
	if st, err := s.Query(); err == nil && st.State != svc.Stopped {
		_, _ = s.Control(svc.Stop)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			if st, err := s.Query(); err != nil || st.State == svc.Stopped {
				break
			}
		}
	}
	if err := s.Delete(); err != nil {
		return store.Errorf(store.EINVALID, "delete service %s: %v", c.Name, err)
	}
	_ = eventlog.Remove(c.Name)
	fmt.Fprintf(m.Stdout, "removed service %s (its configuration and warehouse stay)\n", c.Name)
	return nil
}

// Run is the body of the Windows service: it runs the command after "--"
// until the service manager stops it.
func (c *ServiceRunCmd) Run(m *Main) error {
	inService, err := svc.IsWindowsService()
	if err != nil {
		return err
	}
	if !inService {
		return store.Errorf(store.EINVALID, "service run is started by the Windows service manager; run %q directly instead", quoteArgs(c.Args))
	}
	elog, err := eventlog.Open(c.Name)
	if err != nil {
		return err
	}
	defer elog.Close()
	var out io.Writer = io.Discard
	if c.Log != "" {
		f, err := os.OpenFile(c.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			_ = elog.Error(1, fmt.Sprintf("open log file %s: %v", c.Log, err))
			return err
		}
		defer f.Close()
		out = f
	}
	return svc.Run(c.Name, &windowsService{args: c.Args, out: out, elog: elog})
}

// windowsService runs one restorewatch command as the service's body.
type windowsService struct {
	args []string
	out  io.Writer
	elog *eventlog.Log
}

// Execute implements svc.Handler.
func (w *windowsService) Execute(_ []string, req <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	status <- svc.Status{State: svc.StartPending}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runCommand(ctx, w.args, w.out) }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	_ = w.elog.Info(1, "restorewatch started: "+quoteArgs(w.args))
	for {
		select {
		case err := <-done:
			// The command ended by itself: a failure, which the service
			// manager's recovery actions answer by restarting it.
			msg := "restorewatch stopped by itself"
			if err != nil {
				msg = "restorewatch failed: " + store.ErrorMessage(errOrInternal(err))
			}
			_ = w.elog.Error(3, msg)
			return true, 1
		case r := <-req:
			switch r.Cmd {
			case svc.Interrogate:
				status <- r.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending}
				cancel()
				select {
				case <-done:
				case <-time.After(50 * time.Second):
					_ = w.elog.Warning(2, "restorewatch did not stop within 50 s")
				}
				_ = w.elog.Info(1, "restorewatch stopped")
				return false, 0
			}
		}
	}
}

// runCommand runs one restorewatch command line until ctx ends, writing
// its output and log to out.
func runCommand(ctx context.Context, args []string, out io.Writer) error {
	m := NewMain()
	m.Stdout, m.Stderr, m.IsTerminal, m.Width = out, out, false, 0
	m.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if err := m.ParseFlags(args); err != nil {
		return err
	}
	err := m.Run(ctx)
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	return err
}
