// Package sign holds the Ed25519 keys and signatures of signed .wmz files,
// in the key and signature file formats of minisign (and so readable by
// minisign, and of signify's key layout): a public key file of two lines,
// an untrusted comment and base64("Ed" ‖ key ID ‖ public key); a secret key
// file encrypted with a password through scrypt (libsodium's
// scryptsalsa208sha256 parameters) and checked by a BLAKE2b-256 checksum;
// and a detached signature over a BLAKE2b-512 prehash of the file (the
// "ED" algorithm) with a trusted comment that the key also signs.
//
// The signature inside a .wmz file (SPEC.md 6.16) uses the same keys
// through Sign and Verify; package format reads it.
package sign

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/scrypt"
)

// KeyIDSize is the size of a key ID (minisign's key number).
const KeyIDSize = 8

// A KeyID names a key pair: 8 random bytes chosen when it was generated,
// stored in its key files and in every signature it makes.
type KeyID [KeyIDSize]byte

// String returns the key ID as minisign prints it: 16 upper-case hex digits
// of the bytes read as a little-endian integer.
func (id KeyID) String() string {
	return fmt.Sprintf("%016X", binary.LittleEndian.Uint64(id[:]))
}

// A PublicKey verifies signatures.
type PublicKey struct {
	ID  KeyID
	Key ed25519.PublicKey
}

// A SecretKey makes signatures.
type SecretKey struct {
	ID  KeyID
	Key ed25519.PrivateKey
}

// Public returns the public key of k.
func (k *SecretKey) Public() *PublicKey {
	return &PublicKey{ID: k.ID, Key: k.Key.Public().(ed25519.PublicKey)}
}

// Errors of this package.
var (
	// ErrKeyFormat reports a key file that is not one.
	ErrKeyFormat = errors.New("sign: not a minisign key")
	// ErrPassword reports a secret key that the password does not decrypt
	// (its checksum fails).
	ErrPassword = errors.New("sign: wrong password for the secret key")
	// ErrSignatureFormat reports a signature file that is not one.
	ErrSignatureFormat = errors.New("sign: not a minisign signature")
	// ErrWrongKey reports a signature made by a key other than the one given.
	ErrWrongKey = errors.New("sign: signature made by another key")
	// ErrBadSignature reports a signature that does not verify.
	ErrBadSignature = errors.New("sign: signature does not verify")
)

const (
	algEd       = "Ed" // Ed25519 over the message; also the key algorithm
	algHashed   = "ED" // Ed25519 over BLAKE2b-512 of the message
	kdfScrypt   = "Sc"
	kdfNone     = "\x00\x00"
	chkBlake2b  = "B2"
	untrusted   = "untrusted comment: "
	trusted     = "trusted comment: "
	saltSize    = 32
	keynumSize  = KeyIDSize + ed25519.PrivateKeySize + 32 // key ID, secret key, checksum
	secretSize  = 6 + saltSize + 16 + keynumSize
	publicSize  = 2 + KeyIDSize + ed25519.PublicKeySize
	sigSize     = 2 + KeyIDSize + ed25519.SignatureSize
	maxComment  = 1024
	maxTrusted  = 8192
	maxKDFBytes = 1 << 31 // memory an scrypt parameter set may ask for
)

// KDF is the cost of the password hash protecting a secret key, in
// libsodium's units (crypto_pwhash_scryptsalsa208sha256): Ops and Mem
// select scrypt's N, r and p as libsodium does.
type KDF struct{ Ops, Mem uint64 }

// DefaultKDF is the cost minisign uses (libsodium's "sensitive" limits:
// scrypt with N = 2^20, r = 8, p = 1, so 1 GiB of memory for a second or
// more). Derivation runs once per use of the secret key.
var DefaultKDF = KDF{Ops: 33554432, Mem: 1073741824}

// GenerateKey makes a new key pair with a random key ID.
func GenerateKey(rnd io.Reader) (*SecretKey, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	_, priv, err := ed25519.GenerateKey(rnd)
	if err != nil {
		return nil, err
	}
	k := &SecretKey{Key: priv}
	if _, err := io.ReadFull(rnd, k.ID[:]); err != nil {
		return nil, err
	}
	return k, nil
}

