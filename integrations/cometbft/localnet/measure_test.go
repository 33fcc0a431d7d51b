package localnet

import (
	"testing"
	"time"
)

func blocksAt(seconds []int, txs []int) []Block {
	blocks := make([]Block, len(seconds))
	for i := range seconds {
		blocks[i] = Block{Height: int64(i + 1), Time: time.Unix(int64(seconds[i]), 0), NumTxs: txs[i]}
	}
	return blocks
}

func TestMeasureTimesFromFirstSendToTheLastCommit(t *testing.T) {
	// Sending starts at second 10; blocks 3..5 hold the txs, block 6 commits block 5 at second 20.
	blocks := blocksAt([]int{1, 9, 12, 14, 17, 20, 30}, []int{0, 0, 100, 0, 300, 0, 0})
	f, err := Measure(blocks, time.Unix(10, 0))
	if err != nil {
		t.Fatal(err)
	}
	if f.Txs != 400 || f.Blocks != 4 || f.TxPerSecond != 40 || f.BlockTime != 8*time.Second/3 {
		t.Fatalf("figures %+v", f)
	}
}

func TestMeasureNeedsACommittedLastBlock(t *testing.T) {
	if _, err := Measure(blocksAt([]int{1, 2}, []int{0, 5}), time.Unix(0, 0)); err == nil {
		t.Fatal("measured without the block that commits the last transactions")
	}
	if _, err := Measure(blocksAt([]int{1, 2}, []int{0, 0}), time.Unix(0, 0)); err == nil {
		t.Fatal("measured a chain with no transaction")
	}
	if _, err := Measure(blocksAt([]int{1, 2, 3}, []int{0, 5, 0}), time.Unix(5, 0)); err == nil {
		t.Fatal("measured a commit before the first send")
	}
}
