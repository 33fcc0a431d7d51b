package localnet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
	"github.com/cometbft/cometbft/types"
	"golang.org/x/sync/errgroup"
)

// Tx is one transaction of the kvstore application, which stores Value under Key.
type Tx struct {
	Key, Value string
}

// Bytes is the transaction as sent: "key=value".
func (tx Tx) Bytes() types.Tx { return types.Tx(tx.Key + "=" + tx.Value) }

// Hash is the transaction's hash, the key CometBFT indexes it under.
func (tx Tx) Hash() []byte { return tx.Bytes().Hash() }

// Txs makes n distinct transactions, keys prefix-000000 on, each value derived from its key.
func Txs(prefix string, n int) []Tx {
	txs := make([]Tx, n)
	for i := range txs {
		key := fmt.Sprintf("%s-%06d", prefix, i)
		sum := sha256.Sum256([]byte(key))
		txs[i] = Tx{Key: key, Value: hex.EncodeToString(sum[:16])}
	}
	return txs
}

// sendAttempts bounds how often one transaction is offered to a node that does not answer
// before Send gives up; fullPause is the wait after a node answers that its mempool is full,
// which is back pressure rather than failure and is waited out for as long as ctx lasts.
const (
	sendAttempts = 8
	fullPause    = 100 * time.Millisecond
)

// Send broadcasts every tx with broadcast_tx_sync, spread over targets in turn, from workers
// goroutines and at most rate transactions a second overall (0: as fast as they go). Each must
// pass CheckTx: a rejection fails Send. A failed connection (up to sendAttempts) or a full
// mempool is retried on the next target after a pause; a retry answered "already in cache"
// counts as accepted, since the tx reached a mempool on an earlier attempt. accepted (if not
// nil) counts the accepted txs as they go. Send returns once every tx is accepted, or with the
// first one that cannot be.
//
// Accepted is not yet committed: a mempool that fills between CometBFT's two checks of its size
// drops a tx it answered with code 0. Layout.MempoolSize avoids that under a saturating load;
// the checks of the committed blocks would show such a loss.
func Send(ctx context.Context, targets []*Node, txs []Tx, workers int, rate float64, accepted *atomic.Int64) error {
	if len(targets) == 0 {
		return errors.New("no node to send to")
	}
	group, ctx := errgroup.WithContext(ctx)
	next := make(chan int)
	group.Go(func() error {
		defer close(next)
		var tick <-chan time.Time
		if rate > 0 {
			ticker := time.NewTicker(time.Duration(float64(time.Second) / rate))
			defer ticker.Stop()
			tick = ticker.C
		}
		for i := range txs {
			if tick != nil {
				select {
				case <-tick:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	for range workers {
		group.Go(func() error {
			for i := range next {
				if err := sendOne(ctx, targets, i, txs[i]); err != nil {
					return err
				}
				if accepted != nil {
					accepted.Add(1)
				}
			}
			return nil
		})
	}
	return group.Wait()
}

// sendOne offers tx to targets starting at the first-th, as Send describes.
func sendOne(ctx context.Context, targets []*Node, first int, tx Tx) error {
	var failures []error
	for offer := 0; len(failures) < sendAttempts; offer++ {
		node := targets[(first+offer)%len(targets)]
		res, err := node.RPC.BroadcastTxSync(ctx, tx.Bytes())
		if err == nil {
			if res.Code != abci.CodeTypeOK {
				return fmt.Errorf("%s rejected tx %s: code %d %s", node.Name, tx.Key, res.Code, res.Log)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		pause := fullPause
		var answer *rpctypes.RPCError
		var transport *url.Error
		switch {
		case errors.As(err, &answer) && offer > 0 && strings.Contains(answer.Data, "tx already exists in cache"):
			return nil
		case errors.As(err, &answer) && strings.Contains(answer.Data, "mempool is full"):
		case errors.As(err, &answer):
			return fmt.Errorf("%s refused tx %s: %w", node.Name, tx.Key, err)
		case errors.As(err, &transport):
			failures = append(failures, fmt.Errorf("%s: %w", node.Name, err))
			pause = time.Duration(len(failures)) * 250 * time.Millisecond
		default:
			return fmt.Errorf("sending tx %s to %s: %w", tx.Key, node.Name, err)
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("tx %s not accepted, %d nodes did not answer: %w", tx.Key, sendAttempts, errors.Join(failures...))
}