// MarshalPublicKey returns the public key file of k.
func MarshalPublicKey(k *PublicKey) []byte {
	b := make([]byte, 0, publicSize)
	b = append(b, algEd...)
	b = append(b, k.ID[:]...)
	b = append(b, k.Key...)
	return fmt.Appendf(nil, "%sminisign public key %s\n%s\n", untrusted, k.ID, base64.StdEncoding.EncodeToString(b))
}

// ParsePublicKey reads a public key file, or the base64 line alone (as
// minisign -P takes it).
func ParsePublicKey(text []byte) (*PublicKey, error) {
	lines := keyLines(text)
	var line string
	switch {
	case len(lines) == 1:
		line = lines[0]
	case len(lines) == 2 && strings.HasPrefix(lines[0], untrusted):
		line = lines[1]
	default:
		return nil, fmt.Errorf("%w: want an untrusted comment line and a key line", ErrKeyFormat)
	}
	b, err := base64.StdEncoding.DecodeString(line)
	if err != nil || len(b) != publicSize || string(b[:2]) != algEd {
		return nil, fmt.Errorf("%w: public key line is not base64 of an Ed25519 key", ErrKeyFormat)
	}
	k := &PublicKey{Key: ed25519.PublicKey(bytes.Clone(b[2+KeyIDSize:]))}
	copy(k.ID[:], b[2:])
	return k, nil
}

// MarshalSecretKey returns the secret key file of k, encrypted with
// password at the cost kdf, or in the clear when password is nil (minisign
// -W; such a file must be kept as safe as the key itself).
func MarshalSecretKey(k *SecretKey, password []byte, kdf KDF, rnd io.Reader) ([]byte, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	b := make([]byte, secretSize)
	copy(b, algEd)
	copy(b[4:], chkBlake2b)
	salt := b[6 : 6+saltSize]
	keynum := b[6+saltSize+16:]
	copy(keynum, k.ID[:])
	copy(keynum[KeyIDSize:], k.Key)
	comment := "minisign encrypted secret key"
	if password == nil {
		// minisign leaves the checksum of an unencrypted key zero.
		copy(b[2:], kdfNone)
		comment = "minisign unencrypted secret key"
	} else {
		sum := checksum(k)
		copy(keynum[KeyIDSize+ed25519.PrivateKeySize:], sum[:])
		copy(b[2:], kdfScrypt)
		if _, err := io.ReadFull(rnd, salt); err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint64(b[6+saltSize:], kdf.Ops)
		binary.LittleEndian.PutUint64(b[6+saltSize+8:], kdf.Mem)
		stream, err := derive(password, salt, kdf)
		if err != nil {
			return nil, err
		}
		subtle.XORBytes(keynum, keynum, stream)
	}
	return fmt.Appendf(nil, "%s%s\n%s\n", untrusted, comment, base64.StdEncoding.EncodeToString(b)), nil
}

// SecretKeyEncrypted reports whether a secret key file needs a password.
func SecretKeyEncrypted(text []byte) (bool, error) {
	b, err := secretBytes(text)
	if err != nil {
		return false, err
	}
	return string(b[2:4]) == kdfScrypt, nil
}

