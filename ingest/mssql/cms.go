package mssql

import (
	"context"
	"database/sql"
	"maps"
	"strconv"
	"strings"
	"time"
)

// ListCMS connects to the Central Management Server and returns the
// registered servers of its group (subgroups included) as instances that
// share the CMS's auth, secret, encryption and tags settings.
func ListCMS(ctx context.Context, c CMS, timeout time.Duration) ([]Instance, error) {
	s, err := Connect(ctx, c.Instance, timeout)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	group := strings.Trim(c.Group, "/")
	var out []Instance
	err = s.each(ctx, SourceCMS, "cms", nil, func(r *sql.Rows) error {
		var name, server, path sql.NullString
		if err := r.Scan(&name, &server, &path); err != nil {
			return err
		}
		p := strings.Trim(path.String, "/")
		if group != "" && !strings.EqualFold(p, group) && !strings.HasPrefix(strings.ToLower(p), strings.ToLower(group)+"/") {
			return nil
		}
		in := c.Instance
		in.Name = strings.TrimSpace(name.String)
		in.Host, in.InstanceName, in.Port = parseServerName(server.String)
		in.HostNameInCertificate = "" // the CMS's own name, not its servers'
		in.Tags = maps.Clone(c.Tags)
		if in.Name == "" {
			in.Name = strings.TrimSpace(server.String)
		}
		if in.Host == "" || in.validate() != nil {
			return nil // an entry that cannot be connected to is left out, not fatal
		}
		out = append(out, in)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseServerName splits what SSMS accepts as a server name: HOST,
// HOST\INSTANCE, HOST,PORT, tcp:HOST,PORT, HOST\INSTANCE,PORT (the port
// wins), "." and "(local)" for the CMS's own machine.
func parseServerName(s string) (host, instance string, port int) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "tcp:"), "TCP:")
	if h, p, ok := strings.Cut(s, ","); ok {
		s = h
		port, _ = strconv.Atoi(strings.TrimSpace(p))
	}
	host, instance, _ = strings.Cut(s, `\`)
	if port != 0 {
		instance = ""
	}
	switch strings.ToLower(host) {
	case ".", "(local)", "localhost":
		host = "localhost"
	}
	return strings.TrimSpace(host), strings.TrimSpace(instance), port
}
