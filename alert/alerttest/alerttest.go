// Package alerttest runs real alert receivers for the tests, on loopback:
// a webhook receiver that checks the HMAC signature and dedupes by key, an
// SMTP server speaking real SMTP with STARTTLS and AUTH (emersion/go-smtp),
// and Debian's prometheus-alertmanager started from its binary.
package alerttest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/restorewatch/restorewatch/alert"
)

// Box counts what a receiver got, by alert key: Deliveries counts every
// arrival (a resend too), Keys the distinct keys.
type Box struct {
	mu         sync.Mutex
	deliveries map[string]int
	messages   int
	bodies     []string
}

func newBox() *Box { return &Box{deliveries: map[string]int{}} }

func (b *Box) add(body string, keys ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.messages++
	b.bodies = append(b.bodies, body)
	for _, k := range keys {
		b.deliveries[k]++
	}
}

// Keys returns how many times each key arrived.
func (b *Box) Keys() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.deliveries))
	for k, v := range b.deliveries {
		out[k] = v
	}
	return out
}

// Messages is how many messages (requests, mails) arrived.
func (b *Box) Messages() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.messages
}

// Bodies returns every message's body as received.
func (b *Box) Bodies() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.bodies...)
}

// Webhook is a generic-webhook receiver: it refuses a body whose signature
// is wrong (401), and answers 503 while Fail is above zero (counting down),
// as a receiver in trouble would.
type Webhook struct {
	*Box
	URL       string
	mu        sync.Mutex
	fail      int // the next requests that fail with 503
	badSigned int
	hold      func()
}

// SetHold makes the receiver call hold before it acknowledges each
// request: a test blocks there to kill the sender mid-delivery.
func (w *Webhook) SetHold(hold func()) {
	w.mu.Lock()
	w.hold = hold
	w.mu.Unlock()
}

// BadSigned is how many requests came with a wrong signature.
func (w *Webhook) BadSigned() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.badSigned
}

// FailNext makes the next n requests fail.
func (w *Webhook) FailNext(n int) {
	w.mu.Lock()
	w.fail = n
	w.mu.Unlock()
}

// StartWebhook starts a webhook receiver checking signatures with secret.
func StartWebhook(t testing.TB, secret string) *Webhook {
	w := &Webhook{Box: newBox()}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if secret != "" && r.Header.Get(alert.SignatureHeader) != alert.Sign(secret, body) {
			w.mu.Lock()
			w.badSigned++
			w.mu.Unlock()
			http.Error(rw, "bad signature", http.StatusUnauthorized)
			return
		}
		w.mu.Lock()
		failing := w.fail > 0
		if failing {
			w.fail--
		}
		hold := w.hold
		w.mu.Unlock()
		if failing {
			http.Error(rw, "busy", http.StatusServiceUnavailable)
			return
		}
		var wb alert.WebhookBody
		if err := json.Unmarshal(body, &wb); err != nil || r.Header.Get("Idempotency-Key") != wb.IdempotencyKey {
			http.Error(rw, "bad body", http.StatusBadRequest)
			return
		}
		var keys []string
		for _, a := range wb.Alerts {
			keys = append(keys, a.Key)
		}
		w.add(string(body), keys...)
		if hold != nil {
			hold()
		}
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL + "/hook"
	return w
}

// StartJSON starts a receiver that records any JSON body it is posted (the
// Slack and Teams webhooks' stand-in), keyed by nothing.
func StartJSON(t testing.TB) (*Box, string) {
	b := newBox()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !json.Valid(body) {
			http.Error(rw, "not JSON", http.StatusBadRequest)
			return
		}
		b.add(string(body))
		rw.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return b, srv.URL + "/webhook"
}

// SMTP is a running SMTP server.
type SMTP struct {
	*Box
	Host   string
	Port   int
	CAFile string // the PEM of the certificate it presents
	mu     sync.Mutex
	auths  int
}

// Auths is how many logins succeeded.
func (s *SMTP) Auths() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auths
}

// StartSMTP starts an SMTP server on loopback. With tlsOn it offers
// STARTTLS with a certificate for 127.0.0.1 (CAFile) and requires
// authentication as user/password; without, it is an anonymous relay.
// Mails are recorded by the keys of their X-Restorewatch-Keys header.
func StartSMTP(t testing.TB, tlsOn bool, user, password string) *SMTP {
	s := &SMTP{Box: newBox()}
	be := smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{srv: s, needAuth: tlsOn, user: user, password: password}, nil
	})
	srv := smtp.NewServer(be)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 1 << 20
	if tlsOn {
		cert, pemBytes := selfSigned(t)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.CAFile = filepath.Join(t.TempDir(), "smtp-ca.pem")
		if err := os.WriteFile(s.CAFile, pemBytes, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	s.Host = "127.0.0.1"
	s.Port = l.Addr().(*net.TCPAddr).Port
	return s
}

type session struct {
	srv            *SMTP
	needAuth, auth bool
	user, password string
	from           string
	to             []string
}

func (s *session) AuthMechanisms() []string {
	if !s.needAuth {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.user || password != s.password {
			return errors.New("invalid credentials")
		}
		s.auth = true
		s.srv.mu.Lock()
		s.srv.auths++
		s.srv.mu.Unlock()
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.needAuth && !s.auth {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	s.srv.add(string(raw), strings.Fields(m.Header.Get("X-Restorewatch-Keys"))...)
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and localhost.
func selfSigned(t testing.TB) (tls.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "restorewatch test SMTP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	return cert, certPEM
}
