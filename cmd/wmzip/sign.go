package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	wmzlib "github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/atomicfile"
	"github.com/wmzip/wmzip/sign"
)

func init() {
	register("sign", "sign a .wmz file in place, and write its detached minisign signature", runSign)
}

func runSign(args []string) error {
	fs := newFlags("sign", "-k name.key [--password-file file] [--no-detached] file.wmz")
	addUsageNote(fs, `
Writes a signature record at the end of the file (SPEC.md 6.16: the hash
of every chunk, signed), replacing the one it has, then file.wmz.minisig,
a signature of the whole file that 'minisign -Vm file.wmz -p name.pub'
verifies. Readers given the public key ('wmzip verify --key') check the
record, and every chunk they read against it. A file this key signed
before is first checked against that signature: an altered one is
refused, not signed anew (--rekey signs it as it stands).
`)
	keyPath := fs.String("k", "", "secret key file (wmzip keygen, or minisign's)")
	pwFile := fs.String("password-file", "", "read the key's password from the first line of this file")
	noDetached := fs.Bool("no-detached", false, "do not write file.wmz.minisig")
	quiet := fs.Bool("q", false, "no summary output")
	rekey := fs.Bool("rekey", false, "sign the file as it stands whatever signature it has: a new file ID at generation 1 (another key's file, or one changed on purpose)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *keyPath == "" {
		return errors.New("want -k name.key and exactly one .wmz file")
	}
	target := pos[0]
	if target == "-" {
		return errors.New("sign changes a file in place: name the .wmz file, not -")
	}
	detached := target + ".minisig"
	if *noDetached {
		detached = ""
	}
	if err := checkFiles([]*string{keyPath, pwFile}, output{flag: "the file", path: &target, inPlace: true}, output{flag: "the signature", path: &detached}); err != nil {
		return err
	}
	k, err := loadSecretKey(*keyPath, *pwFile)
	if err != nil {
		return err
	}
	sig, err := wmzlib.SignFile(target, k, *rekey)
	if err != nil {
		return wmzError(target, err, "")
	}
	if detached != "" {
		fh, err := os.Open(target)
		if err != nil {
			return err
		}
		defer fh.Close()
		tc := fmt.Sprintf("timestamp:%d\tfile:%s\thashed\twmz-generation:%d", time.Now().Unix(), filepath.Base(target), sig.Generation)
		text, err := sign.SignDetached(k, fh, "signature from wmzip key "+k.ID.String(), tc)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(detached, text); err != nil {
			return err
		}
	}
	if !*quiet {
		fmt.Printf("%s: signed by key %s, generation %d", target, sig.KeyID, sig.Generation)
		if detached != "" {
			fmt.Printf("; detached signature %s", detached)
		}
		fmt.Println()
	}
	return nil
}
