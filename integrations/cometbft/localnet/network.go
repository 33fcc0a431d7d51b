// Package localnet runs a CometBFT network of validators on 127.0.0.1 and checks what its nodes
// stored. It drives a cometbft binary: which storage engine the nodes write through is decided
// by how that binary was linked (cleveldb against Strata or LevelDB) and by the db_backend
// setting, so one network can move from one binary to another between runs.
//
// A Network is laid out by `cometbft testnet` and then pointed at loopback ports chosen free on
// this machine (nodeSettings says what else is changed). Nodes run as child processes that die
// with the process that started them. Transactions are the built-in kvstore application's
// "key=value" (Send); the checks (chain.go, storage.go) read the nodes through their RPC and
// their data directories through the `strata` tool and plyvel; measure.go and metrics.go give
// the figures cmd/compare prints.
package localnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"

	"github.com/cometbft/cometbft/p2p"
)

// Network is a set of validators, node i in Dir/node<i>. Its methods are called from one
// goroutine.
type Network struct {
	Dir   string
	Nodes []*Node
}

// Layout is what a generated network is made of.
type Layout struct {
	Validators int
	Backend    string // db_backend: "cleveldb", "goleveldb"
	// MempoolSize, when not 0, is each node's mempool capacity in transactions. CometBFT's
	// default (5,000) is a back pressure a saturating load runs into, and at that limit
	// broadcast_tx_sync can answer code 0 for a transaction the mempool then drops.
	MempoolSize int
	// Metrics turns on each node's Prometheus endpoint (Node.MetricsPort), for ReadCommitTimes.
	Metrics bool
}

// Generate lays out a network in dir (which must not hold one already) with `binary testnet`,
// and sets each node's config.toml for this machine and the layout.
func Generate(ctx context.Context, binary, dir string, layout Layout) (*Network, error) {
	n := layout.Validators
	out, err := exec.CommandContext(ctx, binary, "testnet", "--v", fmt.Sprint(n), "--o", dir).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s testnet: %w\n%s", binary, err, out)
	}
	// Each node's P2P, RPC and, with Metrics, Prometheus port.
	perNode := 2
	if layout.Metrics {
		perNode = 3
	}
	ports, err := freePorts(perNode * n)
	if err != nil {
		return nil, err
	}
	network := &Network{Dir: dir}
	for i := range n {
		name := fmt.Sprintf("node%d", i)
		home := filepath.Join(dir, name)
		key, err := p2p.LoadNodeKey(filepath.Join(home, "config", "node_key.json"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		node, err := newNode(name, home, string(key.ID()), ports[perNode*i], ports[perNode*i+1])
		if err != nil {
			return nil, err
		}
		if layout.Metrics {
			node.MetricsPort = ports[perNode*i+2]
		}
		network.Nodes = append(network.Nodes, node)
	}
	for i, node := range network.Nodes {
		var peers []string
		for j, peer := range network.Nodes {
			if j != i {
				peers = append(peers, fmt.Sprintf("%s@127.0.0.1:%d", peer.ID, peer.P2PPort))
			}
		}
		settings := nodeSettings(layout, node, peers)
		if err := rewriteConfig(filepath.Join(node.Home, "config", "config.toml"), settings); err != nil {
			return nil, err
		}
	}
	return network, nil
}

// freePorts finds n distinct TCP ports free on 127.0.0.1, holding each open until all are found.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Start starts every node on binary and waits until each answers on its RPC port.
func (nw *Network) Start(ctx context.Context, binary string) error {
	for _, node := range nw.Nodes {
		if err := node.Start(binary); err != nil {
			return err
		}
	}
	for _, node := range nw.Nodes {
		if _, err := node.WaitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops every running node with SIGTERM; see Node.Stop for what counts as an error.
func (nw *Network) Stop() error {
	var errs []error
	for _, node := range nw.Nodes {
		if node.proc != nil {
			errs = append(errs, node.Stop())
		}
	}
	return errors.Join(errs...)
}

// Close kills whatever nodes still run: the cleanup after a failure.
func (nw *Network) Close() {
	for _, node := range nw.Nodes {
		if node.proc != nil {
			_ = node.Kill()
		}
	}
}

// Endpoints gives every node as the checks read it: its name and its RPC client.
func (nw *Network) Endpoints() []Endpoint {
	endpoints := make([]Endpoint, len(nw.Nodes))
	for i, node := range nw.Nodes {
		endpoints[i] = node.Endpoint()
	}
	return endpoints
}
