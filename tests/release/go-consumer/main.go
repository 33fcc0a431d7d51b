// A program outside Strata's repository that uses the Go binding as a user adds it (go get),
// built by tests/release/go-pkgconfig.sh with no CGO flags: cgo finds Strata through
// pkg-config. It writes a key, reads it back and prints "ok VALUE".
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	strata "github.com/strata-db/strata/bindings/go"
)

func main() {
	dir, err := os.MkdirTemp("", "strata-go-consumer")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	opts := strata.NewOptions()
	defer opts.Close()
	opts.SetCreateIfMissing(true)
	db, err := strata.Open(filepath.Join(dir, "db"), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	wo := strata.NewWriteOptions()
	defer wo.Close()
	ro := strata.NewReadOptions()
	defer ro.Close()
	if err := db.Put(wo, []byte("built"), []byte("through pkg-config")); err != nil {
		log.Fatal(err)
	}
	value, err := db.Get(ro, []byte("built"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ok %s\n", value)
}
