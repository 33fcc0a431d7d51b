package localnet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// strataCLI is the strata tool `make test-cometbft` built; these tests fail without it.
func strataCLI(t *testing.T) string {
	t.Helper()
	cli := os.Getenv("STRATA_CLI")
	if cli == "" {
		t.Fatal("STRATA_CLI is not set: run the tests with `make test-cometbft`")
	}
	return cli
}

// smallDatabase writes a few pairs with the strata tool, one open a pair, so the database holds
// tables (the earlier opens' logs) and a log.
func smallDatabase(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small.db")
	for _, kv := range [][2]string{{"apple", "red"}, {"banana", "yellow"}, {"cherry", "dark red"}} {
		if out, err := exec.Command(strataCLI(t), "put", dir, kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("strata put: %v\n%s", err, out)
		}
	}
	return dir
}

func TestBothEnginesReadTheSamePairs(t *testing.T) {
	dir := smallDatabase(t)
	fromStrata, err := ReadWithStrata(context.Background(), strataCLI(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	fromLevelDB, err := ReadWithLevelDB(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pair{{"6170706c65", "726564"}, {"62616e616e61", "79656c6c6f77"}, {"636865727279", "6461726b20726564"}}
	if err := SamePairs(fromStrata, want); err != nil {
		t.Fatalf("strata: %v", err)
	}
	if err := SamePairs(fromLevelDB, want); err != nil {
		t.Fatalf("LevelDB: %v", err)
	}
	if _, err := StrataCheck(context.Background(), strataCLI(t), dir); err != nil {
		t.Fatal(err)
	}
}

func TestDamageIsReportedByStrataCheckAndRefusedByLevelDB(t *testing.T) {
	dir := smallDatabase(t)
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("want one log in %s, found %v (%v)", dir, logs, err)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 0x40 // inside the last record's value
	if err := os.WriteFile(logs[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	report, err := StrataCheck(context.Background(), strataCLI(t), dir)
	requireErrorNaming(t, err, "strata check", "exit status 1", filepath.Base(logs[0]))
	t.Logf("strata check's report: %s", report)
	_, err = ReadWithLevelDB(context.Background(), dir)
	requireErrorNaming(t, err, "plyvel_export.py", "Corruption")
}

func TestNoDatabaseIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := ReadWithLevelDB(context.Background(), missing); err == nil {
		t.Fatal("LevelDB read a database that does not exist")
	}
	if _, err := ReadWithStrata(context.Background(), strataCLI(t), missing); err == nil {
		t.Fatal("strata read a database that does not exist")
	}
	if _, err := StrataCheck(context.Background(), strataCLI(t), missing); err == nil {
		t.Fatal("strata check passed a database that does not exist")
	}
	if _, err := DatabaseDirs(t.TempDir()); err == nil {
		t.Fatal("a home without data/*.db passed")
	}
}

func TestSamePairsNamesTheFirstDifference(t *testing.T) {
	a := []Pair{{"01", "aa"}, {"02", "bb"}, {"03", "cc"}}
	if err := SamePairs(a, a); err != nil {
		t.Fatal(err)
	}
	requireErrorNaming(t, SamePairs(a, []Pair{{"01", "aa"}, {"02", "bc"}, {"03", "cc"}}), "pair 1 differs", "02=bb against 02=bc")
	requireErrorNaming(t, SamePairs(a, a[:2]), "3 pairs against 2")
	requireErrorNaming(t, SamePairs(a[1:], a), "pair 0 differs")
}
