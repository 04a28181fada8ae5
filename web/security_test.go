package web_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

const wantCSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'"

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	c := client(t)
	for _, p := range []string{"/", "/api/restores?limit=1", "/no/such/page", "/regressions/99999", "/static/app.css", "/healthz", "/metrics"} {
		_, _, h := get(t, c, ts.URL+p)
		for k, want := range map[string]string{"Content-Security-Policy": wantCSP, "X-Content-Type-Options": "nosniff",
			"X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
			if got := h.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", p, k, got, want)
			}
		}
	}
}

// postForm posts a urlencoded form with the client's cookies.
func postForm(t *testing.T, c *http.Client, u string, form url.Values, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func firstRegression(t *testing.T, db warehouse) store.Regression {
	t.Helper()
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{Status: store.StatusOpen})
	if err != nil || len(regs) == 0 {
		t.Fatalf("no open regression: %v", err)
	}
	return regs[0]
}

func TestStatusFormNeedsCSRF(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	reg := firstRegression(t, db)
	u := ts.URL + "/regressions/" + itoa(reg.ID) + "/status"
	tok := csrf(t, c, ts.URL)
	if resp := postForm(t, c, u, url.Values{"status": {"acknowledged"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("post without a CSRF token: %d, want 403", resp.StatusCode)
	}
	if resp := postForm(t, c, u, url.Values{"status": {"acknowledged"}, "_csrf": {tok + "x"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("post with a wrong CSRF token: %d, want 403", resp.StatusCode)
	}
	// A token from another visitor's cookie does not count either.
	other := client(t)
	if resp := postForm(t, other, u, url.Values{"status": {"acknowledged"}, "_csrf": {tok}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("post with another client's token: %d, want 403", resp.StatusCode)
	}
	resp := postForm(t, c, u, url.Values{"status": {"acknowledged"}, "note": {"ticket <b>42</b>"}, "_csrf": {tok}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/regressions/"+itoa(reg.ID) {
		t.Fatalf("post with the CSRF token: %d to %q, want 303 to the regression", resp.StatusCode, resp.Header.Get("Location"))
	}
	got, err := db.GetRegression(t.Context(), reg.ID)
	if err != nil || got.Status != store.StatusAcknowledged || got.StatusNote != "ticket <b>42</b>" {
		t.Fatalf("after acknowledging: %+v, %v", got, err)
	}
	_, body, _ := get(t, c, ts.URL+"/regressions/"+itoa(reg.ID))
	if !strings.Contains(body, "ticket &lt;b&gt;42&lt;/b&gt;") {
		t.Error("the status note is not shown escaped on the regression page")
	}
	if resp := postForm(t, c, u, url.Values{"status": {"bogus"}, "_csrf": {tok}}, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown status: %d, want 400", resp.StatusCode)
	}
	if resp := postForm(t, c, ts.URL+"/regressions/99999/status", url.Values{"status": {"resolved"}, "_csrf": {tok}}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("status of a missing regression: %d, want 404", resp.StatusCode)
	}
}

func TestWritesNeedTheTokenWhenSet(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db, Token: "s3cret-token"})
	c := client(t)
	reg := firstRegression(t, db)
	u := ts.URL + "/regressions/" + itoa(reg.ID) + "/status"
	tok := csrf(t, c, ts.URL)
	if resp := postForm(t, c, u, url.Values{"status": {"resolved"}, "_csrf": {tok}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("form without the write token: %d, want 401", resp.StatusCode)
	}
	if resp := postForm(t, c, u, url.Values{"status": {"resolved"}, "_csrf": {tok}, "token": {"wrong"}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("form with a wrong token: %d, want 401", resp.StatusCode)
	}
	if resp := postForm(t, c, u, url.Values{"status": {"resolved"}, "token": {"s3cret-token"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("form with the token but no CSRF token: %d, want 403", resp.StatusCode)
	}
	if resp := postForm(t, c, u, url.Values{"status": {"resolved"}, "_csrf": {tok}, "token": {"s3cret-token"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("form with both tokens: %d, want 303", resp.StatusCode)
	}
	// An API client sends the token as a Bearer header and needs no CSRF token.
	api := &http.Client{Timeout: 10 * time.Second}
	resp := postForm(t, api, u, url.Values{"status": {"acknowledged"}}, map[string]string{"Authorization": "Bearer s3cret-token", "Accept": "application/json"})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Bearer post: %d, want 200", resp.StatusCode)
	}
	if resp := postForm(t, api, u, url.Values{"status": {"acknowledged"}}, map[string]string{"Authorization": "Bearer nope"}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong Bearer token: %d, want 401", resp.StatusCode)
	}
	// The import page asks for the token; an upload without it is refused
	// before its file is read.
	_, body, _ := get(t, c, ts.URL+"/import")
	if !strings.Contains(body, `name="token"`) {
		t.Error("with a token set, the import form has no token field")
	}
	if code := upload(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "history"}, historyCSV, nil); code != http.StatusUnauthorized {
		t.Errorf("upload without the token: %d, want 401", code)
	}
	_, metrics, _ := get(t, c, ts.URL+"/metrics")
	if strings.Contains(metrics, "s3cret") {
		t.Error("the metrics carry the write token")
	}
}

// upload posts a multipart import: fields first, then one file.
func upload(t *testing.T, c *http.Client, base string, fields map[string]string, content string, header map[string]string) int {
	t.Helper()
	code, _ := uploadBody(t, c, base, fields, content, header)
	return code
}

func uploadBody(t *testing.T, c *http.Client, base string, fields map[string]string, content string, header map[string]string) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, k := range []string{"_csrf", "token", "kind", "instance", "database"} {
		if v, ok := fields[k]; ok {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile("files", "upload-history.csv")
	fw.Write([]byte(content))
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/import", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

func TestUploadImportsAndReportsRejects(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	tok := csrf(t, c, ts.URL)
	code, body := uploadBody(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "history"}, historyCSV, nil)
	if code != http.StatusOK {
		t.Fatalf("upload: %d %.300s", code, body)
	}
	for _, want := range []string{"upload-history.csv:3", "Import summary", `href="/instances/UPLOAD01"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	if _, err := db.GetInstance(t.Context(), "UPLOAD01"); err != nil {
		t.Errorf("the uploaded instance is not in the warehouse: %v", err)
	}
	// The same file again adds nothing; a JSON client gets the summary as JSON.
	code, body = uploadBody(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "history"}, historyCSV, map[string]string{"Accept": "application/json"})
	if code != http.StatusOK || !strings.Contains(body, `"added":0`) {
		t.Errorf("re-upload: %d %s", code, body)
	}
	if code := upload(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "nonsense"}, historyCSV, nil); code != http.StatusBadRequest {
		t.Errorf("unknown kind: %d, want 400", code)
	}
}

func TestUploadLimits(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db, MaxUpload: 2048, ImportBurst: 3, ImportEvery: time.Hour})
	c := client(t)
	tok := csrf(t, c, ts.URL)
	big := historyCSV + strings.Repeat("x", 4096)
	if code := upload(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "history"}, big, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("an upload over the limit: %d, want 413", code)
	}
	// Two more uploads use the burst of 3; the next is refused.
	for i := 0; i < 2; i++ {
		upload(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "history"}, "x", nil)
	}
	if code := upload(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "history"}, "x", nil); code != http.StatusTooManyRequests {
		t.Errorf("the 4th upload within the hour: %d, want 429", code)
	}
}

func TestThemeLinkStaysOnThisServer(t *testing.T) {
	_, ts := serve(t, web.Config{DB: storetest.Open(t)})
	c := client(t)
	// The raw query is sent as written, so each bypass reaches the server
	// exactly as a crafted link would.
	for _, tc := range []struct{ rawBack, want string }{
		{url.QueryEscape("/restores?kind=full"), "/restores?kind=full"},
		{url.QueryEscape("/instances/SQL%5CPROD"), "/instances/SQL%5CPROD"},
		{"//evil.example/", "/"},
		{url.QueryEscape("//evil.example/"), "/"},
		{url.QueryEscape("https://evil.example/"), "/"},
		{url.QueryEscape("https:evil.example"), "/"},
		{url.QueryEscape("javascript:alert(1)"), "/"},
		{url.QueryEscape(`/\evil.example`), "/"},
		{"/%5Cevil.example", "/"},
		{"/%5C%5Cevil.example", "/"},
		{"/%09/evil.example", "/"},              // browsers drop the tab: //evil.example
		{"/%0A/evil.example", "/"},              // and newlines
		{"/%0D%0ALocation:%20http://evil", "/"}, // header splitting
		{"%09//evil.example", "/"},
		{"/%2F/evil.example", "/"},   // decoded once: //evil.example
		{"/%252F/evil.example", "/"}, // the path decodes to //evil.example
		{"/%255C/evil.example", "/"}, // and to /\evil.example
		{"/%00/evil.example", "/"},
		{"/%E2%80%AE/evil.example", "/"}, // a Unicode control
		{"/%C2%85/evil.example", "/"},    // NEL
		{"%20/evil.example", "/"},
		{"evil.example", "/"},
		{"", "/"},
	} {
		resp, err := c.Get(ts.URL + "/theme?set=dark&back=" + tc.rawBack)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); got != tc.want {
			t.Errorf("theme back=%s redirects to %q, want %q", tc.rawBack, got, tc.want)
		}
	}
	_, body, _ := get(t, c, ts.URL+"/")
	if !strings.Contains(body, `data-theme="dark"`) {
		t.Error("the chosen theme is not applied")
	}
}
