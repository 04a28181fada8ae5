package collector_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

// tokenLifetime is how long the local identity endpoint's tokens live
// (Entra ID's live about an hour).
const tokenLifetime = 2 * time.Second

// identityEndpoint is a managed identity endpoint as App Service and
// Azure Arc give a process (IDENTITY_ENDPOINT, IDENTITY_HEADER), and an
// authority for a service principal (AZURE_AUTHORITY_HOST), both over
// HTTPS, issuing short-lived opaque tokens it can later vouch for.
type identityEndpoint struct {
	header             string // X-IDENTITY-HEADER
	appID, secret, url string // the service principal's
	mu                 sync.Mutex
	issued             map[string]issuedToken
	order              []string
}

type issuedToken struct {
	principal string
	expires   time.Time
}

func (e *identityEndpoint) mint(principal string) (string, time.Time) {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := "eyJ0eXAi." + hex.EncodeToString(b)
	exp := time.Now().Add(tokenLifetime)
	e.mu.Lock()
	e.issued[tok] = issuedToken{principal, exp}
	e.order = append(e.order, tok)
	e.mu.Unlock()
	return tok, exp
}

func (e *identityEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fail := func(code int, err, desc string) {
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err, "error_description": desc})
	}
	switch r.URL.Path {
	case "/msi/token":
		switch {
		case r.Header.Get("X-IDENTITY-HEADER") != e.header:
			fail(http.StatusUnauthorized, "invalid_request", "bad X-IDENTITY-HEADER")
		case r.URL.Query().Get("client_id") != "":
			// No user-assigned identity is attached here.
			fail(http.StatusBadRequest, "invalid_request", "Identity not found")
		case r.URL.Query().Get("resource") != "https://database.windows.net/":
			fail(http.StatusBadRequest, "invalid_resource", "resource "+r.URL.Query().Get("resource"))
		default:
			tok, exp := e.mint("restorewatch-mi")
			_ = json.NewEncoder(w).Encode(map[string]string{"access_token": tok, "token_type": "Bearer",
				"expires_on": fmt.Sprint(exp.Unix()), "resource": "https://database.windows.net/"})
		}
	case "/adfs/.well-known/openid-configuration":
		// An ADFS-shaped authority: MSAL asks no instance discovery of
		// login.microsoftonline.com for it, which a test cannot reach.
		_ = json.NewEncoder(w).Encode(map[string]string{"token_endpoint": e.url + "/adfs/oauth2/token",
			"authorization_endpoint": e.url + "/adfs/oauth2/authorize", "issuer": e.url + "/adfs"})
	case "/adfs/oauth2/token":
		_ = r.ParseForm()
		switch {
		case r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != e.appID:
			fail(http.StatusBadRequest, "unauthorized_client", "unknown application "+r.PostForm.Get("client_id"))
		case r.PostForm.Get("client_secret") != e.secret:
			fail(http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
		default:
			tok, _ := e.mint("restorewatch-sp")
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer",
				"expires_in": int(tokenLifetime.Seconds())})
		}
	default:
		fail(http.StatusNotFound, "not_found", r.URL.Path)
	}
}

// verify is the TDS server's check of a token: issued here and not expired.
func (e *identityEndpoint) verify(tok string) (string, error) {
	e.mu.Lock()
	it, ok := e.issued[tok]
	e.mu.Unlock()
	switch {
	case !ok:
		return "", errors.New("token not issued by the identity endpoint")
	case !time.Now().Before(it.expires):
		return "", fmt.Errorf("token expired %v ago", time.Since(it.expires).Round(time.Millisecond))
	}
	return it.principal, nil
}

