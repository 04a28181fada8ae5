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
// Azure Arc give a process (IDENTITY_ENDPOINT, IDENTITY_HEADER), over
// HTTPS, issuing short-lived opaque tokens it can later vouch for.
type identityEndpoint struct {
	header string
	mu     sync.Mutex
	issued map[string]time.Time // token → expiry
	order  []string
}

func (e *identityEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-IDENTITY-HEADER") != e.header {
		http.Error(w, `{"error":"invalid_request","error_description":"bad X-IDENTITY-HEADER"}`, http.StatusUnauthorized)
		return
	}
	if id := r.URL.Query().Get("client_id"); id != "" {
		// No user-assigned identity is attached here.
		http.Error(w, `{"error":"invalid_request","error_description":"Identity not found"}`, http.StatusBadRequest)
		return
	}
	if res := r.URL.Query().Get("resource"); res != "https://database.windows.net/" {
		http.Error(w, `{"error":"invalid_resource","error_description":"resource `+res+`"}`, http.StatusBadRequest)
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := "eyJ0eXAi." + hex.EncodeToString(b)
	exp := time.Now().Add(tokenLifetime)
	e.mu.Lock()
	e.issued[tok] = exp
	e.order = append(e.order, tok)
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"access_token": tok, "token_type": "Bearer",
		"expires_on": fmt.Sprint(exp.Unix()), "resource": "https://database.windows.net/"})
}

// verify is the TDS server's check of a token: issued here and not expired.
func (e *identityEndpoint) verify(tok string) (string, error) {
	e.mu.Lock()
	exp, ok := e.issued[tok]
	e.mu.Unlock()
	switch {
	case !ok:
		return "", errors.New("token not issued by the identity endpoint")
	case !time.Now().Before(exp):
		return "", fmt.Errorf("token expired %v ago", time.Since(exp).Round(time.Millisecond))
	}
	return "restorewatch-mi", nil
}

// A collector on a managed identity (entra = "managed_identity", and
// entra = "default", whose chain reaches the same identity) keeps
// collecting across the expiry of its token: each pass logs in with a
// token fetched then, where the static token of entra = "token" fails once
// it has expired.
//
// azidentity talks to the endpoint through its own HTTP client, which
// trusts only the system's CAs; SSL_CERT_FILE adds the test CA, but Go
// reads it once per process, so the test runs in a process of its own.
func TestEntraManagedIdentityAcrossTokenExpiry(t *testing.T) {
	if os.Getenv("RW_TEST_ENTRA_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEntraManagedIdentityAcrossTokenExpiry$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "RW_TEST_ENTRA_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestEntraManagedIdentityAcrossTokenExpiry") {
			t.Fatalf("in its own process: %v\n%s", err, out)
		}
		t.Logf("in its own process:\n%s", out)
		return
	}
	f := newFleet(t)
	t.Setenv("SSL_CERT_FILE", f.caFile)
	ep := &identityEndpoint{header: "hdr-7c1f", issued: map[string]time.Time{}}
	ts := httptest.NewUnstartedServer(ep)
	var err error
	if ts.TLS, err = f.ca.ServerTLS("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
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
	mi, dc := &f.cfg.Instances[0], &f.cfg.Instances[1]
	mi.Auth, mi.Entra, mi.User, mi.PasswordEnv = mssql.AuthEntra, mssql.EntraManagedIdentity, "", ""
	dc.Auth, dc.Entra, dc.User, dc.PasswordEnv = mssql.AuthEntra, mssql.EntraDefault, "", ""

	f.once()
	for _, name := range []string{"AZ-MI", "AZ-DEFAULT"} {
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
	st := &f.cfg.Instances[2]
	st.Auth, st.Entra, st.User, st.PasswordEnv = mssql.AuthEntra, mssql.EntraToken, "", "RW_TEST_STATIC_TOKEN"

	time.Sleep(tokenLifetime + 300*time.Millisecond)
	if _, err := ep.verify(tokA); err == nil {
		t.Fatal("the first token is still valid after its lifetime")
	}
	f.once()
	runs := f.runs()
	for _, name := range []string{"AZ-MI", "AZ-DEFAULT"} {
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
	for _, tok := range ep.order {
		if strings.Contains(f.logs.String(), tok) {
			t.Error("a token is in the log")
		}
	}
}
