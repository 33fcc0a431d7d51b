package localnet

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// Databases are the LevelDB databases every CometBFT node keeps in its data directory.
var Databases = []string{"blockstore.db", "state.db", "tx_index.db", "evidence.db"}

// DatabaseDirs lists the node's databases (data/*.db), failing if one of Databases is missing.
func DatabaseDirs(home string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(home, "data", "*.db"))
	if err != nil {
		return nil, err
	}
	for _, name := range Databases {
		if _, err := os.Stat(filepath.Join(home, "data", name)); err != nil {
			return nil, fmt.Errorf("%s has no %s: %w", home, name, err)
		}
	}
	return dirs, nil
}

// StrataCheck runs `strata check dir`, which reads every file of the database (CURRENT, every
// manifest record, every block of every live table, every record of every live log) and exits 1
// on any problem. It returns the tool's report, and an error unless the tool exited 0.
func StrataCheck(ctx context.Context, cli, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, cli, "check", dir).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("strata check %s: %w\n%s", dir, err, out)
	}
	return string(out), nil
}

// Pair is one key and its value, both in hex.
type Pair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ReadWithStrata lists a database's pairs in key order with `strata export --encoding hex`.
func ReadWithStrata(ctx context.Context, cli, dir string) ([]Pair, error) {
	return readPairs("strata export", exec.CommandContext(ctx, cli, "export", "--encoding", "hex", dir))
}

//go:embed plyvel_export.py
var plyvelExport string

// SystemPython is the interpreter Debian's python3-plyvel is installed for.
const SystemPython = "/usr/bin/python3"

// ReadWithLevelDB lists a database's pairs in key order through real LevelDB (plyvel_export.py,
// with paranoid checks). Opening it is LevelDB's recovery: its logs become tables.
func ReadWithLevelDB(ctx context.Context, dir string) ([]Pair, error) {
	return readPairs("plyvel_export.py", exec.CommandContext(ctx, SystemPython, "-c", plyvelExport, dir))
}

// readPairs runs cmd, which prints a database's pairs as JSON Lines, and collects them.
func readPairs(what string, cmd *exec.Cmd) ([]Pair, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var pairs []Pair
	decoder := json.NewDecoder(stdout)
	for {
		var pair Pair
		err := decoder.Decode(&pair)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("%s: reading pair %d: %w\n%s", what, len(pairs), err, stderr.Bytes())
		}
		pairs = append(pairs, pair)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", what, err, stderr.Bytes())
	}
	return pairs, nil
}

// SamePairs is nil when a and b hold the same pairs in the same order, and otherwise names the
// first difference.
func SamePairs(a, b []Pair) error {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Errorf("pair %d differs: %s=%s against %s=%s", i, a[i].Key, a[i].Value, b[i].Key, b[i].Value)
		}
	}
	if len(a) != len(b) {
		return fmt.Errorf("%d pairs against %d", len(a), len(b))
	}
	return nil
}

// DiskUsage is the total size of the files under dir.
func DiskUsage(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, entry fs.DirEntry, err error) error {
		if err != nil || entry.IsDir() {
			return err
		}
		info, err := entry.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	return total, err
}
