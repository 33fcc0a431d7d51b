// Command compare runs the same CometBFT localnet on several storage engines side by side and
// prints one table: committed transactions a second, block time, the time a block spends in
// consensus's Commit step (where the storage engine is), and the size of each node's databases. Each engine is a cometbft binary (integrations/cometbft/build.sh builds them);
// compare.sh builds all three and runs this. Runs go round by round, every engine once a round in
// a rotating order, and the table gives each engine's median over the rounds.
//
// One run: a fresh network of -validators nodes, each mempool sized to hold the whole load (at
// CometBFT's default size a saturating load is throttled by the mempool, and may lose
// transactions it was told were accepted), -txs kvstore transactions sent as fast as -workers
// senders go (broadcast_tx_sync, spread over every node), then the network settles,
// every node must hold the same blocks with exactly those transactions, and the figures are
// taken from node0's blocks (localnet.Measure) and from every node's data/*.db after it stops.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/strata-db/strata/integrations/cometbft/localnet"
)

// engine is one column of the comparison: a cometbft binary and the db_backend it runs with.
type engine struct {
	name, slug, binary, backend string
}

// result is one run's figures, with the mean over the nodes of the time a block spent in the
// consensus Commit step (localnet.CommitTimes) and of the size of a node's databases.
type result struct {
	localnet.Figures
	commitPerBlock   time.Duration
	finalizePerBlock time.Duration
	diskPerNode      int64
}

// options are the command's flags but the binaries.
type options struct {
	validators, txs, workers, rounds int
	dir                              string
	runTimeout                       time.Duration
}

func main() {
	goleveldb := flag.String("goleveldb", "", "cometbft binary built without tags (db_backend goleveldb)")
	leveldb := flag.String("leveldb", "", "cometbft binary built with -tags cleveldb against Debian's LevelDB")
	strata := flag.String("strata", "", "cometbft binary built with -tags cleveldb against Strata")
	var o options
	flag.IntVar(&o.validators, "validators", 4, "validators in the network")
	flag.IntVar(&o.txs, "txs", 10000, "transactions a run")
	flag.IntVar(&o.workers, "workers", 16, "concurrent senders")
	flag.IntVar(&o.rounds, "rounds", 3, "runs of each engine")
	flag.StringVar(&o.dir, "dir", "", "where the networks go (default: a temporary directory, removed)")
	flag.DurationVar(&o.runTimeout, "run-timeout", 10*time.Minute, "bound on one run")
	flag.Parse()

	engines := []engine{
		{"goleveldb", "goleveldb", *goleveldb, "goleveldb"},
		{"LevelDB 1.23", "leveldb", *leveldb, "cleveldb"},
		{"Strata", "strata", *strata, "cleveldb"},
	}
	// An interrupt ends the run in progress, which stops its nodes; the deferred cleanups follow.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := compare(ctx, engines, o)
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

// compare runs every engine o.rounds times and prints the table.
func compare(ctx context.Context, engines []engine, o options) error {
	for _, e := range engines {
		if e.binary == "" {
			return fmt.Errorf("missing the %s binary (-goleveldb, -leveldb, -strata are all needed)", e.name)
		}
		linked, err := localnet.LinkedLevelDB(e.binary)
		if e.backend == "goleveldb" {
			linked = "none (pure Go)"
		} else if err != nil {
			return err
		}
		fmt.Printf("%-13s %s, libleveldb: %s\n", e.name, e.binary, linked)
	}
	base := o.dir
	if base == "" {
		tmp, err := os.MkdirTemp("", "cometbft-compare")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		base = tmp
	}
	results := make([][]result, len(engines))
	for round := range o.rounds {
		for k := range engines {
			i := (round + k) % len(engines)
			runDir := filepath.Join(base, fmt.Sprintf("round%d-%s", round+1, engines[i].slug))
			r, err := run(ctx, engines[i], runDir, o)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, engines[i].name, err)
			}
			fmt.Printf("round %d  %-13s %8.1f tx/s  block time %4d ms  %3d blocks  commit %6.1f ms a block  %6.1f MiB a node\n",
				round+1, engines[i].name, r.TxPerSecond, r.BlockTime.Milliseconds(), r.Blocks, ms(r.commitPerBlock), mib(r.diskPerNode))
			results[i] = append(results[i], r)
		}
	}
	printTable(engines, results, o)
	return nil
}

