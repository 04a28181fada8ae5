package errorlog

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// hostState builds one HostSnapshot per startup: the banner and the host
// lines after it, until the next banner or EOF.
type hostState struct {
	snap *store.HostSnapshot
	// Exports (xp_readerrorlog, SSMS) give each line of a multi-line entry a
	// row of its own with the same time and source; rows within exportGap
	// of the banner or a parameters header are read as its continuation.
	tailKind contKind
	tailSrc  string
	tailAt   time.Time
	params   string // Extra key of the parameters being read
}

const exportGap = time.Second

// hostLine looks at every entry the restore classifier did not take; most
// are noise, so the first byte decides before any string is made.
func (p *parser) hostLine(h *header) {
	t := h.text
	hs := &p.host
	if hs.tailKind != contNone {
		if h.at.Sub(hs.tailAt) <= exportGap && string(h.source) == hs.tailSrc {
			if hs.tailKind == contBanner && hs.bannerLine(t) {
				return
			}
			if hs.tailKind == contParams && len(t) > 0 && t[0] == '-' {
				hs.paramLine(t)
				return
			}
		} else {
			hs.tailKind = contNone
		}
	}
	switch t[0] {
	case 'M':
		if hasPrefix(t, "Microsoft SQL Server ") && contains(t, " - ") {
			p.banner(h)
		}
	case 'U':
		if hasPrefix(t, "UTC adjustment: ") {
			off, ok := parseOffset(string(t[len("UTC adjustment: "):]))
			if !ok {
				p.reject(fmt.Sprintf("UTC adjustment %q is not an offset", clip(t, 40)))
				return
			}
			p.utcOff = &off
			v := off
			p.snapshot(h).UTCOffset = &v
		}
	case 'S':
		switch {
		case hasPrefix(t, "Server name is '"):
			name := quotedAfter(string(t), "Server name is '", "'")
			if name == "" {
				return
			}
			p.setExtra(h, "server_name", name)
			if p.naming.serverName == "" {
				p.naming.serverName = name
				p.nameKnown()
			}
		case hasPrefix(t, "Server process ID is "):
			p.setExtra(h, "process_id", strings.TrimSuffix(string(t[len("Server process ID is "):]), "."))
		case hasPrefix(t, "System Manufacturer: '"):
			s := string(t)
			man, model, ok := strings.Cut(strings.TrimPrefix(s, "System Manufacturer: '"), "', System Model: '")
			snap := p.snapshot(h)
			snap.Manufacturer = man
			if ok {
				snap.Model = model[:max(0, strings.LastIndexByte(model, '\''))]
			}
		case hasPrefix(t, "SQL Server detected "):
			var sockets, cores, lps, total, used int64
			n, _ := fmt.Sscanf(string(t), "SQL Server detected %d sockets with %d cores per socket and %d logical processors per socket, %d total logical processors; using %d logical processors",
				&sockets, &cores, &lps, &total, &used)
			snap := p.snapshot(h)
			if n >= 1 {
				snap.Sockets = &sockets
			}
			if n >= 4 {
				p.setExtra(h, "cores_per_socket", strconv.FormatInt(cores, 10))
				p.setExtra(h, "logical_processors_per_socket", strconv.FormatInt(lps, 10))
				p.setExtra(h, "total_logical_processors", strconv.FormatInt(total, 10))
				snap.Cores = &total
			}
			if n == 5 {
				snap.Cores = &used // what the engine uses is what restores get
			}
		}
	case 'D':
		var n, avail int64
		switch {
		case hasPrefix(t, "Detected ") && contains(t, " MB of RAM"):
			if k, _ := fmt.Sscanf(string(t), "Detected %d MB of RAM, %d MB of available memory", &n, &avail); k >= 1 {
				p.snapshot(h).MemoryMB = &n
				if k == 2 {
					p.setExtra(h, "available_memory_mb", strconv.FormatInt(avail, 10))
				}
			}
		case hasPrefix(t, "Detected ") && contains(t, " CPUs"): // 2005–2008 R2 wording
			if k, _ := fmt.Sscanf(string(t), "Detected %d CPUs", &n); k == 1 {
				if snap := p.snapshot(h); snap.Cores == nil {
					snap.Cores = &n
				}
			}
		case hasPrefix(t, "Database Instant File Initialization: "):
			v := hasPrefix(t[len("Database Instant File Initialization: "):], "enabled")
			p.snapshot(h).IFI = &v
		}
	case 'C', 'R':
		switch {
		case hasPrefix(t, "Command Line Startup Parameters:"):
			p.startParams(h, "command_line_parameters")
		case hasPrefix(t, "Registry startup parameters:"):
			p.startParams(h, "registry_parameters")
		}
	case 'A':
		if hasPrefix(t, "Authentication mode is ") {
			p.setExtra(h, "authentication_mode", strings.TrimSuffix(string(t[len("Authentication mode is "):]), "."))
		}
	case 'T':
		switch {
		case hasPrefix(t, "The service account is '"):
			p.setExtra(h, "service_account", quotedAfter(string(t), "The service account is '", "'."))
		case hasPrefix(t, "The resource database build version is "):
			v, _, _ := strings.Cut(string(t[len("The resource database build version is "):]), ". ")
			p.setExtra(h, "resource_db_version", strings.TrimSuffix(v, "."))
		case hasPrefix(t, "The SQL Server Network Interface library ") && contains(t, "MSSQLSvc/"):
			p.spn(string(t))
		}
	case 'L':
		if hasPrefix(t, "Logging SQL Server messages in file '") {
			path := quotedAfter(string(t), "Logging SQL Server messages in file '", "'")
			p.setExtra(h, "log_file", path)
			if p.naming.pathInst == "" {
				p.naming.pathInst = instanceFromPath(path)
			}
		}
	}
}

