package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wmzip/wmzip/sign"
)

// TestSignVerbs: keygen, sign, verify --key, info and append on a signed
// file; minisign, when installed (WMZIP_MINISIGN_REQUIRED=1 requires it),
// checks the detached signature.
func TestSignVerbs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "gen", "graphworld", "--nodes", "30", "--graph-seed", "4", "--episodes", "2", "--steps", "20", "--seed", "1", "-q", "-o", p("t.npz"))
	mustRun(t, "gen", "graphworld", "--nodes", "30", "--graph-seed", "4", "--episodes", "1", "--steps", "10", "--seed", "2", "-q", "-o", p("more.npz"))
	mustRun(t, "train", "-q", "-o", p("m.wmm"), p("t.npz"))
	mustRun(t, "encode", "-q", "--keyframe", "8", "--embed-model", "-m", p("m.wmm"), "-o", p("t.wmz"), p("t.npz"))

	os.WriteFile(p("pw"), []byte("a password\n"), 0o600)
	kid := strings.Fields(mustRun(t, "keygen", "-o", p("k"), "--password-file", p("pw"), "--kdf-memory", "16"))[1]
	kid = strings.TrimSuffix(kid, ":")
	mustRun(t, "keygen", "-o", p("other"), "--unencrypted")
	if st, err := os.Stat(p("k.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret key file: %v %v", st.Mode(), err)
	}
	mustFail(t, "", "exists", "keygen", "-o", p("k"), "--unencrypted")
	// Encrypted unless asked: without a password (stdin is empty here)
	// keygen writes nothing.
	mustFail(t, p("nopw.key"), "password", "keygen", "-o", p("nopw"))
	for name, want := range map[string]bool{"k.key": true, "other.key": false} {
		b, _ := os.ReadFile(p(name))
		if enc, err := sign.SecretKeyEncrypted(b); err != nil || enc != want {
			t.Fatalf("%s: encrypted %v (%v), want %v", name, enc, err, want)
		}
	}

	if out := mustRun(t, "info", p("t.wmz")); !strings.Contains(out, "signature    unsigned") {
		t.Fatalf("info of an unsigned file: %s", out)
	}
	mustFail(t, "", "not signed", "verify", "-q", "--key", p("k.pub"), p("t.wmz"))
	mustFail(t, "", "password", "sign", "-k", p("k.key"), "--password-file", p("other.pub"), p("t.wmz"))
	out := mustRun(t, "sign", "-k", p("k.key"), "--password-file", p("pw"), p("t.wmz"))
	if !strings.Contains(out, "generation 1") {
		t.Fatalf("sign: %s", out)
	}
	out = mustRun(t, "info", p("t.wmz"))
	if !strings.Contains(out, "signature    signed by key "+kid+",") {
		t.Fatalf("info of a signed file: %s", out)
	}
	out = mustRun(t, "verify", "--key", p("k.pub"), p("t.wmz"))
	if !strings.Contains(out, "every record matches its signed hash") || !strings.Contains(out, "detached signature") {
		t.Fatalf("verify --key: %s", out)
	}
	mustFail(t, "", "another key", "verify", "-q", "--key", p("other.pub"), p("t.wmz"))
	mustFail(t, "", "older than required", "verify", "-q", "--key", p("k.pub"), "--min-generation", "2", p("t.wmz"))

	// minisign verifies the detached signature, and rejects a changed file.
	if bin, err := exec.LookPath("minisign"); err == nil {
		if out, err := exec.Command(bin, "-Vm", p("t.wmz"), "-p", p("k.pub")).CombinedOutput(); err != nil {
			t.Fatalf("minisign -V: %v\n%s", err, out)
		}
		b, _ := os.ReadFile(p("t.wmz"))
		b[100] ^= 1
		os.WriteFile(p("bad.wmz"), b, 0o644)
		if out, err := exec.Command(bin, "-Vm", p("bad.wmz"), "-x", p("t.wmz.minisig"), "-p", p("k.pub")).CombinedOutput(); err == nil {
			t.Fatalf("minisign accepts a changed file: %s", out)
		}
	} else if os.Getenv("WMZIP_MINISIGN_REQUIRED") == "1" {
		t.Fatal("minisign not installed and WMZIP_MINISIGN_REQUIRED=1")
	}

	// Append: refused without a choice; re-signed with the key.
	mustFail(t, "", "re-signs it", "append", "-q", p("t.wmz"), p("more.npz"))
	mustRun(t, "append", "-q", "--key", p("k.key"), "--password-file", p("pw"), p("t.wmz"), p("more.npz"))
	// The detached signature of the old version no longer matches; the
	// file itself verifies at the new generation.
	mustFail(t, "", "detached signature", "verify", "-q", "--key", p("k.pub"), p("t.wmz"))
	os.Remove(p("t.wmz.minisig"))
	mustRun(t, "verify", "-q", "--key", p("k.pub"), "--min-generation", "2", p("t.wmz"))
	mustRun(t, "append", "-q", "--drop-signature", p("t.wmz"), p("more.npz"))
	mustFail(t, "", "not signed", "verify", "-q", "--key", p("k.pub"), p("t.wmz"))
	mustRun(t, "verify", "-q", p("t.wmz"))
}
