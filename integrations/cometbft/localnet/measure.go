package localnet

import (
	"errors"
	"fmt"
	"time"
)

// Figures are what one load run measured, from the blocks the network committed.
type Figures struct {
	Txs    int // transactions committed
	Blocks int // blocks from the first holding a transaction to the one after the last
	// TxPerSecond is Txs over the time from the first send to the commit of the last
	// transaction's block (the header time of the block after it, which CometBFT takes from the
	// commit votes).
	TxPerSecond float64
	// BlockTime is the mean interval between those blocks' header times.
	BlockTime time.Duration
}

// Measure computes a load run's figures from the settled chain's blocks (1..tip, in order) and
// the wall-clock time the first transaction was sent. The chain must hold a block after the
// last one with transactions, as a settled network does (the block carrying its app hash).
func Measure(blocks []Block, sendStart time.Time) (Figures, error) {
	first, last := -1, -1
	txs := 0
	for i, b := range blocks {
		if b.NumTxs > 0 {
			if first < 0 {
				first = i
			}
			last = i
			txs += b.NumTxs
		}
	}
	if first < 0 {
		return Figures{}, errors.New("no block holds a transaction")
	}
	if last+1 >= len(blocks) {
		return Figures{}, fmt.Errorf("no block after the last transactions' block %d", blocks[last].Height)
	}
	committed := blocks[last+1].Time
	if !committed.After(sendStart) {
		return Figures{}, fmt.Errorf("block %d is timed %s, before the first send at %s",
			blocks[last+1].Height, committed, sendStart)
	}
	intervals := last + 1 - first
	return Figures{
		Txs:         txs,
		Blocks:      intervals + 1,
		TxPerSecond: float64(txs) / committed.Sub(sendStart).Seconds(),
		BlockTime:   blocks[last+1].Time.Sub(blocks[first].Time) / time.Duration(intervals),
	}, nil
}