// snapshot returns the open snapshot, opening one without a banner when the
// log starts after it (an archive cut, a cycled log whose banner was lost).
func (p *parser) snapshot(h *header) *store.HostSnapshot {
	if p.host.snap == nil {
		p.host.snap = &store.HostSnapshot{ObservedAt: h.at, Origin: p.origin(p.lineNo)}
	}
	return p.host.snap
}

func (p *parser) setExtra(h *header, k, v string) {
	snap := p.snapshot(h)
	if snap.Extra == nil {
		snap.Extra = map[string]string{}
	}
	snap.Extra[k] = v
}

// closeSnapshot emits the open snapshot if it says something about the
// build or the clock; a few stray host lines alone are not a startup.
func (p *parser) closeSnapshot() {
	snap := p.host.snap
	p.host = hostState{}
	if snap == nil || (snap.Version == "" && snap.UTCOffset == nil) {
		return
	}
	slices.Sort(snap.TraceFlags)
	snap.TraceFlags = slices.Compact(snap.TraceFlags)
	p.emitHost(snap)
}

// banner handles "Microsoft SQL Server 2019 (RTM-CU16-GDR) (KB5014353) -
// 15.0.4236.7 (X64)": a startup (or a cycled log) begins. After
// sp_cycle_errorlog its source is the spid that cycled it, not Server.
func (p *parser) banner(h *header) {
	s := string(h.text)
	product, level, kb, version, platform, ok := parseBannerLine(s)
	if !ok {
		return
	}
	// A restart ends whatever was held or running.
	p.releaseAll()
	clear(p.spids)
	p.closeSnapshot()
	snap := p.snapshot(h)
	snap.Version, snap.UpdateRef = version, kb
	p.setExtra(h, "product", product)
	if platform != "" {
		p.setExtra(h, "platform", platform)
	}
	if level != "" {
		p.setExtra(h, "banner_level", level)
		parts := strings.Split(level, "-")
		snap.Level = parts[0]
		for _, x := range parts[1:] {
			if strings.HasPrefix(x, "CU") {
				snap.UpdateLevel = x
			}
		}
	}
	p.cont = contBanner
	p.host.tailKind, p.host.tailSrc, p.host.tailAt = contBanner, string(h.source), h.at
}

// parseBannerLine splits the first banner line; the level and KB groups are
// optional ("Microsoft SQL Server 2019 (RTM) - 15.0.2000.5 (X64)",
// "Microsoft SQL Server 2005 - 9.00.5000.00 (X64)").
func parseBannerLine(s string) (product, level, kb, version, platform string, ok bool) {
	i := strings.Index(s, " - ")
	for i >= 0 && (i+3 >= len(s) || !isDigit(s[i+3])) {
		j := strings.Index(s[i+3:], " - ")
		if j < 0 {
			return "", "", "", "", "", false
		}
		i += 3 + j
	}
	if i < 0 {
		return "", "", "", "", "", false
	}
	head, tail := s[:i], s[i+3:]
	version, rest, _ := strings.Cut(tail, " ")
	if strings.Count(version, ".") < 2 || !isDecimalDots(version) {
		return "", "", "", "", "", false
	}
	if a, b, ok := strings.Cut(rest, "("); ok && a == "" {
		platform, _, _ = strings.Cut(b, ")")
	}
	product = head
	if k := strings.Index(head, " ("); k >= 0 {
		product = head[:k]
		for _, g := range strings.Split(head[k+2:], "(") {
			g = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(g), ")"))
			switch {
			case strings.HasPrefix(g, "KB"):
				kb = g
			case level == "":
				level = g
			}
		}
	}
	return product, level, kb, version, platform, true
}

func isDecimalDots(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && s[i] != '.' {
			return false
		}
	}
	return true
}