// run measures one engine on a fresh network in dir.
func run(parent context.Context, e engine, dir string, o options) (result, error) {
	ctx, cancel := context.WithTimeout(parent, o.runTimeout)
	defer cancel()
	validators, txs := o.validators, o.txs
	net, err := localnet.Generate(ctx, e.binary, dir, localnet.Layout{
		Validators: validators, Backend: e.backend, MempoolSize: txs, Metrics: true,
	})
	if err != nil {
		return result{}, err
	}
	defer net.Close()
	if err := net.Start(ctx, e.binary); err != nil {
		return result{}, err
	}
	sent := localnet.Txs("bench", txs)
	start := time.Now()
	if err := localnet.Send(ctx, net.Nodes, sent, o.workers, 0, nil); err != nil {
		return result{}, err
	}
	endpoints := net.Endpoints()
	tip, err := localnet.WaitSettled(ctx, endpoints, 3, time.Second)
	if err != nil {
		return result{}, err
	}
	blocks, err := localnet.SameBlocks(ctx, endpoints, tip.Height)
	if err != nil {
		return result{}, err
	}
	if n := localnet.CountTxs(blocks); n != txs {
		return result{}, fmt.Errorf("the blocks hold %d txs, %d were sent", n, txs)
	}
	figures, err := localnet.Measure(blocks, start)
	if err != nil {
		return result{}, err
	}
	var commits localnet.CommitTimes
	for _, node := range net.Nodes {
		times, err := localnet.ReadCommitTimes(ctx, node)
		if err != nil {
			return result{}, err
		}
		commits.Blocks += times.Blocks
		commits.Commit += times.Commit
		commits.Finalize += times.Finalize
	}
	if commits.Blocks == 0 {
		return result{}, fmt.Errorf("no node reports a commit step")
	}
	if err := net.Stop(); err != nil {
		return result{}, err
	}
	var disk int64
	for _, node := range net.Nodes {
		dirs, err := localnet.DatabaseDirs(node.Home)
		if err != nil {
			return result{}, err
		}
		for _, db := range dirs {
			size, err := localnet.DiskUsage(db)
			if err != nil {
				return result{}, err
			}
			disk += size
		}
	}
	perBlock := func(total time.Duration) time.Duration { return total / time.Duration(commits.Blocks) }
	r := result{figures, perBlock(commits.Commit), perBlock(commits.Finalize), disk / int64(validators)}
	return r, os.RemoveAll(dir)
}

func printTable(engines []engine, results [][]result, o options) {
	fmt.Printf("\n%d validators, %d kvstore txs a run by %d senders, median of %d runs each\n\n",
		o.validators, o.txs, o.workers, o.rounds)
	fmt.Println("| engine | committed tx/s | block time (ms) | blocks | Commit step (ms a block) | of which FinalizeBlock | data/*.db a node (MiB) | tx/s, Strata = 1 | Commit step, Strata = 1 | size, Strata = 1 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	strata := medians(results[len(results)-1])
	for i, e := range engines {
		m := medians(results[i])
		fmt.Printf("| %s | %.1f | %d | %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |\n", e.name, m.TxPerSecond,
			m.BlockTime.Milliseconds(), m.Blocks, ms(m.commitPerBlock), ms(m.finalizePerBlock), mib(m.diskPerNode),
			m.TxPerSecond/strata.TxPerSecond, float64(m.commitPerBlock)/float64(strata.commitPerBlock),
			float64(m.diskPerNode)/float64(strata.diskPerNode))
	}
	fmt.Println()
	fmt.Println("tx/s: transactions over the time from the first send to the commit of the last one's block.")
	fmt.Println("block time: mean interval between those blocks' header times.")
	fmt.Println("Commit step: mean time a block spent in consensus's Commit step (block store write, execution,")
	fmt.Println("state store write, consensus WAL sync) over every block of every node, from Prometheus metrics;")
	fmt.Println("FinalizeBlock is the in-memory kvstore's part of it.")
	fmt.Println("size: blockstore, state, tx_index and evidence databases after the nodes stopped (cs.wal and")
	fmt.Println("the rest of data/ left out).")
	fmt.Println("Runs:", strings.Join(runsLine(engines, results), "; "))
}

// medians is the median of each figure on its own.
func medians(rs []result) result {
	var tps, blockTime, blocks, commit, finalize, disk []float64
	for _, r := range rs {
		tps = append(tps, r.TxPerSecond)
		blockTime = append(blockTime, float64(r.BlockTime))
		blocks = append(blocks, float64(r.Blocks))
		commit = append(commit, float64(r.commitPerBlock))
		finalize = append(finalize, float64(r.finalizePerBlock))
		disk = append(disk, float64(r.diskPerNode))
	}
	m := result{
		commitPerBlock:   time.Duration(median(commit)),
		finalizePerBlock: time.Duration(median(finalize)),
		diskPerNode:      int64(median(disk)),
	}
	m.TxPerSecond, m.BlockTime, m.Blocks = median(tps), time.Duration(median(blockTime)), int(median(blocks))
	return m
}

func median(values []float64) float64 {
	slices.Sort(values)
	return values[len(values)/2]
}

func runsLine(engines []engine, results [][]result) []string {
	var out []string
	for i, e := range engines {
		var tps, commit []string
		for _, r := range results[i] {
			tps = append(tps, fmt.Sprintf("%.1f", r.TxPerSecond))
			commit = append(commit, fmt.Sprintf("%.1f", ms(r.commitPerBlock)))
		}
		out = append(out, fmt.Sprintf("%s %s tx/s, Commit %s ms", e.name, strings.Join(tps, ", "), strings.Join(commit, ", ")))
	}
	return out
}

func mib(bytes int64) float64 { return float64(bytes) / (1 << 20) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
