package localnet

import (
	"context"
	"fmt"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// CommitTimes are the time a node spent committing blocks since it started, from its Prometheus
// metrics (Layout.Metrics). The consensus Commit step is where a block is written to the block
// store, executed, and the new state written to the state store: the part of a block's life
// the storage engine is in (with the consensus WAL's sync and the application's FinalizeBlock).
type CommitTimes struct {
	Blocks   uint64        // Commit steps completed
	Commit   time.Duration // their total time
	Finalize time.Duration // of which the application's FinalizeBlock (in memory for kvstore)
}

// metricsNamespace is CometBFT's default instrumentation namespace.
const metricsNamespace = "cometbft"

// ReadCommitTimes scrapes the node's metrics endpoint.
func ReadCommitTimes(ctx context.Context, node *Node) (CommitTimes, error) {
	if node.MetricsPort == 0 {
		return CommitTimes{}, fmt.Errorf("%s has no metrics port (Layout.Metrics)", node.Name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", node.MetricsPort), nil)
	if err != nil {
		return CommitTimes{}, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return CommitTimes{}, fmt.Errorf("%s: metrics: %w", node.Name, err)
	}
	defer res.Body.Close()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		return CommitTimes{}, fmt.Errorf("%s: metrics: %w", node.Name, err)
	}
	commit := histogram(families[metricsNamespace+"_consensus_step_duration_seconds"], "step", "Commit")
	finalize := histogram(families[metricsNamespace+"_state_block_processing_time"], "", "")
	if commit == nil || finalize == nil {
		return CommitTimes{}, fmt.Errorf("%s: metrics lack the Commit step or the block processing time", node.Name)
	}
	return CommitTimes{
		Blocks:   commit.GetSampleCount(),
		Commit:   time.Duration(commit.GetSampleSum() * float64(time.Second)),
		Finalize: time.Duration(finalize.GetSampleSum() * float64(time.Millisecond)), // observed in ms
	}, nil
}

// histogram is the family's histogram whose label name has value (any, when name is ""), or nil.
func histogram(family *dto.MetricFamily, name, value string) *dto.Histogram {
	for _, m := range family.GetMetric() {
		if name == "" {
			return m.GetHistogram()
		}
		for _, label := range m.GetLabel() {
			if label.GetName() == name && label.GetValue() == value {
				return m.GetHistogram()
			}
		}
	}
	return nil
}
