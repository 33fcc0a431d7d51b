package localnet

import (
	"os"
	"testing"
)

func TestLinkedLevelDBFailsForABinaryWithoutIt(t *testing.T) {
	requireErrorNaming(t, func() error { _, err := LinkedLevelDB("/bin/true"); return err }(), "does not link libleveldb")
}

func TestMapsSeesOnlyWhatIsLoaded(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if loaded, err := Maps(os.Getpid(), self); err != nil || !loaded {
		t.Fatalf("the test binary is not mapped in its own process (%v)", err)
	}
	if loaded, err := Maps(os.Getpid(), "/bin/true"); err != nil || loaded {
		t.Fatalf("/bin/true is mapped in the test process (%v)", err)
	}
}
