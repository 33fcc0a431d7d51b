package localnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtbytes "github.com/cometbft/cometbft/libs/bytes"
	ctypes "github.com/cometbft/cometbft/rpc/core/types"
	"golang.org/x/sync/errgroup"
)

// Chain is the part of CometBFT's RPC client the checks read a node through
// (*rpchttp.HTTP is one).
type Chain interface {
	Status(ctx context.Context) (*ctypes.ResultStatus, error)
	NumUnconfirmedTxs(ctx context.Context) (*ctypes.ResultUnconfirmedTxs, error)
	BlockchainInfo(ctx context.Context, minHeight, maxHeight int64) (*ctypes.ResultBlockchainInfo, error)
	ABCIQuery(ctx context.Context, path string, data cmtbytes.HexBytes) (*ctypes.ResultABCIQuery, error)
	Tx(ctx context.Context, hash []byte, prove bool) (*ctypes.ResultTx, error)
}

// Endpoint is a node as the checks read it, with the name their errors call it by.
type Endpoint struct {
	Name string
	Chain
}

// Tip is where a node's chain ends: the latest block and the application's state after it.
type Tip struct {
	Height    int64
	BlockHash cmtbytes.HexBytes
	AppHash   cmtbytes.HexBytes
	// Mempool is the number of transactions the node holds uncommitted.
	Mempool int
}

func (t Tip) String() string {
	return fmt.Sprintf("height %d block %s app hash %s, %d txs in mempool", t.Height, t.BlockHash, t.AppHash, t.Mempool)
}

func readTip(ctx context.Context, e Endpoint) (Tip, error) {
	status, err := e.Status(ctx)
	if err != nil {
		return Tip{}, fmt.Errorf("%s: status: %w", e.Name, err)
	}
	pool, err := e.NumUnconfirmedTxs(ctx)
	if err != nil {
		return Tip{}, fmt.Errorf("%s: num_unconfirmed_txs: %w", e.Name, err)
	}
	sync := status.SyncInfo
	return Tip{sync.LatestBlockHeight, sync.LatestBlockHash, sync.LatestAppHash, pool.Total}, nil
}

// agree is nil when every node is at the same block with the same application state and no
// transaction left to commit, and otherwise says where each node is.
func agree(endpoints []Endpoint, tips []Tip) error {
	same := true
	for _, tip := range tips {
		same = same && tip.Mempool == 0 && sameBlock(tip, tips[0])
	}
	if same {
		return nil
	}
	lines := make([]string, len(tips))
	for i, tip := range tips {
		lines[i] = fmt.Sprintf("  %s: %s", endpoints[i].Name, tip)
	}
	return fmt.Errorf("nodes disagree:\n%s", strings.Join(lines, "\n"))
}

