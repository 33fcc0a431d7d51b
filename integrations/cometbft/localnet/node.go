package localnet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	ctypes "github.com/cometbft/cometbft/rpc/core/types"
)

// stopTimeout is how long a node gets to exit after SIGTERM before it is killed.
const stopTimeout = 30 * time.Second

// rpcTimeout bounds every RPC call a Node's client makes.
const rpcTimeout = 15 // seconds

// Node is one validator of a Network: its home directory, its ports, an RPC client, and while
// it runs its process. A Node is driven from one goroutine; its RPC client may be used from any.
type Node struct {
	Name    string
	Home    string
	ID      string
	P2PPort int
	RPCPort int
	// MetricsPort serves Prometheus metrics when the layout asks for them; 0 otherwise.
	MetricsPort int
	RPC         *rpchttp.HTTP
	// LogPath collects the output of every run of the node, each run headed by a line naming
	// the binary.
	LogPath string
	proc    *process
}

// process is a running (or exited) `cometbft start`.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's result, set before done is closed
}

func newNode(name, home, id string, p2pPort, rpcPort int) (*Node, error) {
	client, err := rpchttp.NewWithTimeout(fmt.Sprintf("http://127.0.0.1:%d", rpcPort), "/websocket", rpcTimeout)
	if err != nil {
		return nil, fmt.Errorf("%s: RPC client: %w", name, err)
	}
	return &Node{
		Name: name, Home: home, ID: id, P2PPort: p2pPort, RPCPort: rpcPort, RPC: client,
		LogPath: home + ".log",
	}, nil
}

// Start runs `binary start` on the node's home. The kernel kills the node when the process that
// started it dies (PR_SET_PDEATHSIG), so a test that is itself killed leaves no node behind.
func (n *Node) Start(binary string) error {
	if n.proc != nil {
		return fmt.Errorf("%s is already running", n.Name)
	}
	log, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "==== %s start --home %s\n", binary, n.Home)
	cmd := exec.Command(binary, "start", "--home", n.Home)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	n.proc = p
	return nil
}

// Endpoint is the node as the checks read it.
func (n *Node) Endpoint() Endpoint {
	return Endpoint{Name: n.Name, Chain: n.RPC}
}

// PID is the running process's id, 0 when the node is not running.
func (n *Node) PID() int {
	if n.proc == nil {
		return 0
	}
	return n.proc.cmd.Process.Pid
}

// Stop sends SIGTERM and waits for a clean exit (status 0). A node that had already exited,
// exits with an error, or is still running after stopTimeout (then killed) is an error.
func (n *Node) Stop() error {
	p, err := n.detach()
	if err != nil {
		return err
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("%s: SIGTERM: %w", n.Name, err)
	}
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s still ran %s after SIGTERM and was killed (log: %s)", n.Name, stopTimeout, n.LogPath)
	}
	if p.err != nil {
		return fmt.Errorf("%s exited with %v after SIGTERM (log: %s)", n.Name, p.err, n.LogPath)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to be gone: a crash at whatever point the node
// was in.
func (n *Node) Kill() error {
	p, err := n.detach()
	if err != nil {
		return err
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return nil
}

// detach takes the running process off the node, failing if there is none or it had exited
// on its own (a crash the caller must hear about).
func (n *Node) detach() (*process, error) {
	p := n.proc
	if p == nil {
		return nil, fmt.Errorf("%s is not running", n.Name)
	}
	n.proc = nil
	select {
	case <-p.done:
		return nil, fmt.Errorf("%s had exited on its own: %v (log: %s)", n.Name, p.err, n.LogPath)
	default:
		return p, nil
	}
}

// WaitReady polls the node's RPC until it answers with a status, the process exits, or ctx ends.
func (n *Node) WaitReady(ctx context.Context) (*ctypes.ResultStatus, error) {
	if n.proc == nil {
		return nil, fmt.Errorf("%s is not running", n.Name)
	}
	for {
		status, err := n.RPC.Status(ctx)
		if err == nil {
			return status, nil
		}
		select {
		case <-n.proc.done:
			return nil, fmt.Errorf("%s exited while starting: %v (log: %s)", n.Name, n.proc.err, n.LogPath)
		case <-ctx.Done():
			return nil, fmt.Errorf("%s did not answer on its RPC port %d: %w (log: %s)",
				n.Name, n.RPCPort, errors.Join(ctx.Err(), err), n.LogPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
