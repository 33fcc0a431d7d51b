package localnet

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LinkedLevelDB is the file a binary's libleveldb resolves to, as ldd reports it, with symlinks
// followed. A binary linked with -lleveldb against Strata installed as libleveldb.so needs
// Strata's SONAME (libstrata.so.N), so that line counts too.
func LinkedLevelDB(binary string) (string, error) {
	out, err := exec.Command("ldd", binary).Output()
	if err != nil {
		return "", fmt.Errorf("ldd %s: %w", binary, err)
	}
	lines := bufio.NewScanner(bytes.NewReader(out))
	for lines.Scan() {
		// "\tlibleveldb.so.1d => /usr/lib/x86_64-linux-gnu/libleveldb.so.1d (0x...)"
		// "\tlibstrata.so.0 => /opt/strata/lib/libstrata.so.0 (0x...)"
		fields := strings.Fields(lines.Text())
		if len(fields) >= 3 && fields[1] == "=>" &&
			(strings.HasPrefix(fields[0], "libleveldb.so") || strings.HasPrefix(fields[0], "libstrata.so")) {
			if fields[2] == "not" {
				return "", fmt.Errorf("%s: %s not found", binary, fields[0])
			}
			return filepath.EvalSymlinks(fields[2])
		}
	}
	return "", fmt.Errorf("%s does not link libleveldb:\n%s", binary, out)
}

// Maps reports whether the running process pid has the file lib mapped, per /proc/<pid>/maps
// (which names files with symlinks resolved).
func Maps(pid int, lib string) (bool, error) {
	real, err := filepath.EvalSymlinks(lib)
	if err != nil {
		return false, err
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return false, err
	}
	lines := bufio.NewScanner(bytes.NewReader(maps))
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) == 6 && fields[5] == real {
			return true, nil
		}
	}
	return false, lines.Err()
}
