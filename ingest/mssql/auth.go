package mssql

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/microsoft/go-mssqldb/azuread"
	// Registers go-mssqldb's Kerberos authenticator ("krb5"), which the
	// driver does not import itself: without it a Linux or macOS collector
	// can only log in to Windows authentication with NTLM and a password.
	_ "github.com/microsoft/go-mssqldb/integratedauth/krb5"
)

// Authentication methods (the instance's auth key).
const (
	AuthSQL     = "sql"     // a SQL login and its password
	AuthWindows = "windows" // Kerberos (keytab, credential cache), SSPI on Windows, or NTLM with a password
	AuthEntra   = "entra"   // Microsoft Entra ID through go-mssqldb's azuread
)

// Entra ID methods (the instance's entra key). All but EntraToken get a
// fresh token from Entra ID at every login, so a collector outlives any
// token's lifetime.
const (
	EntraToken            = "token"             // a ready access token in password_env/password_file (it expires: about an hour)
	EntraServicePrincipal = "service_principal" // user = application (client) id; a secret or client_certificate
	EntraManagedIdentity  = "managed_identity"  // the VM's, App Service's or Arc server's identity; user = client id of a user-assigned one
	EntraDefault          = "default"           // azidentity's chain: AZURE_* environment, workload identity, managed identity, az login
)

// validateAuth checks the auth key and the keys that go with it.
func (in *Instance) validateAuth() error {
	for _, p := range []*string{&in.Keytab, &in.CredentialCache, &in.Krb5Conf, &in.Realm, &in.SPN, &in.Tenant, &in.ClientCertificate} {
		*p = strings.TrimSpace(*p)
	}
	in.Entra = strings.ToLower(strings.TrimSpace(in.Entra))
	hasSecret := in.PasswordEnv != "" || in.PasswordFile != ""
	if in.Auth != AuthWindows && (in.Keytab != "" || in.CredentialCache != "" || in.Krb5Conf != "" || in.Realm != "" || in.SPN != "") {
		return fmt.Errorf("keytab, credential_cache, krb5_conf, realm and spn go with auth = \"windows\", not %q", in.Auth)
	}
	if in.Auth != AuthEntra && (in.Entra != "" || in.Tenant != "" || in.ClientCertificate != "") {
		return fmt.Errorf("entra, tenant and client_certificate go with auth = \"entra\", not %q", in.Auth)
	}
	switch in.Auth {
	case AuthSQL:
		if in.User == "" {
			return errors.New("auth = \"sql\" needs user")
		}
		if !hasSecret {
			return errors.New("auth = \"sql\" needs password_env or password_file")
		}
		return nil
	case AuthWindows:
		return in.validateWindows(hasSecret)
	case AuthEntra:
		return in.validateEntra(hasSecret)
	}
	return fmt.Errorf("unknown auth %q: want sql, windows or entra", in.Auth)
}

func (in *Instance) validateWindows(hasSecret bool) error {
	if in.SPN != "" && !strings.Contains(in.SPN, "/") {
		return fmt.Errorf("spn %q: want service/host[:port], such as MSSQLSvc/sql01.corp.example:1433", in.SPN)
	}
	switch {
	case in.Keytab != "" && in.CredentialCache != "":
		return errors.New("give keytab or credential_cache, not both")
	case in.Keytab != "":
		if in.User == "" {
			return errors.New("keytab needs user: the principal whose keys it holds, such as svc_restorewatch@CORP.EXAMPLE")
		}
		if hasSecret {
			return errors.New("keytab replaces the password: remove password_env/password_file")
		}
	case in.CredentialCache != "":
		if in.User != "" || hasSecret {
			return errors.New("credential_cache names its own principal: remove user and password_env/password_file")
		}
	case in.User != "" && !hasSecret:
		return errors.New("auth = \"windows\" with user needs keytab (Kerberos) or password_env/password_file; leave user out to log in as the service's own identity")
	case in.User == "" && hasSecret:
		return errors.New("auth = \"windows\" with password_env/password_file needs user (DOMAIN\\user or user@REALM)")
	}
	return nil
}

func (in *Instance) validateEntra(hasSecret bool) error {
	if in.Entra == "" {
		switch {
		case in.User != "" && (hasSecret || in.ClientCertificate != ""):
			in.Entra = EntraServicePrincipal
		case hasSecret:
			in.Entra = EntraToken
		default:
			return errors.New(`auth = "entra" needs entra = "service_principal", "managed_identity" or "default" (or a ready token in password_env/password_file)`)
		}
	}
	switch in.Entra {
	case EntraToken:
		if !hasSecret {
			return errors.New(`entra = "token" needs password_env or password_file holding an access token`)
		}
		if in.User != "" || in.Tenant != "" || in.ClientCertificate != "" {
			return errors.New(`entra = "token" takes only the token: remove user, tenant and client_certificate`)
		}
	case EntraServicePrincipal:
		if in.User == "" {
			return errors.New(`entra = "service_principal" needs user: the application (client) id`)
		}
		if !hasSecret && in.ClientCertificate == "" {
			return errors.New(`entra = "service_principal" needs a client secret in password_env/password_file, or client_certificate`)
		}
	case EntraManagedIdentity, EntraDefault:
		if hasSecret || in.ClientCertificate != "" || in.Tenant != "" {
			return fmt.Errorf("entra = %q takes no secret, tenant or client_certificate (user may name a user-assigned identity's client id)", in.Entra)
		}
		if in.Entra == EntraDefault && in.User != "" {
			return errors.New(`entra = "default" is configured by AZURE_CLIENT_ID and the other AZURE_* variables: remove user`)
		}
	default:
		return fmt.Errorf("unknown entra %q: want service_principal, managed_identity, default or token", in.Entra)
	}
	return nil
}

