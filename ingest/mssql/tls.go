package mssql

import (
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// Encryption settings (the instance's encrypt key, go-mssqldb's encrypt).
// The collector's default is EncryptStrict, falling back to EncryptTrue on
// a server that does not speak TDS 8; both validate the server's
// certificate. The others must be written in the configuration and leave
// a warning on every pass.
const (
	EncryptStrict  = "strict"  // TDS 8: TLS from the first byte, certificate validated (SQL Server 2022+)
	EncryptTrue    = "true"    // TDS 7.x: TLS negotiated in PRELOGIN, certificate validated
	EncryptFalse   = "false"   // the login is encrypted only if the server offers TLS; queries never are
	EncryptDisable = "disable" // nothing is encrypted
)

// InsecureNote starts the run-record note of an instance whose login can
// cross the network readable, so pages can pick it out.
const InsecureNote = store.NoteInsecureLogin

// normalEncrypt maps go-mssqldb's synonyms to the four settings; "" is the
// default.
func normalEncrypt(v string) string {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "mandatory":
		return EncryptTrue
	case "optional":
		return EncryptFalse
	}
	return v
}

// encryptModes is the order in which Connect tries encryption settings:
// the configured one, or by default TDS 8 then TDS 7.x TLS, both with the
// certificate validated. An instance that trusts any certificate skips
// strict, which always validates.
func encryptModes(in *Instance) []string {
	switch {
	case in.Encrypt != "":
		return []string{in.Encrypt}
	case in.TrustServerCertificate:
		return []string{EncryptTrue}
	}
	return []string{EncryptStrict, EncryptTrue}
}

// Insecure says why the instance's login can be read on the network, or ""
// when it is encrypted to a validated certificate. The collector records
// it on every pass and the collector page shows it.
func (in *Instance) Insecure() string {
	var why []string
	switch in.Encrypt {
	case EncryptDisable:
		why = append(why, `encrypt = "disable": the login and every query cross the network unencrypted, the password readable by anyone on the path`)
	case EncryptFalse:
		why = append(why, `encrypt = "`+in.Encrypt+`": only the login is encrypted, and only when the server offers TLS; a server (or anyone posing as it) that offers none receives the password in clear, and queries are never encrypted`)
	}
	if in.TrustServerCertificate && in.Encrypt != EncryptDisable {
		why = append(why, "trust_server_certificate = true: the server's certificate is not checked, so anyone on the path can pose as the server and read the password")
	}
	if len(why) == 0 {
		return ""
	}
	return InsecureNote + strings.Join(why, "; ")
}

// noTDS8 reports whether a strict login failed because the server does not
// speak TDS 8: the TCP connection was made but the TLS handshake got no
// TLS answer (the server closed the connection, or let the ClientHello
// wait until the login timeout, as servers before SQL Server 2022 do). A
// certificate that fails validation is not that: the fallback would meet
// the same certificate. Neither is a refused connection (no handshake).
func noTDS8(err error) bool {
	if err == nil || !strings.HasPrefix(err.Error(), "TLS Handshake failed") {
		return false
	}
	var cv *tls.CertificateVerificationError
	return !errors.As(err, &cv) && !strings.Contains(err.Error(), "x509:")
}

// tlsFailure turns the driver's TLS failures into configuration errors
// that say what to change; nil for any other error.
func tlsFailure(in *Instance, err error) *Error {
	msg := err.Error()
	fail := func(m string) *Error { return &Error{Source: SourceConnect, Kind: KindConfig, Msg: m} }
	var cv *tls.CertificateVerificationError
	switch {
	case errors.As(err, &cv) || strings.Contains(msg, "x509:"):
		hint := `give the CA that signed it as certificate = "/path/ca.pem" (or .der)`
		if in.Certificate != "" {
			hint = "check that " + in.Certificate + " is the CA that signed it"
		}
		return fail("the server's TLS certificate is not trusted (" + msg + "): " + hint +
			`, and set host_name_in_certificate when the certificate names the server otherwise than host`)
	case strings.Contains(msg, "server does not support encryption"):
		return fail(`the server offers no TLS, so the login would cross the network in clear: give SQL Server a certificate ` +
			`(SQL Server Configuration Manager, Protocols for the instance, Certificate), or accept the risk with encrypt = "false"`)
	case strings.Contains(msg, "cannot read certificate") || strings.Contains(msg, "certificate type"):
		return fail("certificate: " + msg)
	case strings.HasPrefix(msg, "TLS Handshake failed") && in.Encrypt == EncryptStrict:
		return fail(`TLS handshake failed (` + msg + `): encrypt = "strict" needs SQL Server 2022 or later (TDS 8); ` +
			`leave encrypt unset to fall back to TDS 7.x encryption on older servers`)
	}
	return nil
}

// validateTLS checks the encryption keys and normalises encrypt.
func (in *Instance) validateTLS() error {
	in.Encrypt = normalEncrypt(in.Encrypt)
	in.Certificate = strings.TrimSpace(in.Certificate)
	in.HostNameInCertificate = strings.TrimSpace(in.HostNameInCertificate)
	switch in.Encrypt {
	case "", EncryptStrict, EncryptTrue, EncryptFalse, EncryptDisable:
	default:
		return fmt.Errorf("encrypt %q: want strict, true, false or disable (or leave it out: strict, else true, with the certificate validated)", in.Encrypt)
	}
	if in.Encrypt == EncryptStrict && in.TrustServerCertificate {
		return errors.New(`encrypt = "strict" always validates the certificate: remove trust_server_certificate, or give the CA as certificate`)
	}
	if c := in.Certificate; c != "" {
		// go-mssqldb reads the file by its extension at connect time.
		if ext := strings.ToLower(filepath.Ext(c)); ext != ".pem" && ext != ".der" {
			return fmt.Errorf("certificate %q: want a .pem or .der file", c)
		}
	}
	if in.Encrypt == EncryptDisable && (in.Certificate != "" || in.HostNameInCertificate != "" || in.TrustServerCertificate) {
		return errors.New(`encrypt = "disable" uses no TLS: certificate, host_name_in_certificate and trust_server_certificate do nothing`)
	}
	return nil
}
