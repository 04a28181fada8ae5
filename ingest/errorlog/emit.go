package errorlog

import (
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// heldRecord is a record waiting for the instance name.
type heldRecord struct {
	restore *store.LogRestore
	host    *store.HostSnapshot
}

// naming collects the clues to the instance name. Only Options.Instance and
// the "Server name is" line are final; the SPN and the log path are guesses
// that a later "Server name is" line overrides, so records are held until
// EOF when only those are known.
type naming struct {
	serverName string
	spnHost    string
	spnInst    string // instance name or port from the SPN
	pathInst   string // MSSQLnn.<INST> from the log path; "" for a default instance
}

// resolve returns the best name and where it came from.
func (n *naming) resolve() (name, source string) {
	switch {
	case n.serverName != "":
		return n.serverName, "server_name"
	case n.spnHost != "":
		inst := n.spnInst
		if inst == "" || isAllDigits(inst) { // a port: the instance comes from the path
			inst = n.pathInst
		}
		if inst == "" || strings.EqualFold(inst, "MSSQLSERVER") {
			return n.spnHost, "spn"
		}
		return n.spnHost + `\` + inst, "spn"
	case n.pathInst != "":
		return n.pathInst, "log_path"
	}
	return "", ""
}

func isAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// final reports whether the instance name can no longer change.
func (p *parser) final() bool { return p.opt.Instance != "" || p.naming.serverName != "" }

func (p *parser) emitRestore(r *store.LogRestore) {
	p.stats.Restores++
	if !p.final() || len(p.held) > 0 {
		p.held = append(p.held, heldRecord{restore: r})
		return
	}
	p.send(heldRecord{restore: r}, p.stats.Instance)
}

func (p *parser) emitHost(h *store.HostSnapshot) {
	p.stats.Hosts++
	if !p.final() || len(p.held) > 0 {
		p.held = append(p.held, heldRecord{host: h})
		return
	}
	p.send(heldRecord{host: h}, p.stats.Instance)
}

// nameKnown is called when a final name appears: held records go out now.
func (p *parser) nameKnown() {
	if err := p.flushHeld(false); err != nil && p.err == nil {
		p.err = err
	}
}

// flushHeld sends held records once the name is known; at EOF a missing name
// is an error if there is anything to send (a noise-only archive is not).
func (p *parser) flushHeld(atEOF bool) error {
	if p.opt.Instance == "" && (atEOF || p.naming.serverName != "") {
		p.stats.Instance, p.stats.InstanceSource = p.naming.resolve()
	}
	if p.stats.Instance == "" && atEOF && p.opt.Fallback != "" {
		p.stats.Instance, p.stats.InstanceSource = p.opt.Fallback, "fallback"
	}
	if p.stats.Instance == "" {
		if atEOF && len(p.held) > 0 {
			p.held = nil
			p.stats.Restores, p.stats.Hosts = 0, 0
			return fmt.Errorf("errorlog: %s: cannot tell the instance name: pass --instance", p.opt.File)
		}
		return nil
	}
	for _, h := range p.held {
		p.send(h, p.stats.Instance)
		if p.err != nil {
			return p.err
		}
	}
	p.held = nil
	return p.err
}

func (p *parser) send(h heldRecord, instance string) {
	if p.err != nil {
		return
	}
	var err error
	switch {
	case h.restore != nil:
		h.restore.Instance = instance
		err = p.sink.LogRestore(*h.restore)
	case h.host != nil:
		h.host.Instance = instance
		err = p.sink.Host(*h.host)
	}
	if err != nil {
		p.err = fmt.Errorf("errorlog: %s: %w", p.opt.File, err)
	}
}
