// Package kdctest runs a throwaway MIT Kerberos realm for tests: a KDC
// database in a temporary folder, principals and keytabs made with
// kadmin.local, and krb5kdc listening on a loopback port, optionally with
// its clock moved (through faketime) to show what clock skew does.
//
// It needs Debian's krb5-kdc and krb5-admin-server (faketime for a
// skewed clock, krb5-user for kinit). Where they are missing a test is
// skipped, saying how to install them, except under CI=true, where it
// fails: CI installs them (.ci/run), so a missing one is a broken CI
// machine, not a reason to skip.
package kdctest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// KDC is one running realm.
type KDC struct {
	Realm string
	// Krb5Conf is a krb5.conf naming the realm and its KDC, for clients.
	Krb5Conf string
	dir      string
	env      []string
	t        testing.TB
}

// Need skips t (fails it under CI=true) when the named programs are not
// installed.
func Need(t testing.TB, progs ...string) {
	t.Helper()
	var missing []string
	for _, p := range progs {
		if _, err := lookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("%s not installed: apt-get install krb5-kdc krb5-admin-server krb5-user faketime (what .ci/run installs) runs the Kerberos tests against a real KDC",
		strings.Join(missing, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// fakeTimeLib is libfaketime's path, or "".
func fakeTimeLib() string {
	m, _ := filepath.Glob("/usr/lib/*/faketime/libfaketime.so.1")
	if len(m) == 0 {
		m, _ = filepath.Glob("/usr/lib*/faketime/libfaketime.so.1")
	}
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// lookPath finds a program in PATH or in the sbin folders Debian (and
// Homebrew's krb5 keg) put the KDC's programs in, which a normal user's
// PATH lacks.
func lookPath(p string) (string, error) {
	if path, err := exec.LookPath(p); err == nil {
		return path, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin", "/opt/homebrew/opt/krb5/sbin", "/usr/local/opt/krb5/sbin"} {
		if st, err := os.Stat(filepath.Join(d, p)); err == nil && !st.IsDir() {
			return filepath.Join(d, p), nil
		}
	}
	return "", exec.ErrNotFound
}

// Start creates realm and runs its KDC until the test ends. A non-zero
// skew runs the KDC with its clock moved by skew (faketime), as a domain
// controller whose time differs from the client's.
func Start(t testing.TB, realm string, skew time.Duration) *KDC {
	t.Helper()
	progs := []string{"krb5kdc", "kdb5_util", "kadmin.local"}
	if skew != 0 {
		progs = append(progs, "faketime")
	}
	Need(t, progs...)
	dir := t.TempDir()
	port := freePort(t)
	k := &KDC{Realm: realm, Krb5Conf: filepath.Join(dir, "krb5.conf"), dir: dir, t: t}
	kdcConf := filepath.Join(dir, "kdc.conf")
	write(t, kdcConf, fmt.Sprintf(`[kdcdefaults]
 kdc_ports = %[1]d
 kdc_tcp_ports = %[1]d
[realms]
 %[2]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  max_life = 1h
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }
[logging]
 kdc = FILE:%[3]s/kdc.log
`, port, realm, dir))
	write(t, filepath.Join(dir, "kadm5.acl"), "")
	write(t, k.Krb5Conf, fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_kdc = false
 dns_lookup_realm = false
 udp_preference_limit = 1
 default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
 %[1]s = {
  kdc = 127.0.0.1:%[2]d
 }
`, realm, port))
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_KDC_PROFILE="+kdcConf)
	k.run("kdb5_util", "create", "-s", "-r", realm, "-P", "restorewatch-test-master-key")

	kdc, _ := lookPath("krb5kdc")
	cmd := exec.Command(kdc, "-n", "-r", realm)
	cmd.Env = k.env
	if skew != 0 {
		// What the faketime wrapper does, without its extra process
		// (which would outlive a kill of the wrapper).
		lib := fakeTimeLib()
		if lib == "" {
			Need(t, "libfaketime.so.1")
		}
		cmd.Env = append(cmd.Env, "LD_PRELOAD="+lib, fmt.Sprintf("FAKETIME=%+d", int(skew.Seconds())))
	}
	out, err := os.Create(filepath.Join(dir, "krb5kdc.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("kdctest: start krb5kdc: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "kdc.log")); err == nil {
				t.Logf("kdc.log:\n%s", b)
			}
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kdctest: krb5kdc did not listen on %d within 10 s", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return k
}

// AddPrincipal creates name (without @REALM) with a random key; like an
// Active Directory account, it must pre-authenticate (an encrypted
// timestamp, which the KDC checks against its clock).
func (k *KDC) AddPrincipal(name string) {
	k.t.Helper()
	k.run("kadmin.local", "-r", k.Realm, "-q", "addprinc -randkey +requires_preauth "+name+"@"+k.Realm)
}

// SetPassword gives name (without @REALM) a password, as a domain
// account has.
func (k *KDC) SetPassword(name, password string) {
	k.t.Helper()
	k.run("kadmin.local", "-r", k.Realm, "-q", "cpw -pw "+password+" "+name+"@"+k.Realm)
}

// Keytab writes the keys of the named principals to a new keytab file
// (mode 0600) and returns its path.
func (k *KDC) Keytab(file string, names ...string) string {
	k.t.Helper()
	path := filepath.Join(k.dir, file)
	for _, n := range names {
		k.run("kadmin.local", "-r", k.Realm, "-q", "ktadd -k "+path+" "+n+"@"+k.Realm)
	}
	return path
}

func (k *KDC) run(prog string, args ...string) {
	k.t.Helper()
	path, err := lookPath(prog)
	if err != nil {
		k.t.Fatalf("kdctest: %s: %v", prog, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = k.env
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "rror") {
		k.t.Fatalf("kdctest: %s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
}

func write(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a port free for both TCP and UDP on 127.0.0.1 now.
func freePort(t testing.TB) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		l.Close()
		if err == nil {
			u.Close()
			return p
		}
	}
	t.Fatal("kdctest: no free port")
	return 0
}