// bannerLine reads banner lines 2–4 (build date, copyright, edition and OS);
// false when the line is none of them.
func (hs *hostState) bannerLine(line []byte) bool {
	snap := hs.snap
	t := strings.TrimSpace(string(line))
	if snap == nil || t == "" {
		return snap != nil
	}
	if strings.HasPrefix(t, "Copyright") {
		return true
	}
	for _, bits := range []string{" (64-bit) on ", " (32-bit) on "} {
		if ed, osText, ok := strings.Cut(t, bits); ok {
			snap.Edition = ed
			hyper := strings.Contains(osText, "(Hypervisor)")
			osText = strings.ReplaceAll(osText, "(Hypervisor)", "")
			osText = strings.ReplaceAll(osText, "<X64>", "")
			osText = strings.ReplaceAll(osText, ": )", ")")
			snap.OS = strings.Join(strings.Fields(osText), " ")
			// Only Windows banners say "(Hypervisor)"; on Linux its absence means nothing.
			if hyper || strings.HasPrefix(snap.OS, "Windows") {
				snap.Hypervisor = &hyper
			}
			hs.tailKind = contNone
			return true
		}
	}
	if len(t) >= 11 && t[0] >= 'A' && t[0] <= 'Z' && t[3] == ' ' && (snap.Extra == nil || snap.Extra["build_date"] == "") {
		if _, err := time.Parse("Jan _2 2006 15:04:05", t); err == nil {
			if snap.Extra == nil {
				snap.Extra = map[string]string{}
			}
			snap.Extra["build_date"] = strings.Join(strings.Fields(t), " ")
			return true
		}
	}
	return false
}

// startParams handles the "Command Line Startup Parameters:" and "Registry
// startup parameters:" headers; the parameters follow as TAB lines.
func (p *parser) startParams(h *header, key string) {
	p.setExtra(h, key, "")
	p.cont = contParams
	p.host.params = key
	p.host.tailKind, p.host.tailSrc, p.host.tailAt = contParams, string(h.source), h.at
}

// paramLine reads one startup parameter; "-T 3226" and "-T3226" are trace flags.
func (hs *hostState) paramLine(line []byte) {
	t := string(bytes.TrimSpace(line))
	if t == "" || hs.snap == nil || hs.params == "" {
		return
	}
	if len(t) > 2 && t[0] == '-' && (t[1] == 'T' || t[1] == 't') {
		if n, err := strconv.Atoi(strings.TrimSpace(t[2:])); err == nil && n >= 0 {
			hs.snap.TraceFlags = append(hs.snap.TraceFlags, n)
		}
	}
	if v := hs.snap.Extra[hs.params]; v != "" {
		t = v + " " + t
	}
	hs.snap.Extra[hs.params] = t
}

// parseOffset reads "-8:00", "0:00", "5:30" as minutes.
func parseOffset(s string) (int, bool) {
	s = strings.TrimSpace(s)
	sign := 1
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		s, sign = rest, -1
	} else {
		s = strings.TrimPrefix(s, "+")
	}
	hh, mm, ok := strings.Cut(s, ":")
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	if !ok || err1 != nil || err2 != nil || h < 0 || h > 14 || m < 0 || m > 59 || !isAllDigits(hh) || !isAllDigits(mm) {
		return 0, false
	}
	return sign * (h*60 + m), true
}

// instanceFromPath returns INST from a "...\MSSQL15.INST\MSSQL\Log\ERRORLOG"
// path; "" for a default instance (MSSQLSERVER), an id such as MSSQL.1, or a
// Linux path.
func instanceFromPath(path string) string {
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '\\' || r == '/' }) {
		u := strings.ToUpper(seg)
		if !strings.HasPrefix(u, "MSSQL") {
			continue
		}
		ver, name, ok := strings.Cut(seg[5:], ".")
		if ok && isAllDigits(ver) && name != "" && !isAllDigits(name) && !strings.EqualFold(name, "MSSQLSERVER") {
			return name
		}
	}
	return ""
}

// spn reads "... (SPN) [ MSSQLSvc/host.domain:INST ] ...": the only line of a
// Windows log that names the host when "Server name is" is missing.
func (p *parser) spn(s string) {
	_, rest, _ := strings.Cut(s, "MSSQLSvc/")
	rest, _, _ = strings.Cut(rest, " ")
	rest = strings.TrimSuffix(rest, "]")
	host, inst, _ := strings.Cut(rest, ":")
	host, _, _ = strings.Cut(host, ".")
	if host == "" {
		return
	}
	n := &p.naming
	if n.spnHost == "" || (isAllDigits(n.spnInst) && inst != "" && !isAllDigits(inst)) {
		n.spnHost, n.spnInst = strings.ToUpper(host), inst
	}
}
