package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A password file or token file others can read is used, with a warning
// naming it (issue 28 item 6); once chmod 600, no warning.
func TestWarnsOnSecretFilesOthersCanRead(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "sql01.pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(pw, 0o644) // whatever the umask
	cfgPath := filepath.Join(dir, "rw.toml")
	toml := "[[instance]]\nname = \"SQL01\"\nhost = \"sql01.corp\"\nuser = \"restorewatch\"\npassword_file = \"" + filepath.ToSlash(pw) + "\"\n"
	if err := os.WriteFile(cfgPath, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	warnReadableSecrets(&out, cfg)
	if !strings.Contains(out.String(), pw) || !strings.Contains(out.String(), "chmod 600") {
		t.Errorf("a 0644 password file: %q, want a warning naming it", out.String())
	}
	out.Reset()
	warnReadable(&out, "--push-token-file", pw)
	if !strings.Contains(out.String(), "--push-token-file "+pw) {
		t.Errorf("a 0644 token file: %q", out.String())
	}
	os.Chmod(pw, 0o600)
	out.Reset()
	warnReadableSecrets(&out, cfg)
	warnReadable(&out, "--push-token-file", pw)
	if out.Len() != 0 {
		t.Errorf("a 0600 file warned: %q", out.String())
	}
}

// A keytab holds the account's keys: one others can read is warned about
// like a password file.
func TestWarnsOnKeytabOthersCanRead(t *testing.T) {
	dir := t.TempDir()
	kt := filepath.Join(dir, "rw.keytab")
	if err := os.WriteFile(kt, []byte{5, 2}, 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(kt, 0o640)
	toml := "[[instance]]\nname = \"HR01\"\nhost = \"hr01.corp\"\nauth = \"windows\"\nuser = \"svc@CORP.EXAMPLE\"\nkeytab = \"" + filepath.ToSlash(kt) + "\"\n"
	cfg, err := parseConfig([]byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	warnReadableSecrets(&out, cfg)
	if !strings.Contains(out.String(), "keytab of HR01 "+kt) {
		t.Errorf("a 0640 keytab: %q, want a warning naming it", out.String())
	}
}
