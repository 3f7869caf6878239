package main

import (
	"errors"
	"fmt"

	"github.com/wmzip/wmzip/sign"
)

func init() {
	register("keygen", "make an Ed25519 key pair for signing .wmz files (minisign's key files)", runKeygen)
}

func runKeygen(args []string) error {
	fs := newFlags("keygen", "-o name [--unencrypted | --password-file file]")
	addUsageNote(fs, `
Writes name.key, the secret key (mode 0600), encrypted with a password as
minisign encrypts it (scrypt), and name.pub, the public key, which
'minisign -V -p name.pub' also reads. The password is typed twice at the
terminal, or read from the first line of --password-file or of the
standard input.
`)
	out := fs.String("o", "", "name of the key files: name.key and name.pub (required)")
	unencrypted := fs.Bool("unencrypted", false, "store the secret key without a password (keep the file as safe as the key)")
	pwFile := fs.String("password-file", "", "read the password from the first line of this file")
	kdfMiB := fs.Int("kdf-memory", 1024, "memory of the password hash in MiB (minisign's is 1024); its time follows")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *out == "" {
		return errors.New("want -o name and no other argument")
	}
	if *unencrypted && *pwFile != "" {
		return errors.New("--unencrypted and --password-file exclude each other")
	}
	if *kdfMiB < 16 || *kdfMiB > 2048 {
		return fmt.Errorf("--kdf-memory %d: want 16 to 2048", *kdfMiB)
	}
	k, err := sign.GenerateKey(nil)
	if err != nil {
		return err
	}
	var pw []byte
	if !*unencrypted {
		if pw, err = password(*pwFile, true)(); err != nil {
			return err
		}
	}
	// Operations mem/32 give scrypt N = mem/1 KiB, r = 8, p = 1 (minisign's
	// own limits are of that ratio).
	mem := uint64(*kdfMiB) << 20
	sk, pk, err := sign.WriteKeyPair(*out, k, pw, sign.KDF{Ops: mem / 32, Mem: mem})
	if err != nil {
		return err
	}
	fmt.Printf("key %s: secret key %s, public key %s\n", k.ID, sk, pk)
	return nil
}
