package mssql

// Internals exposed to the external tests of this package.
var (
	BuildDSN         = func(in *Instance, pw string) string { return buildDSN(in, secret(pw), DefaultTimeout) }
	BuildAuthDSN     = func(in *Instance, pw string) (string, error) { return buildAuthDSN(in, secret(pw), DefaultTimeout) }
	Scrub            = func(text, pw string) string { return scrub(text, secret(pw)) }
	ReadSecret       = func(in *Instance) (string, error) { s, err := readSecret(in); return string(s), err }
	NewSecret        = func(s string) any { return secret(s) }
	Query            = query
	SQLFiles         = sqlFS
	ParseServerName  = parseServerName
	RestoredDatabase = restoredDatabase
	RedactStatement  = redactStatement
	AgentDuration    = agentDuration
	AgentTime        = agentTime
	AnyTime          = anyTime
	FromBanner       = fromBanner
	SectionNames     = func() []string {
		var out []string
		for _, s := range sections {
			out = append(out, s.name)
		}
		return out
	}
)
