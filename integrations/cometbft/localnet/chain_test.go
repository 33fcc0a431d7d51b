package localnet

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	cmtbytes "github.com/cometbft/cometbft/libs/bytes"
	ctypes "github.com/cometbft/cometbft/rpc/core/types"
	"github.com/cometbft/cometbft/types"
)

// fakeChain is a node as the checks see it, held in memory, that each test breaks its own way.
type fakeChain struct {
	tip    Tip
	blocks []Block           // blocks[h-1] is block h; a zero Height stands for a block the store lacks
	state  map[string]string // the application's keys and values
	index  map[string]*ctypes.ResultTx
}

// healthyChain is a node that committed txs, ten a block, and settled one block later.
func healthyChain(txs []Tx) *fakeChain {
	c := &fakeChain{state: map[string]string{}, index: map[string]*ctypes.ResultTx{}}
	height := int64(len(txs)/10 + 2)
	for h := int64(1); h <= height; h++ {
		c.blocks = append(c.blocks, Block{Height: h, Hash: []byte(fmt.Sprintf("block%d", h)),
			AppHash: []byte(fmt.Sprintf("app%d", h)), Time: time.Unix(h, 0)})
	}
	for i, tx := range txs {
		h := int64(i/10 + 1)
		c.blocks[h-1].NumTxs++
		c.state[tx.Key] = tx.Value
		c.index[hex.EncodeToString(tx.Hash())] = &ctypes.ResultTx{Hash: tx.Hash(), Height: h, Tx: tx.Bytes()}
	}
	last := c.blocks[height-1]
	c.tip = Tip{Height: height, BlockHash: last.Hash, AppHash: last.AppHash}
	return c
}

func (c *fakeChain) Status(context.Context) (*ctypes.ResultStatus, error) {
	return &ctypes.ResultStatus{SyncInfo: ctypes.SyncInfo{
		LatestBlockHeight: c.tip.Height, LatestBlockHash: c.tip.BlockHash, LatestAppHash: c.tip.AppHash,
	}}, nil
}

func (c *fakeChain) NumUnconfirmedTxs(context.Context) (*ctypes.ResultUnconfirmedTxs, error) {
	return &ctypes.ResultUnconfirmedTxs{Total: c.tip.Mempool}, nil
}

// BlockchainInfo answers as CometBFT does: at most blocksPerCall metas, highest first.
func (c *fakeChain) BlockchainInfo(_ context.Context, low, high int64) (*ctypes.ResultBlockchainInfo, error) {
	low = max(low, high-blocksPerCall+1)
	info := &ctypes.ResultBlockchainInfo{LastHeight: int64(len(c.blocks))}
	for h := high; h >= low; h-- {
		b := c.blocks[h-1]
		if b.Height == 0 {
			info.BlockMetas = append(info.BlockMetas, nil)
			continue
		}
		meta := &types.BlockMeta{NumTxs: b.NumTxs}
		meta.BlockID.Hash = b.Hash
		meta.Header.Height, meta.Header.AppHash, meta.Header.Time = b.Height, b.AppHash, b.Time
		info.BlockMetas = append(info.BlockMetas, meta)
	}
	return info, nil
}

func (c *fakeChain) ABCIQuery(_ context.Context, _ string, key cmtbytes.HexBytes) (*ctypes.ResultABCIQuery, error) {
	res := &ctypes.ResultABCIQuery{}
	if value, ok := c.state[string(key)]; ok {
		res.Response.Value = []byte(value)
	}
	return res, nil
}

func (c *fakeChain) Tx(_ context.Context, hash []byte, _ bool) (*ctypes.ResultTx, error) {
	if tx, ok := c.index[hex.EncodeToString(hash)]; ok {
		return tx, nil
	}
	return nil, fmt.Errorf("tx (%X) not found", hash)
}

// network is four healthy nodes that committed txs; break one before checking.
func network(txs []Tx) ([]Endpoint, []*fakeChain) {
	var endpoints []Endpoint
	var chains []*fakeChain
	for i := range 4 {
		c := healthyChain(txs)
		chains = append(chains, c)
		endpoints = append(endpoints, Endpoint{Name: fmt.Sprintf("node%d", i), Chain: c})
	}
	return endpoints, chains
}

func settle(endpoints []Endpoint) (Tip, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	return WaitSettled(ctx, endpoints, 3, time.Millisecond)
}

func requireErrorNaming(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one naming %q", parts)
	}
	for _, part := range parts {
		if !strings.Contains(err.Error(), part) {
			t.Fatalf("error does not name %q: %v", part, err)
		}
	}
}

func TestAgreeingNodesSettle(t *testing.T) {
	endpoints, chains := network(Txs("k", 35))
	tip, err := settle(endpoints)
	if err != nil {
		t.Fatal(err)
	}
	if tip.Height != chains[0].tip.Height || tip.Height != 5 {
		t.Fatalf("settled at %v, want height 5", tip)
	}
}

func TestNodeLeftBehindDoesNotSettle(t *testing.T) {
	endpoints, chains := network(Txs("k", 35))
	behind := chains[2]
	behind.tip = Tip{Height: 3, BlockHash: behind.blocks[2].Hash, AppHash: behind.blocks[2].AppHash}
	_, err := settle(endpoints)
	requireErrorNaming(t, err, "did not settle", "node2: height 3", "node0: height 5")
}

