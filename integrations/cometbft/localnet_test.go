// The localnet test: four CometBFT validators on 127.0.0.1 with db_backend = "cleveldb", first
// on Debian's LevelDB, then on Strata (with one validator killed and restarted under load), then
// on LevelDB again, every run checked through the nodes' RPC and their data directories.
// `make test-cometbft` builds the binaries and runs it.
package cometbft_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/integrations/cometbft/localnet"
)

const (
	validators = 4
	// scenarioTimeout bounds the whole test; each wait inside it has a shorter bound of its own.
	scenarioTimeout = 12 * time.Minute
	// Transactions go out at this rate (a second) from this many senders, to the nodes that stay up.
	sendRate    = 100
	sendWorkers = 8
	// A network has settled when every node shows the same tip this many polls in a row.
	settlePolls    = 4
	settleInterval = time.Second
	settleTimeout  = 3 * time.Minute
)

// environment names what `make test-cometbft` built; the test fails when any of it is missing.
type environment struct {
	strataNode  string // cometbft built with -tags cleveldb against Strata installed as libleveldb
	leveldbNode string // the same against Debian's libleveldb-dev
	strataLib   string // the libstrata.so the first must load
	strataCLI   string // the strata tool
}

func readEnvironment(t *testing.T) environment {
	get := func(name string) string {
		value := os.Getenv(name)
		if value == "" {
			t.Fatalf("%s is not set: run this test with `make test-cometbft`", name)
		}
		return value
	}
	env := environment{
		strataNode:  get("COMETBFT_STRATA"),
		leveldbNode: get("COMETBFT_LEVELDB"),
		strataLib:   get("STRATA_LIB"),
		strataCLI:   get("STRATA_CLI"),
	}
	want, err := filepath.EvalSymlinks(env.strataLib)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := localnet.LinkedLevelDB(env.strataNode); err != nil || got != want {
		t.Fatalf("%s: libleveldb resolves to %q (%v), want Strata's %s", env.strataNode, got, err, want)
	}
	if got, err := localnet.LinkedLevelDB(env.leveldbNode); err != nil || got == want || !strings.Contains(got, "libleveldb.so.1") {
		t.Fatalf("%s: libleveldb resolves to %q (%v), want Debian's libleveldb.so.1*", env.leveldbNode, got, err)
	}
	return env
}

