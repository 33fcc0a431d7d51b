package localnet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const sampleConfig = `proxy_app = "tcp://127.0.0.1:26658"
db_backend = "goleveldb"

[p2p]
laddr = "tcp://0.0.0.0:26656"
pex = true

[consensus]
create_empty_blocks = true
`

func writeSample(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(sampleConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRewriteConfigSetsTopLevelAndSectionKeys(t *testing.T) {
	path := writeSample(t)
	err := rewriteConfig(path, []setting{
		{"db_backend", "cleveldb"}, {"p2p.laddr", "tcp://127.0.0.1:4000"}, {"p2p.pex", false},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ProxyApp  string `toml:"proxy_app"`
		DBBackend string `toml:"db_backend"`
		P2P       struct {
			Laddr string `toml:"laddr"`
			Pex   bool   `toml:"pex"`
		} `toml:"p2p"`
		Consensus struct {
			CreateEmptyBlocks bool `toml:"create_empty_blocks"`
		} `toml:"consensus"`
	}
	if _, err := toml.DecodeFile(path, &got); err != nil {
		t.Fatal(err)
	}
	if got.DBBackend != "cleveldb" || got.P2P.Laddr != "tcp://127.0.0.1:4000" || got.P2P.Pex ||
		got.ProxyApp != "tcp://127.0.0.1:26658" || !got.Consensus.CreateEmptyBlocks {
		t.Fatalf("rewritten config reads back as %+v", got)
	}
}

func TestRewriteConfigRefusesUnknownKeysAndTypes(t *testing.T) {
	for _, s := range []setting{
		{"db_backed", "cleveldb"},            // misspelt key
		{"rcp.laddr", "tcp://127.0.0.1:1"},   // no such section
		{"p2p.pex", "false"},                 // a string for a bool
		{"consensus.create_empty_blocks", 0}, // an int for a bool
	} {
		path := writeSample(t)
		if err := rewriteConfig(path, []setting{s}); err == nil || !strings.Contains(err.Error(), s.key) {
			t.Fatalf("setting %q = %#v: error %v, want one naming the key", s.key, s.value, err)
		}
		if data, _ := os.ReadFile(path); string(data) != sampleConfig {
			t.Fatalf("a refused setting %q changed the file", s.key)
		}
	}
}

func TestNodeSettingsJoinPeersAndSetMempoolAndMetricsOnlyWhenAsked(t *testing.T) {
	// The generated config.toml of CometBFT v0.38 holds every key nodeSettings sets; the
	// localnet test and compare apply them to real ones.
	find := func(settings []setting, key string) any {
		for _, s := range settings {
			if s.key == key {
				return s.value
			}
		}
		return nil
	}
	peers := []string{"a@127.0.0.1:3", "b@127.0.0.1:4"}
	node := &Node{P2PPort: 1, RPCPort: 2, MetricsPort: 5}
	settings := nodeSettings(Layout{Validators: 3, Backend: "cleveldb"}, node, peers)
	if got := find(settings, "p2p.persistent_peers"); got != "a@127.0.0.1:3,b@127.0.0.1:4" {
		t.Fatalf("persistent_peers = %v", got)
	}
	for _, key := range []string{"mempool.size", "instrumentation.prometheus", "instrumentation.prometheus_listen_addr"} {
		if got := find(settings, key); got != nil {
			t.Fatalf("%s set to %v without being asked", key, got)
		}
	}
	settings = nodeSettings(Layout{Validators: 3, Backend: "cleveldb", MempoolSize: 70000, Metrics: true}, node, peers)
	if got := find(settings, "mempool.size"); got != int64(70000) {
		t.Fatalf("mempool.size = %#v", got)
	}
	if got := find(settings, "instrumentation.prometheus_listen_addr"); got != "127.0.0.1:5" {
		t.Fatalf("prometheus_listen_addr = %#v", got)
	}
}