func TestDivergentAppHashDoesNotSettle(t *testing.T) {
	endpoints, chains := network(Txs("k", 35))
	chains[1].tip.AppHash = []byte("other")
	_, err := settle(endpoints)
	requireErrorNaming(t, err, "node1: height 5", fmt.Sprintf("app hash %X", "other"))
}

func TestUncommittedTxsDoNotSettle(t *testing.T) {
	endpoints, chains := network(Txs("k", 35))
	chains[3].tip.Mempool = 7
	_, err := settle(endpoints)
	requireErrorNaming(t, err, "node3: height 5", "7 txs in mempool")
}

func TestSameBlocksReadsPastOneCall(t *testing.T) {
	txs := Txs("k", 450)
	endpoints, _ := network(txs)
	blocks, err := SameBlocks(context.Background(), endpoints, 47)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		if b.Height != int64(i+1) {
			t.Fatalf("block %d is at index %d", b.Height, i)
		}
	}
	if CountTxs(blocks) != len(txs) {
		t.Fatalf("counted %d txs, want %d", CountTxs(blocks), len(txs))
	}
}

func TestSameBlocksFindsADivergentBlock(t *testing.T) {
	endpoints, chains := network(Txs("k", 450))
	chains[3].blocks[30].Hash = []byte("forked")
	_, err := SameBlocks(context.Background(), endpoints, 47)
	requireErrorNaming(t, err, "block 31", "node3")
}

func TestSameBlocksFindsAMissingBlock(t *testing.T) {
	endpoints, chains := network(Txs("k", 450))
	chains[1].blocks[9] = Block{}
	_, err := SameBlocks(context.Background(), endpoints, 47)
	requireErrorNaming(t, err, "node1", "no block 10")
}

func TestEveryCommittedTxIsFound(t *testing.T) {
	txs := Txs("k", 100)
	endpoints, _ := network(txs)
	if err := CheckTxs(context.Background(), endpoints, txs, 12, 4); err != nil {
		t.Fatal(err)
	}
	if err := CheckAbsent(context.Background(), endpoints, Txs("never", 1)[0]); err != nil {
		t.Fatal(err)
	}
}

func TestCheckTxsFindsEachKindOfLoss(t *testing.T) {
	txs := Txs("k", 100)
	lost := txs[42]
	breaks := map[string]func(c *fakeChain){
		"abci_query gives \"\"":        func(c *fakeChain) { delete(c.state, lost.Key) },
		"abci_query gives \"wrong\"":   func(c *fakeChain) { c.state[lost.Key] = "wrong" },
		"tx by hash: tx (":             func(c *fakeChain) { delete(c.index, hex.EncodeToString(lost.Hash())) },
		"tx by hash gives":             func(c *fakeChain) { c.index[hex.EncodeToString(lost.Hash())].TxResult.Code = 1 },
		"height 13 (tip 12)":           func(c *fakeChain) { c.index[hex.EncodeToString(lost.Hash())].Height = 13 },
		"tx by hash gives \"k-000041=": func(c *fakeChain) { c.index[hex.EncodeToString(lost.Hash())].Tx = txs[41].Bytes() },
	}
	for symptom, breakChain := range breaks {
		t.Run(symptom, func(t *testing.T) {
			endpoints, chains := network(txs)
			breakChain(chains[2])
			err := CheckTxs(context.Background(), endpoints, txs, 12, 4)
			requireErrorNaming(t, err, "1 of 800 lookups failed", "node2: tx k-000042", symptom)
		})
	}
}

func TestCheckTxsCountsEveryFailure(t *testing.T) {
	txs := Txs("k", 100)
	endpoints, chains := network(txs)
	for _, c := range chains {
		c.state = map[string]string{}
	}
	err := CheckTxs(context.Background(), endpoints, txs, 12, 4)
	requireErrorNaming(t, err, "400 of 800 lookups failed")
	if n := strings.Count(err.Error(), "abci_query gives"); n != reportedFailures {
		t.Fatalf("error lists %d failures, want %d: %v", n, reportedFailures, err)
	}
}

func TestCheckAbsentFindsATxNeverSent(t *testing.T) {
	txs := Txs("k", 100)
	endpoints, chains := network(txs)
	ghost := Txs("never", 1)[0]
	chains[1].index[hex.EncodeToString(ghost.Hash())] = &ctypes.ResultTx{Height: 3, Tx: ghost.Bytes()}
	requireErrorNaming(t, CheckAbsent(context.Background(), endpoints, ghost), "node1", "never sent")

	endpoints, chains = network(txs)
	chains[3].state[ghost.Key] = ghost.Value
	requireErrorNaming(t, CheckAbsent(context.Background(), endpoints, ghost), "node3", "never sent")
}

// unreachable is a node whose RPC does not answer.
type unreachable struct{ *fakeChain }

func (unreachable) Tx(context.Context, []byte, bool) (*ctypes.ResultTx, error) {
	return nil, errors.New("connection refused")
}

func TestCheckAbsentDoesNotTakeAnErrorForAbsence(t *testing.T) {
	endpoints, chains := network(nil)
	endpoints[0].Chain = unreachable{chains[0]}
	requireErrorNaming(t, CheckAbsent(context.Background(), endpoints, Txs("never", 1)[0]), "node0", "connection refused")
}
