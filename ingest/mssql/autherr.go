package mssql

import (
	"strings"
)

// authFailure turns a Kerberos or Entra ID failure that happened before
// the server answered (at the KDC, reading a keytab, at the token
// endpoint) into an error that names the usual cause and what to change;
// nil for any other error. gokrb5 reports the KDC's error by its name
// (KRB_AP_ERR_SKEW …) inside a flat string, so the names are matched in
// the text. The text is the caller's to scrub; none of these holds a key.
func authFailure(in *Instance, err error) *Error {
	msg := err.Error()
	login := func(m string) *Error { return &Error{Source: SourceConnect, Kind: KindLogin, Msg: m} }
	config := func(m string) *Error { return &Error{Source: SourceConnect, Kind: KindConfig, Msg: m} }
	principal := in.User
	if principal == "" {
		principal = "the credential cache's principal"
	}
	if in.kerberos() {
		for _, c := range []struct {
			code string
			err  func() *Error
		}{
			{"KRB_AP_ERR_SKEW", func() *Error {
				return login("Kerberos: this machine's clock and the KDC's differ by more than the allowed skew (5 minutes unless krb5.conf says otherwise): " +
					"synchronise this machine with the domain's time (chrony or systemd-timesyncd pointed at a domain controller) (" + msg + ")")
			}},
			{"KRB_AP_ERR_TKT_NYV", func() *Error {
				return login("Kerberos: the ticket is not yet valid, so this machine's clock is behind the KDC's: synchronise it with the domain's time (" + msg + ")")
			}},
			{"KDC_ERR_S_PRINCIPAL_UNKNOWN", func() *Error {
				return login("Kerberos: the KDC knows no service principal " + in.SPNFor() + ": register it for the account SQL Server runs as " +
					"(setspn -S " + in.SPNFor() + ` DOMAIN\sqlservice; setspn -L DOMAIN\sqlservice lists the registered ones), ` +
					"or set spn to the one registered (an alias or listener needs its own SPN, or host = the name the SPN carries) (" + msg + ")")
			}},
			{"KDC_ERR_C_PRINCIPAL_UNKNOWN", func() *Error {
				return login("Kerberos: the KDC knows no principal " + principal + ": check user and realm (realms are upper case, CORP.EXAMPLE) (" + msg + ")")
			}},
			{"KDC_ERR_PREAUTH_FAILED", func() *Error {
				return login("Kerberos: the KDC refused the key of " + principal + ": the keytab (or password) is not the account's current one " +
					"(a gMSA's password rotates: export the keytab again) (" + msg + ")")
			}},
			{"KRB_AP_ERR_BAD_INTEGRITY", func() *Error {
				return login("Kerberos: the KDC refused the key of " + principal + ": the keytab (or password) is not the account's current one (" + msg + ")")
			}},
			{"KDC_ERR_WRONG_REALM", func() *Error {
				return login("Kerberos: wrong realm for " + principal + ": set realm (upper case) or write user as name@REALM (" + msg + ")")
			}},
			{"KDC_ERR_ETYPE_NOSUPP", func() *Error {
				return login("Kerberos: the KDC and the keytab share no encryption type: export the keytab with AES256-CTS-HMAC-SHA1-96 (ktpass -crypto AES256-SHA1) (" + msg + ")")
			}},
			{"KDC_ERR_CLIENT_REVOKED", func() *Error {
				return login("Kerberos: the account " + principal + " is disabled, locked out or expired (" + msg + ")")
			}},
			{"KRB_AP_ERR_TKT_EXPIRED", func() *Error {
				return login("Kerberos: the ticket has expired: renew the credential cache (kinit -R, or keep it with k5start), or use keytab (" + msg + ")")
			}},
			{"no KDCs defined", func() *Error {
				return config("Kerberos: no KDC for the realm: check realm and the [realms] section of " + in.krb5Conf() +
					" (or the DNS SRV records _kerberos._tcp.REALM) (" + msg + ")")
			}},
			{"error sending to KDC", func() *Error {
				return &Error{Source: SourceConnect, Kind: KindNetwork, Msg: "Kerberos: no KDC answered: check the [realms] kdc entries of " + in.krb5Conf() +
					" and that port 88 is open to them (" + msg + ")"}
			}},
			{"krb5-configfile does not exist", func() *Error {
				return config("Kerberos: krb5.conf " + in.krb5Conf() + " does not exist: install it (it names the realm and its KDCs) or set krb5_conf")
			}},
			{"krb5-keytabfile does not exist", func() *Error { return config("Kerberos: keytab " + in.Keytab + " does not exist") }},
			{"krb5-credcachefile does not exist", func() *Error {
				cc, _ := in.credentialCache()
				return config("Kerberos: credential cache " + cc + " does not exist: run kinit (or k5start) as the service's user, or use keytab")
			}},
			{"Unable to load krb5 config", func() *Error {
				return config("Kerberos: cannot read " + in.krb5Conf() + " (" + msg + "): install it, or set krb5_conf")
			}},
		} {
			if strings.Contains(msg, c.code) {
				return c.err()
			}
		}
		if strings.Contains(msg, "Kerberos") || strings.Contains(msg, "KDC") || strings.Contains(msg, "krb5") || strings.Contains(msg, "keytab") {
			return login("Kerberos: " + msg)
		}
		return nil
	}
	if in.Auth == AuthEntra && in.Entra != EntraToken {
		msg = oneLine(msg)
		switch {
		case strings.Contains(msg, "ManagedIdentityCredential"):
			return login("Entra ID: no managed identity token (" + msg + "): run the collector on an Azure VM, App Service or Arc-enabled server " +
				"with a managed identity, and create its login (CREATE LOGIN [name] FROM EXTERNAL PROVIDER)")
		case strings.Contains(msg, "ClientSecretCredential") || strings.Contains(msg, "ClientCertificateCredential"):
			return login("Entra ID: the service principal could not sign in (" + msg + "): check user (the application id), tenant and the secret or certificate")
		case strings.Contains(msg, "DefaultAzureCredential"):
			return login("Entra ID: no credential in the default chain (" + msg + "): set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET, or use a managed identity")
		case strings.Contains(msg, "credential"):
			return login("Entra ID: " + msg)
		}
	}
	return nil
}

// oneLine folds azidentity's multi-line report (request, response body
// between rules of dashes, a link) into one line for the run record.
func oneLine(s string) string {
	var parts []string
	for _, f := range strings.Fields(s) {
		if strings.Trim(f, "-") != "" {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, " ")
}