// ParseSecretKey reads a secret key file, decrypting it with password
// when it is encrypted (password is then required).
func ParseSecretKey(text, password []byte) (*SecretKey, error) {
	b, err := secretBytes(text)
	if err != nil {
		return nil, err
	}
	keynum := b[6+saltSize+16:]
	switch string(b[2:4]) {
	case kdfNone:
	case kdfScrypt:
		kdf := KDF{Ops: binary.LittleEndian.Uint64(b[6+saltSize:]), Mem: binary.LittleEndian.Uint64(b[6+saltSize+8:])}
		stream, err := derive(password, b[6:6+saltSize], kdf)
		if err != nil {
			return nil, err
		}
		subtle.XORBytes(keynum, keynum, stream)
	default:
		return nil, fmt.Errorf("%w: unknown key derivation %q", ErrKeyFormat, b[2:4])
	}
	k := &SecretKey{Key: ed25519.PrivateKey(bytes.Clone(keynum[KeyIDSize : KeyIDSize+ed25519.PrivateKeySize]))}
	copy(k.ID[:], keynum)
	// minisign checks (and writes) the checksum of encrypted keys only;
	// an unencrypted key's is zero, or correct.
	sum, stored := checksum(k), keynum[KeyIDSize+ed25519.PrivateKeySize:]
	if subtle.ConstantTimeCompare(sum[:], stored) != 1 {
		if string(b[2:4]) == kdfScrypt {
			return nil, ErrPassword
		}
		if !bytes.Equal(stored, make([]byte, len(stored))) {
			return nil, fmt.Errorf("%w: secret key checksum", ErrKeyFormat)
		}
	}
	// The secret key holds its public half: a key whose halves disagree
	// would sign what its public key does not verify.
	if !bytes.Equal(ed25519.NewKeyFromSeed(k.Key.Seed()), k.Key) {
		return nil, fmt.Errorf("%w: secret key halves disagree", ErrKeyFormat)
	}
	return k, nil
}

func secretBytes(text []byte) ([]byte, error) {
	lines := keyLines(text)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], untrusted) {
		return nil, fmt.Errorf("%w: want an untrusted comment line and a key line", ErrKeyFormat)
	}
	b, err := base64.StdEncoding.DecodeString(lines[1])
	if err != nil || len(b) != secretSize || string(b[:2]) != algEd || string(b[4:6]) != chkBlake2b {
		return nil, fmt.Errorf("%w: secret key line is not base64 of an Ed25519 secret key", ErrKeyFormat)
	}
	return b, nil
}

// checksum is minisign's: BLAKE2b-256 of the algorithm, key ID and secret
// key.
func checksum(k *SecretKey) [32]byte {
	h, _ := blake2b.New256(nil)
	h.Write([]byte(algEd))
	h.Write(k.ID[:])
	h.Write(k.Key)
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// derive returns the key stream that encrypts a secret key: scrypt with
// the parameters libsodium's pickparams gives for kdf.
func derive(password, salt []byte, kdf KDF) ([]byte, error) {
	n, r, p := scryptParams(kdf)
	if uint64(128)*uint64(r)*n > maxKDFBytes || p > 64 {
		return nil, fmt.Errorf("%w: key derivation asks for N=%d r=%d p=%d", ErrKeyFormat, n, r, p)
	}
	return scrypt.Key(password, salt, int(n), r, p, keynumSize)
}

// scryptParams is libsodium's pickparams for scryptsalsa208sha256.
func scryptParams(kdf KDF) (n uint64, r, p int) {
	ops := max(kdf.Ops, 32768)
	r = 8
	var logN uint
	pick := func(maxN uint64) {
		for logN = 1; logN < 63; logN++ {
			if uint64(1)<<logN > maxN/2 {
				break
			}
		}
	}
	if ops < kdf.Mem/32 {
		p = 1
		pick(ops / uint64(r*4))
	} else {
		pick(kdf.Mem / uint64(r*128))
		maxrp := min((ops/4)>>logN, 0x3fffffff)
		p = int(uint32(maxrp) / uint32(r))
	}
	return uint64(1) << logN, r, p
}

// keyLines returns the non-empty lines of a key or signature file, with
// their line ends (LF or CRLF) removed.
func keyLines(text []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 64<<10)
	for sc.Scan() {
		if l := strings.TrimRight(sc.Text(), "\r"); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// Sign signs msg with k (pure Ed25519): the signature inside a .wmz file.
func Sign(k *SecretKey, msg []byte) []byte { return ed25519.Sign(k.Key, msg) }

// Verify reports whether sig is k's signature of msg.
func Verify(k *PublicKey, msg, sig []byte) bool {
	return len(k.Key) == ed25519.PublicKeySize && ed25519.Verify(k.Key, msg, sig)
}

// ParseKeyID reads a key ID as String writes it.
func ParseKeyID(s string) (KeyID, error) {
	var id KeyID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != KeyIDSize {
		return id, fmt.Errorf("%w: key ID %q is not 16 hex digits", ErrKeyFormat, s)
	}
	for i := range id {
		id[i] = b[KeyIDSize-1-i]
	}
	return id, nil
}