func TestValidatorsMoveBetweenLevelDBAndStrata(t *testing.T) {
	env := readEnvironment(t)
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	net, err := localnet.Generate(ctx, env.strataNode, t.TempDir(), localnet.Layout{Validators: validators, Backend: "cleveldb"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(net.Close)
	s := &scenario{t: t, ctx: ctx, env: env, net: net, began: time.Now()}

	// 1. Real LevelDB, in two runs: opening the databases again, LevelDB turns the first run's
	// logs into tables, so Strata meets both kinds of file LevelDB writes.
	for run := range 2 {
		s.run(env.leveldbNode, localnet.Txs(fmt.Sprintf("leveldb%d", run), 200), nil)
	}
	leveldbFiles := s.tablesOnDisk()
	for _, name := range []string{"blockstore.db", "state.db", "tx_index.db"} {
		for _, node := range net.Nodes {
			if len(leveldbFiles[filepath.Join(node.Home, "data", name)]) == 0 {
				t.Fatalf("%s: LevelDB wrote no table in %s; the switch would not read one", node.Name, name)
			}
		}
	}

	// 2. Strata on the directories LevelDB wrote, one validator killed and restarted under load.
	s.run(env.strataNode, localnet.Txs("strata", 2000), s.killAndRestart)
	s.checkEveryDatabase()
	s.requireNewTables(leveldbFiles, "Strata")
	s.readWithBothEngines()

	// 3. Real LevelDB again, on what Strata wrote.
	s.run(env.leveldbNode, localnet.Txs("leveldb-again", 200), nil)
	s.checkEveryDatabase()
}

// scenario is the state of TestValidatorsMoveBetweenLevelDBAndStrata between its steps.
type scenario struct {
	t         *testing.T
	ctx       context.Context
	env       environment
	net       *localnet.Network
	committed []localnet.Tx // every transaction accepted so far, all runs
	began     time.Time
}

func (s *scenario) logf(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("%6.1fs "+format, append([]any{time.Since(s.began).Seconds()}, args...)...)
}

// load is a localnet.Send running in the background.
type load struct {
	sent atomic.Int64
	done chan struct{}
	err  error // Send's result, set before done is closed
}

// run starts every node on binary, sends txs to all but the last node while during (if any)
// runs, waits for the network to settle, verifies it, and stops every node.
func (s *scenario) run(binary string, txs []localnet.Tx, during func(*load)) {
	s.t.Helper()
	if err := s.net.Start(s.ctx, binary); err != nil {
		s.t.Fatal(err)
	}
	if binary == s.env.strataNode {
		for _, node := range s.net.Nodes {
			s.requireStrataLoaded(node)
		}
	}
	s.logf("%d nodes started on %s; sending %d txs", len(s.net.Nodes), filepath.Base(binary), len(txs))
	l := &load{done: make(chan struct{})}
	go func() {
		l.err = localnet.Send(s.ctx, s.net.Nodes[:len(s.net.Nodes)-1], txs, sendWorkers, sendRate, &l.sent)
		close(l.done)
	}()
	if during != nil {
		during(l)
	}
	<-l.done
	if l.err != nil {
		s.t.Fatal(l.err)
	}
	s.committed = append(s.committed, txs...)
	s.logf("all %d txs accepted", len(txs))
	s.verifyChain()
	if err := s.net.Stop(); err != nil {
		s.t.Fatal(err)
	}
	s.logf("nodes stopped")
}

// killAndRestart kills the last node (which takes no transactions) with SIGKILL once a quarter of
// the transactions are in, checks its databases as the crash left them, waits for the others to
// make three blocks without it, and restarts it.
func (s *scenario) killAndRestart(l *load) {
	s.t.Helper()
	victim := s.net.Nodes[len(s.net.Nodes)-1]
	for l.sent.Load() < 500 {
		select {
		case <-l.done:
			s.t.Fatalf("the load ended after %d txs, before the kill: %v", l.sent.Load(), l.err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := victim.Kill(); err != nil {
		s.t.Fatal(err)
	}
	s.logf("%s killed (SIGKILL) after %d txs", victim.Name, l.sent.Load())
	s.checkDatabases(victim)
	first := s.net.Nodes[0].Endpoint()
	status, err := first.Status(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	height, err := localnet.WaitHeight(waitCtx, first, status.SyncInfo.LatestBlockHeight+3)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := victim.Start(s.env.strataNode); err != nil {
		s.t.Fatal(err)
	}
	if _, err := victim.WaitReady(waitCtx); err != nil {
		s.t.Fatal(err)
	}
	s.requireStrataLoaded(victim)
	s.logf("%s restarted at network height %d, after %d txs", victim.Name, height, l.sent.Load())
}

// verifyChain waits until every node is at the same height with the same app hash and nothing
// left in its mempool, then checks that every node stored the same blocks, holding exactly the
// transactions accepted so far, each readable on every node by key and by hash, and that a
// transaction never sent is found nowhere.
func (s *scenario) verifyChain() {
	s.t.Helper()
	endpoints := s.net.Endpoints()
	ctx, cancel := context.WithTimeout(s.ctx, settleTimeout)
	defer cancel()
	tip, err := localnet.WaitSettled(ctx, endpoints, settlePolls, settleInterval)
	if err != nil {
		s.t.Fatal(err)
	}
	blocks, err := localnet.SameBlocks(s.ctx, endpoints, tip.Height)
	if err != nil {
		s.t.Fatal(err)
	}
	if n := localnet.CountTxs(blocks); n != len(s.committed) {
		s.t.Fatalf("the blocks hold %d txs, %d were accepted", n, len(s.committed))
	}
	if err := localnet.CheckTxs(s.ctx, endpoints, s.committed, tip.Height, 8); err != nil {
		s.t.Fatal(err)
	}
	if err := localnet.CheckAbsent(s.ctx, endpoints, localnet.Txs("never-sent", 1)[0]); err != nil {
		s.t.Fatal(err)
	}
	s.logf("settled at height %d, app hash %s: same blocks on all nodes, all %d txs found on each",
		tip.Height, tip.AppHash, len(s.committed))
}

func (s *scenario) requireStrataLoaded(node *localnet.Node) {
	s.t.Helper()
	loaded, err := localnet.Maps(node.PID(), s.env.strataLib)
	if err != nil || !loaded {
		s.t.Fatalf("%s (pid %d) has not loaded %s (%v)", node.Name, node.PID(), s.env.strataLib, err)
	}
}

// checkDatabases runs `strata check` on each of the node's databases; any problem fails.
func (s *scenario) checkDatabases(node *localnet.Node) {
	s.t.Helper()
	dirs, err := localnet.DatabaseDirs(node.Home)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, dir := range dirs {
		report, err := localnet.StrataCheck(s.ctx, s.env.strataCLI, dir)
		if err != nil {
			s.t.Fatal(err)
		}
		s.t.Logf("strata check %s/%s: %s", node.Name, filepath.Base(dir), strings.ReplaceAll(strings.TrimSpace(report), "\n", "; "))
	}
}

func (s *scenario) checkEveryDatabase() {
	s.t.Helper()
	for _, node := range s.net.Nodes {
		s.checkDatabases(node)
	}
	s.logf("strata check: no problem in any database of any node")
}

// tablesOnDisk lists the table files of every database of every node, by database directory.
func (s *scenario) tablesOnDisk() map[string][]string {
	s.t.Helper()
	tables := map[string][]string{}
	for _, node := range s.net.Nodes {
		dirs, err := localnet.DatabaseDirs(node.Home)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, dir := range dirs {
			names, err := filepath.Glob(filepath.Join(dir, "*.ldb"))
			if err != nil {
				s.t.Fatal(err)
			}
			tables[dir] = names
		}
	}
	return tables
}

// requireNewTables fails unless every node's block store holds a table that was not there
// before (in before), so the engine that ran since wrote tables and not only logs.
func (s *scenario) requireNewTables(before map[string][]string, engine string) {
	s.t.Helper()
	after := s.tablesOnDisk()
	for _, node := range s.net.Nodes {
		dir := filepath.Join(node.Home, "data", "blockstore.db")
		if !slices.ContainsFunc(after[dir], func(name string) bool { return !slices.Contains(before[dir], name) }) {
			s.t.Fatalf("%s wrote no table in %s", engine, dir)
		}
	}
}

// readWithBothEngines reads every database of every node through real LevelDB (plyvel, paranoid
// checks) as Strata left it, then through Strata, and requires the same pairs from both.
func (s *scenario) readWithBothEngines() {
	s.t.Helper()
	pairs := 0
	for _, node := range s.net.Nodes {
		dirs, err := localnet.DatabaseDirs(node.Home)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, dir := range dirs {
			fromLevelDB, err := localnet.ReadWithLevelDB(s.ctx, dir)
			if err != nil {
				s.t.Fatal(err)
			}
			fromStrata, err := localnet.ReadWithStrata(s.ctx, s.env.strataCLI, dir)
			if err != nil {
				s.t.Fatal(err)
			}
			if err := localnet.SamePairs(fromLevelDB, fromStrata); err != nil {
				s.t.Fatalf("%s: LevelDB and Strata read different contents: %v", dir, err)
			}
			if len(fromStrata) == 0 && filepath.Base(dir) != "evidence.db" {
				s.t.Fatalf("%s is empty", dir)
			}
			pairs += len(fromStrata)
		}
	}
	s.logf("LevelDB (plyvel) and Strata read the same %d pairs from every database", pairs)
}
