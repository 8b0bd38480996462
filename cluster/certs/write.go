package certs

import (
	"crypto/ecdsa"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Options tune Generate.
type Options struct {
	// Overwrite replaces existing files, the CA included (certificates of the old CA then
	// stop working). Without it Generate writes nothing when a file it would write exists,
	// and reuses a CA already in the directory.
	Overwrite bool
	// Now is the start of validity (default time.Now()).
	Now time.Time
}

// Result says what Generate did.
type Result struct {
	CAReused bool     // the directory's CA signed the node certificates
	Written  []string // paths, in the order written
}

// Generate writes into dir a CA (ca.crt, ca.key), unless one is there already, and a
// certificate and key per node (NAME.crt, NAME.key). Keys are 0600, certificates 0644. It
// checks everything before writing anything, so a refusal leaves dir as it was.
func Generate(dir string, nodes []NodeSpec, opt Options) (Result, error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if len(nodes) == 0 {
		return Result{}, errors.New("name at least one node")
	}
	seen := map[string]bool{}
	var nodeFiles []string
	for _, n := range nodes {
		if err := n.Validate(); err != nil {
			return Result{}, err
		}
		if seen[n.Name] {
			return Result{}, fmt.Errorf("node %s is named twice", n.Name)
		}
		seen[n.Name] = true
		nodeFiles = append(nodeFiles, filepath.Join(dir, NodeCertFile(n.Name)), filepath.Join(dir, NodeKeyFile(n.Name)))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Result{}, err
	}
	caCert, caKey := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	reuse := false
	if !opt.Overwrite {
		certThere, keyThere := exists(caCert), exists(caKey)
		switch {
		case certThere && keyThere:
			reuse = true
		case certThere || keyThere:
			return Result{}, fmt.Errorf("%s and %s come as a pair, and only one is there: refusing to touch it (move it away, or overwrite)", caCert, caKey)
		}
		for _, f := range nodeFiles {
			if exists(f) {
				return Result{}, fmt.Errorf("%s exists: refusing to overwrite it (move it away, or overwrite)", f)
			}
		}
	}
	var ca *CA
	var err error
	if reuse {
		ca, err = LoadCA(dir)
	} else {
		ca, err = NewCA(opt.Now)
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{CAReused: reuse}
	if !reuse {
		if err := writePair(caCert, caKey, ca.Cert, ca.key, opt.Overwrite, &res); err != nil {
			return res, err
		}
	}
	for _, n := range nodes {
		cert, key, err := ca.Issue(n, opt.Now)
		if err != nil {
			return res, err
		}
		if err := writePair(filepath.Join(dir, NodeCertFile(n.Name)), filepath.Join(dir, NodeKeyFile(n.Name)), cert, key, opt.Overwrite, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// writePair writes a key (0600) and its certificate (0644), noting each in res.
func writePair(certPath, keyPath string, cert *x509.Certificate, key *ecdsa.PrivateKey, overwrite bool, res *Result) error {
	kb, err := keyPEM(key)
	if err != nil {
		return err
	}
	if err := writeFile(keyPath, kb, 0o600, overwrite); err != nil {
		return err
	}
	res.Written = append(res.Written, keyPath)
	if err := writeFile(certPath, certPEM(cert), 0o644, overwrite); err != nil {
		return err
	}
	res.Written = append(res.Written, certPath)
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// writeFile writes data at path with mode, failing if the file exists unless overwrite.
func writeFile(path string, data []byte, mode fs.FileMode, overwrite bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !overwrite {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, mode)
	if err != nil {
		return err
	}
	// An overwritten file keeps its old mode through OpenFile; a key must end up 0600.
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
