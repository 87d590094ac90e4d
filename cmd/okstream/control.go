package main

import (
	"bytes"
	"fmt"
	"os"

	"okstream/consumer"
	"okstream/share"
)

// controlSecretHelp says how to make a control secret.
const controlSecretHelp = "make one with: head -c 32 /dev/urandom | base64 > okstream-control.secret; chmod 600 okstream-control.secret; give every instance of the group the same file"

// readControlSecrets reads --control-secret-file: one secret per line
// (surrounding blanks and empty lines ignored), the first signs, every one
// verifies (the later ones are earlier secrets kept during a rotation);
// each must hold at least share.MinSecretBytes bytes.
func readControlSecrets(path string) (current []byte, previous [][]byte, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--control-secret-file: %v", err)
	}
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(line) < share.MinSecretBytes {
			return nil, nil, fmt.Errorf("--control-secret-file %s, line %d: a control secret must hold at least %d bytes, this one has %d (%s)", path, i+1, share.MinSecretBytes, len(line), controlSecretHelp)
		}
		if current == nil {
			current = line
		} else {
			previous = append(previous, line)
		}
	}
	if current == nil {
		return nil, nil, fmt.Errorf("--control-secret-file %s holds no secret (%s)", path, controlSecretHelp)
	}
	return current, previous, nil
}

// applyControl sets the control secret of cfg from the flags, and refuses
// shared models without one unless --allow-unsigned-control is given.
func (f *runFlags) applyControl(cfg *consumer.Config) error {
	if f.controlSecretFile != "" {
		cur, prev, err := readControlSecrets(f.controlSecretFile)
		if err != nil {
			return err
		}
		cfg.ControlSecret, cfg.ControlSecretPrevious = cur, prev
	}
	cfg.AllowUnsignedControl = f.allowUnsignedControl
	if len(cfg.Share) > 0 && cfg.ControlSecret == nil && !f.allowUnsignedControl {
		return fmt.Errorf("--share needs a control secret: without one, anyone who can write to the sync topic can reset or steer every instance's shared models. Give every instance the same --control-secret-file (or OKSTREAM_CONTROL_SECRET_FILE; %s), or pass --allow-unsigned-control to run without (records are still validated, not authenticated)", controlSecretHelp)
	}
	return nil
}
