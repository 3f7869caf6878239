package sign

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testKDF is cheap (scrypt N = 2^11): the key file format is the same.
var testKDF = KDF{Ops: 1 << 16, Mem: 1 << 24}

// MinisignEnv, set to 1, makes a missing minisign binary a failure of the
// interoperability tests instead of a skip (.ci/run sets it).
const MinisignEnv = "WMZIP_MINISIGN_REQUIRED"

func TestScryptParams(t *testing.T) {
	// libsodium's choice for minisign's limits, and for small ones.
	for _, c := range []struct {
		kdf  KDF
		n    uint64
		r, p int
	}{
		{DefaultKDF, 1 << 20, 8, 1},
		{testKDF, 1 << 11, 8, 1},
		{KDF{Ops: 1 << 25, Mem: 1 << 24}, 1 << 14, 8, 64},
	} {
		n, r, p := scryptParams(c.kdf)
		if n != c.n || r != c.r || p != c.p {
			t.Errorf("%+v: N=%d r=%d p=%d, want %d %d %d", c.kdf, n, r, p, c.n, c.r, c.p)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	k, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(MarshalPublicKey(k.Public()))
	if err != nil || pub.ID != k.ID || !bytes.Equal(pub.Key, k.Public().Key) {
		t.Fatalf("public key round trip: %v", err)
	}
	if got, err := ParseKeyID(k.ID.String()); err != nil || got != k.ID {
		t.Fatalf("key ID %s round trip: %v %v", k.ID, got, err)
	}
	for _, pw := range [][]byte{nil, []byte("correct horse")} {
		text, err := MarshalSecretKey(k, pw, testKDF, nil)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := SecretKeyEncrypted(text)
		if enc != (pw != nil) {
			t.Errorf("encrypted %v for password %q", enc, pw)
		}
		got, err := ParseSecretKey(text, pw)
		if err != nil || got.ID != k.ID || !bytes.Equal(got.Key, k.Key) {
			t.Fatalf("secret key round trip with password %q: %v", pw, err)
		}
		if pw != nil {
			if _, err := ParseSecretKey(text, []byte("wrong")); !errors.Is(err, ErrPassword) {
				t.Errorf("wrong password: %v, want ErrPassword", err)
			}
		}
	}
	if _, err := ParsePublicKey([]byte("untrusted comment: x\nnot base64\n")); !errors.Is(err, ErrKeyFormat) {
		t.Errorf("bad public key: %v", err)
	}
}

func TestDetached(t *testing.T) {
	k, _ := GenerateKey(nil)
	other, _ := GenerateKey(nil)
	msg := []byte("a memory")
	sig, err := SignDetached(k, bytes.NewReader(msg), "c", "timestamp:1\tfile:m\thashed")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := VerifyDetached(k.Public(), bytes.NewReader(msg), sig)
	if err != nil || tc != "timestamp:1\tfile:m\thashed" {
		t.Fatalf("verify: %q %v", tc, err)
	}
	if _, err := VerifyDetached(k.Public(), bytes.NewReader([]byte("a memorx")), sig); !errors.Is(err, ErrBadSignature) {
		t.Errorf("modified message: %v, want ErrBadSignature", err)
	}
	if _, err := VerifyDetached(other.Public(), bytes.NewReader(msg), sig); !errors.Is(err, ErrWrongKey) {
		t.Errorf("other key: %v, want ErrWrongKey", err)
	}
	forged := bytes.Replace(sig, []byte("timestamp:1"), []byte("timestamp:2"), 1)
	if _, err := VerifyDetached(k.Public(), bytes.NewReader(msg), forged); !errors.Is(err, ErrBadSignature) {
		t.Errorf("altered trusted comment: %v, want ErrBadSignature", err)
	}
}

// minisign returns the path of Debian's minisign, skipping the test when it
// is missing unless MinisignEnv requires it.
func minisign(t *testing.T) string {
	p, err := exec.LookPath("minisign")
	if err != nil {
		if os.Getenv(MinisignEnv) == "1" {
			t.Fatalf("minisign not found and %s=1", MinisignEnv)
		}
		t.Skip("minisign not installed (apt-get install minisign)")
	}
	return p
}

func run(t *testing.T, stdin string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return err
}

// TestMinisignVerifiesOurs: minisign -V accepts our keys and detached
// signatures and rejects a modified file; minisign -S signs with our
// encrypted secret key.
func TestMinisignVerifiesOurs(t *testing.T) {
	bin := minisign(t)
	dir := t.TempDir()
	k, _ := GenerateKey(nil)
	pubFile, keyFile := filepath.Join(dir, "k.pub"), filepath.Join(dir, "k.key")
	msgFile := filepath.Join(dir, "m.wmz")
	msg := bytes.Repeat([]byte("memory "), 10000)
	skText, err := MarshalSecretKey(k, []byte("pw"), testKDF, nil)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := SignDetached(k, bytes.NewReader(msg), "signature from wmzip", "timestamp:1\tfile:m.wmz\thashed")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{pubFile: MarshalPublicKey(k.Public()), keyFile: skText, msgFile: msg, msgFile + ".minisig": sig} {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(t, "", bin, "-Vm", msgFile, "-p", pubFile); err != nil {
		t.Fatal("minisign rejects our signature")
	}
	if err := run(t, "", bin, "-V", "-H", "-m", msgFile, "-P", strings.Split(string(MarshalPublicKey(k.Public())), "\n")[1]); err != nil {
		t.Fatal("minisign -H -P rejects our prehashed signature")
	}
	msg[5000] ^= 1
	os.WriteFile(msgFile, msg, 0o600)
	if err := run(t, "", bin, "-Vm", msgFile, "-p", pubFile); err == nil {
		t.Fatal("minisign accepts our signature of a modified file")
	}
	// minisign signs with our encrypted key, its password on stdin.
	os.Remove(msgFile + ".minisig")
	if err := run(t, "pw\n", bin, "-S", "-s", keyFile, "-m", msgFile); err != nil {
		t.Fatal("minisign cannot use our encrypted secret key")
	}
	sig2, _ := os.ReadFile(msgFile + ".minisig")
	if _, err := VerifyDetached(k.Public(), bytes.NewReader(msg), sig2); err != nil {
		t.Fatalf("minisign's signature with our key: %v", err)
	}
}

// TestOursVerifiesMinisign: keys and signatures minisign makes, read here.
func TestOursVerifiesMinisign(t *testing.T) {
	bin := minisign(t)
	dir := t.TempDir()
	pubFile, keyFile := filepath.Join(dir, "m.pub"), filepath.Join(dir, "m.key")
	msgFile := filepath.Join(dir, "msg")
	if err := run(t, "", bin, "-G", "-W", "-p", pubFile, "-s", keyFile); err != nil {
		t.Fatal("minisign -G")
	}
	msg := []byte("what the agent saw")
	os.WriteFile(msgFile, msg, 0o600)
	if err := run(t, "", bin, "-S", "-s", keyFile, "-m", msgFile, "-t", "trusted"); err != nil {
		t.Fatal("minisign -S")
	}
	pt, _ := os.ReadFile(pubFile)
	pub, err := ParsePublicKey(pt)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.ReadFile(keyFile)
	sk, err := ParseSecretKey(st, nil)
	if err != nil || sk.ID != pub.ID || !bytes.Equal(sk.Public().Key, pub.Key) {
		t.Fatalf("minisign's unencrypted secret key: %v", err)
	}
	sig, _ := os.ReadFile(msgFile + ".minisig")
	tc, err := VerifyDetached(pub, bytes.NewReader(msg), sig)
	if err != nil || tc != "trusted" {
		t.Fatalf("minisign's signature: %q %v", tc, err)
	}
	if _, err := VerifyDetached(pub, bytes.NewReader([]byte("what the agent sat")), sig); !errors.Is(err, ErrBadSignature) {
		t.Errorf("modified message: %v", err)
	}
	// The legacy algorithm, which signs the message itself.
	if err := run(t, "", bin, "-S", "-l", "-s", keyFile, "-m", msgFile); err != nil {
		t.Fatal("minisign -S -l")
	}
	sig, _ = os.ReadFile(msgFile + ".minisig")
	if _, err := VerifyDetached(pub, bytes.NewReader(msg), sig); err != nil {
		t.Fatalf("minisign's legacy signature: %v", err)
	}
}

func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	k, _ := GenerateKey(nil)
	name := filepath.Join(dir, "k")
	sk, pk, err := WriteKeyPair(name, k, []byte("pw"), testKDF)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(sk); st.Mode().Perm() != 0o600 {
		t.Errorf("secret key mode %v, want 0600", st.Mode().Perm())
	}
	if _, _, err := WriteKeyPair(name, k, nil, testKDF); err == nil {
		t.Error("WriteKeyPair overwrote existing key files")
	}
	pub, err := ReadPublicKeyFile(pk)
	if err != nil || pub.ID != k.ID {
		t.Fatal(err)
	}
	if _, err := ReadSecretKeyFile(sk, nil); err == nil {
		t.Error("an encrypted key read without a password")
	}
	got, err := ReadSecretKeyFile(sk, func() ([]byte, error) { return []byte("pw"), nil })
	if err != nil || !bytes.Equal(got.Key, k.Key) {
		t.Fatal(err)
	}
}