// WaitSettled polls every node each interval until all agree (see agree) on the same tip for
// polls polls in a row, and returns that tip. The network must make blocks only when there are
// transactions (nodeSettings), so a settled network stays at one height. When ctx ends first,
// the error says where each node was last seen: a node left behind, or one whose state went
// another way, shows there.
func WaitSettled(ctx context.Context, endpoints []Endpoint, polls int, interval time.Duration) (Tip, error) {
	var settled Tip
	var last error
	streak := 0
	for {
		tips, err := readTips(ctx, endpoints)
		if err == nil {
			err = agree(endpoints, tips)
		}
		switch {
		case err != nil:
			streak, last = 0, err
		case streak > 0 && sameBlock(tips[0], settled):
			streak++
		default:
			streak, settled = 1, tips[0]
		}
		if streak >= polls {
			return settled, nil
		}
		select {
		case <-ctx.Done():
			return Tip{}, fmt.Errorf("network did not settle: %w; last seen: %v", ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

func sameBlock(a, b Tip) bool {
	return a.Height == b.Height && bytes.Equal(a.BlockHash, b.BlockHash) && bytes.Equal(a.AppHash, b.AppHash)
}

func readTips(ctx context.Context, endpoints []Endpoint) ([]Tip, error) {
	tips := make([]Tip, len(endpoints))
	for i, e := range endpoints {
		tip, err := readTip(ctx, e)
		if err != nil {
			return nil, err
		}
		tips[i] = tip
	}
	return tips, nil
}

// WaitHeight polls the node until its latest block is at least height, and returns that height.
func WaitHeight(ctx context.Context, e Endpoint, height int64) (int64, error) {
	for {
		status, err := e.Status(ctx)
		if err == nil && status.SyncInfo.LatestBlockHeight >= height {
			return status.SyncInfo.LatestBlockHeight, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s did not reach height %d: %w (last status error: %v)", e.Name, height, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Block is what the checks compare of one block, from its stored meta.
type Block struct {
	Height  int64
	Hash    cmtbytes.HexBytes
	AppHash cmtbytes.HexBytes
	Time    time.Time
	NumTxs  int
}

// blocksPerCall is how many block metas the blockchain RPC returns at most.
const blocksPerCall = 20

// Blocks reads the metas of blocks 1..height from the node's block store, in height order.
func Blocks(ctx context.Context, e Endpoint, height int64) ([]Block, error) {
	blocks := make([]Block, height)
	for high := height; high >= 1; high -= blocksPerCall {
		low := max(1, high-blocksPerCall+1)
		info, err := e.BlockchainInfo(ctx, low, high)
		if err != nil {
			return nil, fmt.Errorf("%s: blockchain %d..%d: %w", e.Name, low, high, err)
		}
		if len(info.BlockMetas) != int(high-low+1) {
			return nil, fmt.Errorf("%s: blockchain %d..%d gave %d blocks", e.Name, low, high, len(info.BlockMetas))
		}
		for i, meta := range info.BlockMetas {
			want := high - int64(i)
			if meta == nil || meta.Header.Height != want {
				return nil, fmt.Errorf("%s: block store has no block %d", e.Name, want)
			}
			blocks[want-1] = Block{want, meta.BlockID.Hash, meta.Header.AppHash, meta.Header.Time, meta.NumTxs}
		}
	}
	return blocks, nil
}

// SameBlocks reads blocks 1..height from every node and fails unless every node stored the same
// blocks (hash, app hash, transaction count). It returns the first node's.
func SameBlocks(ctx context.Context, endpoints []Endpoint, height int64) ([]Block, error) {
	first, err := Blocks(ctx, endpoints[0], height)
	if err != nil {
		return nil, err
	}
	for _, e := range endpoints[1:] {
		blocks, err := Blocks(ctx, e, height)
		if err != nil {
			return nil, err
		}
		for i, b := range blocks {
			a := first[i]
			if !bytes.Equal(a.Hash, b.Hash) || !bytes.Equal(a.AppHash, b.AppHash) || a.NumTxs != b.NumTxs {
				return nil, fmt.Errorf("block %d: %s has %s (app hash %s, %d txs), %s has %s (app hash %s, %d txs)",
					a.Height, endpoints[0].Name, a.Hash, a.AppHash, a.NumTxs, e.Name, b.Hash, b.AppHash, b.NumTxs)
			}
		}
	}
	return first, nil
}

// CountTxs is the number of transactions in blocks.
func CountTxs(blocks []Block) int {
	n := 0
	for _, b := range blocks {
		n += b.NumTxs
	}
	return n
}

// reportedFailures is how many failed lookups an error lists (it counts them all).
const reportedFailures = 5

// CheckTxs looks every tx up on every node, from workers goroutines, through both ways a
// committed transaction can be read: the application's state (abci_query for the key must
// return the value) and the transaction index (tx by hash must return these bytes, executed
// with code 0 in a block from 1 to height). The error counts the failed lookups and lists the
// first few.
func CheckTxs(ctx context.Context, endpoints []Endpoint, txs []Tx, height int64, workers int) error {
	failures := make(chan error, len(endpoints)*len(txs))
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(workers)
	for _, e := range endpoints {
		for _, tx := range txs {
			group.Go(func() error {
				if err := checkTx(ctx, e, tx, height); err != nil {
					failures <- fmt.Errorf("%s: tx %s: %w", e.Name, tx.Key, err)
				}
				return ctx.Err()
			})
		}
	}
	if err := group.Wait(); err != nil {
		return err
	}
	close(failures)
	var listed []error
	count := 0
	for err := range failures {
		if count < reportedFailures {
			listed = append(listed, err)
		}
		count++
	}
	if count > 0 {
		return fmt.Errorf("%d of %d lookups failed, among them:\n%w", count, 2*len(endpoints)*len(txs), errors.Join(listed...))
	}
	return nil
}

// checkTx counts as two lookups in CheckTxs's total, and fails on the first that does.
func checkTx(ctx context.Context, e Endpoint, tx Tx, height int64) error {
	query, err := e.ABCIQuery(ctx, "", []byte(tx.Key))
	if err != nil {
		return fmt.Errorf("abci_query: %w", err)
	}
	if string(query.Response.Value) != tx.Value {
		return fmt.Errorf("abci_query gives %q (%s), want %q", query.Response.Value, query.Response.Log, tx.Value)
	}
	found, err := e.Tx(ctx, tx.Hash(), false)
	if err != nil {
		return fmt.Errorf("tx by hash: %w", err)
	}
	if !bytes.Equal(found.Tx, tx.Bytes()) || found.TxResult.Code != abci.CodeTypeOK || found.Height < 1 || found.Height > height {
		return fmt.Errorf("tx by hash gives %q, code %d, height %d (tip %d)", []byte(found.Tx), found.TxResult.Code, found.Height, height)
	}
	return nil
}

// CheckAbsent is the lookups' control: a transaction never sent must be found by neither
// lookup on any node, or finding the others would prove nothing.
func CheckAbsent(ctx context.Context, endpoints []Endpoint, tx Tx) error {
	for _, e := range endpoints {
		query, err := e.ABCIQuery(ctx, "", []byte(tx.Key))
		if err != nil {
			return fmt.Errorf("%s: abci_query: %w", e.Name, err)
		}
		if query.Response.Value != nil {
			return fmt.Errorf("%s: abci_query finds %q under %s, which was never sent", e.Name, query.Response.Value, tx.Key)
		}
		found, err := e.Tx(ctx, tx.Hash(), false)
		if err == nil {
			return fmt.Errorf("%s: finds tx %q at height %d, which was never sent", e.Name, []byte(found.Tx), found.Height)
		}
		if !strings.Contains(err.Error(), "not found") {
			return fmt.Errorf("%s: tx by hash: %w", e.Name, err)
		}
	}
	return nil
}
