package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/restorewatch/restorewatch/ingest/mssql"
)

// warnReadable warns when a file holding a secret (a collector token, a
// password, a TLS key) can be read or changed by other users: the secret is
// used all the same (refusing would stop collection over a mode bit), but
// the operator is told which file and what to do.
func warnReadable(w io.Writer, what, path string) {
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm()&fs.FileMode(0o077) == 0 {
		return
	}
	fmt.Fprintf(w, "restorewatch: warning: %s %s can be read by other users (mode %04o): chmod 600 it\n", what, path, st.Mode().Perm())
}

// warnReadableSecrets warns for every password_file, keytab, credential
// cache and client certificate of a collector's configuration that others
// can read.
func warnReadableSecrets(w io.Writer, cfg *mssql.Config) {
	seen := map[string]bool{}
	check := func(in mssql.Instance) {
		for _, f := range []struct{ key, path string }{{"password_file", in.PasswordFile}, {"keytab", in.Keytab},
			{"credential_cache", in.CredentialCache}, {"client_certificate", in.ClientCertificate}} {
			if f.path != "" && !seen[f.path] {
				seen[f.path] = true
				warnReadable(w, f.key+" of "+in.Name, f.path)
			}
		}
	}
	for _, in := range cfg.Instances {
		check(in)
	}
	if cfg.CMS != nil {
		check(cfg.CMS.Instance)
	}
}