// kerberos reports whether the instance logs in through go-mssqldb's
// Kerberos authenticator: auth = "windows" with a Kerberos setting, or
// with no user off Windows (the service's own identity, from its
// credential cache). On Windows, integrated logins use SSPI instead, and a
// user with a password uses SSPI (NTLM or Kerberos, as Windows decides)
// there and NTLM elsewhere.
func (in *Instance) kerberos() bool {
	if in.Auth != AuthWindows {
		return false
	}
	if in.Keytab != "" || in.CredentialCache != "" || in.Krb5Conf != "" || in.Realm != "" {
		return true
	}
	return in.User == "" && runtime.GOOS != "windows"
}

// krb5Conf is the krb5.conf the Kerberos login reads.
func (in *Instance) krb5Conf() string {
	if in.Krb5Conf != "" {
		return in.Krb5Conf
	}
	if v := os.Getenv("KRB5_CONFIG"); v != "" {
		return strings.Split(v, ":")[0] // MIT allows a list
	}
	return "/etc/krb5.conf"
}

// credentialCache is the FILE credential cache an integrated Kerberos
// login reads: credential_cache, else KRB5CCNAME, else MIT's default.
// gokrb5 reads only file caches; a KEYRING, KCM or DIR cache is refused
// with what to do instead.
func (in *Instance) credentialCache() (string, error) {
	cc := in.CredentialCache
	if cc == "" {
		cc = os.Getenv("KRB5CCNAME")
	}
	if cc == "" {
		cc = "/tmp/krb5cc_" + strconv.Itoa(os.Getuid())
	}
	if rest, ok := strings.CutPrefix(cc, "FILE:"); ok {
		return rest, nil
	}
	if i := strings.IndexByte(cc, ':'); i > 0 && !strings.Contains(cc[:i], "/") && !(len(cc[:i]) == 1 && runtime.GOOS == "windows") {
		return "", fmt.Errorf("the credential cache %q is not a file: restorewatch reads only FILE: caches; "+
			"set credential_cache (or KRB5CCNAME=FILE:/path) to a file kinit or k5start keeps, or use keytab", cc)
	}
	return cc, nil
}

// SPNFor is the service principal name a Kerberos login asks for: spn,
// else go-mssqldb's default, MSSQLSvc/host:port (host:instance for a
// named instance).
func (in *Instance) SPNFor() string {
	if in.SPN != "" {
		return in.SPN
	}
	if in.InstanceName != "" {
		return "MSSQLSvc/" + in.Host + ":" + in.InstanceName
	}
	port := in.Port
	if port == 0 {
		port = 1433
	}
	return "MSSQLSvc/" + in.Host + ":" + strconv.Itoa(port)
}

// authParams adds to q the DSN keys of the instance's Windows or Entra
// login, and says which user and password go in the DSN's user info.
func (in *Instance) authParams(q map[string]string, pw secret) (user string, password secret, err error) {
	switch {
	case in.kerberos():
		q["authenticator"] = "krb5"
		q["krb5-configfile"] = in.krb5Conf()
		if in.Realm != "" {
			q["krb5-realm"] = in.Realm
		}
		if in.SPN != "" {
			q["ServerSPN"] = in.SPN
		}
		if in.Keytab != "" {
			q["krb5-keytabfile"] = in.Keytab
			return in.User, "", nil
		}
		if in.User != "" {
			return in.User, pw, nil // a Kerberos password login (realm or krb5_conf given)
		}
		cc, err := in.credentialCache()
		if err != nil {
			return "", "", err
		}
		q["krb5-credcachefile"] = cc
		return "", "", nil
	case in.Auth == AuthWindows:
		if in.SPN != "" {
			q["ServerSPN"] = in.SPN
		}
		return in.User, pw, nil
	case in.Auth == AuthEntra:
		switch in.Entra {
		case EntraServicePrincipal:
			q["fedauth"] = azuread.ActiveDirectoryServicePrincipal
			if in.ClientCertificate != "" {
				q["clientcertpath"] = in.ClientCertificate
			}
			user := in.User
			if in.Tenant != "" {
				user += "@" + in.Tenant
			}
			return user, pw, nil
		case EntraManagedIdentity:
			q["fedauth"] = azuread.ActiveDirectoryManagedIdentity
			return in.User, "", nil
		case EntraDefault:
			q["fedauth"] = azuread.ActiveDirectoryDefault
		}
		return "", "", nil // EntraToken: the token goes through the connector
	}
	return in.User, pw, nil
}
