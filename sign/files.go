package sign

import (
	"errors"
	"fmt"
	"os"
)

// WriteKeyPair writes k as the key files name.key (the secret key, mode
// 0600, encrypted with password unless it is nil) and name.pub (the public
// key). It never overwrites a file: an existing one is an error.
func WriteKeyPair(name string, k *SecretKey, password []byte, kdf KDF) (secretPath, publicPath string, err error) {
	sk, err := MarshalSecretKey(k, password, kdf, nil)
	if err != nil {
		return "", "", err
	}
	secretPath, publicPath = name+".key", name+".pub"
	for _, p := range []string{secretPath, publicPath} {
		if _, err := os.Lstat(p); err == nil {
			return "", "", fmt.Errorf("%s exists: not overwriting a key file", p)
		}
	}
	if err := writeNew(secretPath, sk, 0o600); err != nil {
		return "", "", err
	}
	if err := writeNew(publicPath, MarshalPublicKey(k.Public()), 0o644); err != nil {
		os.Remove(secretPath)
		return "", "", err
	}
	return secretPath, publicPath, nil
}

func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	// The mode is the one asked for whatever the umask.
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// ReadPublicKeyFile reads a minisign public key file.
func ReadPublicKeyFile(path string) (*PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ReadSecretKeyFile reads a minisign secret key file, calling password
// for the password only if the key is encrypted.
func ReadSecretKeyFile(path string, password func() ([]byte, error)) (*SecretKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	enc, err := SecretKeyEncrypted(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var pw []byte
	if enc {
		if password == nil {
			return nil, errors.New(path + ": the secret key is encrypted and no password was given")
		}
		if pw, err = password(); err != nil {
			return nil, err
		}
	}
	k, err := ParseSecretKey(b, pw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}
