package serve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// HostKeyFile is the host key's name in the state directory.
const HostKeyFile = "ssh_host_ed25519_key"

// LoadOrCreateHostKey returns the server's host key from dir, generating an
// ed25519 key (mode 0600) on first start, so clients see the same host key
// across restarts. A key file readable by others is refused: it is a
// secret, and a client trusting it would trust whoever copied it.
func LoadOrCreateHostKey(dir string) (gossh.Signer, string, error) {
	path := filepath.Join(dir, HostKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, path, fmt.Errorf("host key: %w", err)
		}
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, path, fmt.Errorf("host key: %w", err)
		}
		block, err := gossh.MarshalPrivateKey(priv, "bollhav host key")
		if err != nil {
			return nil, path, fmt.Errorf("host key: %w", err)
		}
		b = pem.EncodeToMemory(block)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, path, fmt.Errorf("host key: %w", err)
		}
		_, werr := f.Write(b)
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, path, fmt.Errorf("host key: %w", err)
		}
	} else if err != nil {
		return nil, path, fmt.Errorf("host key: %w", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, path, fmt.Errorf("host key: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, path, fmt.Errorf("host key %s is readable by others (mode %v): chmod 600 it", path, info.Mode().Perm())
	}
	signer, err := gossh.ParsePrivateKey(b)
	if err != nil {
		return nil, path, fmt.Errorf("host key %s: %w", path, err)
	}
	return signer, path, nil
}