// A collector on a managed identity (entra = "managed_identity", and
// entra = "default", whose chain reaches the same identity) or a service
// principal with its secret in a file keeps
// collecting across the expiry of its token: each pass logs in with a
// token fetched then, where the static token of entra = "token" fails once
// it has expired.
//
// azidentity talks to the endpoint through its own HTTP client, which
// trusts only the system's CAs; SSL_CERT_FILE adds the test CA, but Go
// reads it once per process, so the test runs in a process of its own.
func TestEntraCollectorAcrossTokenExpiry(t *testing.T) {
	if os.Getenv("RW_TEST_ENTRA_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEntraCollectorAcrossTokenExpiry$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "RW_TEST_ENTRA_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestEntraCollectorAcrossTokenExpiry") {
			t.Fatalf("in its own process: %v\n%s", err, out)
		}
		t.Logf("in its own process:\n%s", out)
		return
	}
	f := newFleet(t)
	t.Setenv("SSL_CERT_FILE", f.caFile)
	ep := &identityEndpoint{header: "hdr-7c1f", appID: "6f1d0c9e-rw-app", secret: "sp~Secret.With/odd&chars=9", issued: map[string]issuedToken{}}
	ts := httptest.NewUnstartedServer(ep)
	var err error
	if ts.TLS, err = f.ca.ServerTLS("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ep.url = ts.URL
	t.Setenv("AZURE_AUTHORITY_HOST", ts.URL)
	secretFile := t.TempDir() + "/sp-secret"
	if err := os.WriteFile(secretFile, []byte(ep.secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("IDENTITY_ENDPOINT", ts.URL+"/msi/token")
	t.Setenv("IDENTITY_HEADER", ep.header)

	// entra = "default" finds the same identity through azidentity's
	// chain (no AZURE_* variables, so managed identity answers).
	for _, v := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_TOKEN_CREDENTIALS"} {
		t.Setenv(v, "") // restored after the test
		os.Unsetenv(v)  // azidentity tells unset from empty
	}
	f.addServed("AZ-MI", "16.0.4135.4", serving{fedAuth: ep.verify}).Startup(base.Add(-time.Hour))
	f.addServed("AZ-DEFAULT", "16.0.4135.4", serving{fedAuth: ep.verify}).Startup(base.Add(-time.Hour))
	// A service principal with its secret in a file, signing in at an
	// ADFS-shaped authority (AZURE_AUTHORITY_HOST, tenant "adfs").
	f.addServed("AZ-SP", "16.0.4135.4", serving{fedAuth: ep.verify}).Startup(base.Add(-time.Hour))
	mi, dc, sp := &f.cfg.Instances[0], &f.cfg.Instances[1], &f.cfg.Instances[2]
	mi.Auth, mi.Entra, mi.User, mi.PasswordEnv = mssql.AuthEntra, mssql.EntraManagedIdentity, "", ""
	dc.Auth, dc.Entra, dc.User, dc.PasswordEnv = mssql.AuthEntra, mssql.EntraDefault, "", ""
	sp.Auth, sp.Entra, sp.User, sp.Tenant, sp.PasswordEnv, sp.PasswordFile = mssql.AuthEntra, mssql.EntraServicePrincipal, ep.appID, "adfs", "", secretFile

	f.once()
	for _, name := range []string{"AZ-MI", "AZ-DEFAULT", "AZ-SP"} {
		if r := f.runs()[name]; r.Status != store.RunOK {
			t.Fatalf("%s first pass: %s %v", name, r.Status, r.Errors)
		}
	}
	first := f.srv["AZ-MI"].Logins()
	if len(first) != 1 || first[0].Auth != tdstest.AuthFedAuth || first[0].Refused != "" || first[0].User != "restorewatch-mi" {
		t.Fatalf("first pass logins %+v", first)
	}
	tokA := first[0].Token

	// The same token, as entra = "token" would hold it, on another server.
	t.Setenv("RW_TEST_STATIC_TOKEN", tokA)
	f.addServed("AZ-STATIC", "16.0.4135.4", serving{fedAuth: ep.verify}).Startup(base.Add(-time.Hour))
	st := &f.cfg.Instances[3]
	st.Auth, st.Entra, st.User, st.PasswordEnv = mssql.AuthEntra, mssql.EntraToken, "", "RW_TEST_STATIC_TOKEN"

	time.Sleep(tokenLifetime + 300*time.Millisecond)
	if _, err := ep.verify(tokA); err == nil {
		t.Fatal("the first token is still valid after its lifetime")
	}
	f.once()
	runs := f.runs()
	for _, name := range []string{"AZ-MI", "AZ-DEFAULT", "AZ-SP"} {
		if r := runs[name]; r.Status != store.RunOK {
			t.Fatalf("%s, pass after the first tokens expired: %s %v", name, r.Status, r.Errors)
		}
		l := f.srv[name].Logins()
		if len(l) != 2 || l[0].Refused != "" || l[1].Refused != "" || l[1].Token == l[0].Token || l[1].Token == tokA {
			t.Errorf("%s logins %+v, want a second login with a new token", name, l)
		}
	}
	if r := runs["AZ-STATIC"]; r.Status != store.RunFailed || !strings.Contains(r.Errors["connect"], "18456") {
		t.Errorf("the expired static token: %s %v, want a failed login", r.Status, r.Errors)
	}
	if l := f.srv["AZ-STATIC"].Logins(); len(l) != 1 || !strings.Contains(l[0].Refused, "expired") {
		t.Errorf("static token logins %+v, want one refused as expired", l)
	}
	// A user-assigned identity the machine does not have: the error says
	// which credential failed and what to check.
	mi = &f.cfg.Instances[0] // addServed grew the slice
	mi.User = "00000000-0000-0000-0000-00000000c11d"
	f.once()
	if r := f.runs()["AZ-MI"]; r.Status != store.RunFailed || !strings.Contains(r.Errors["connect"], "Entra ID: no managed identity token") ||
		!strings.Contains(r.Errors["connect"], "Identity not found") {
		t.Errorf("unknown user-assigned identity: %s %v", r.Status, r.Errors)
	} else {
		t.Logf("unknown user-assigned identity: %s", r.Errors["connect"])
	}
	if l := f.srv["AZ-SP"].Logins(); len(l) < 1 || l[0].User != "restorewatch-sp" {
		t.Errorf("service principal logins %+v", l)
	}
	for _, tok := range append(ep.order, ep.secret) {
		if strings.Contains(f.logs.String(), tok) {
			t.Error("a token or the secret is in the log")
		}
	}
}
