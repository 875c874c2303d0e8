package chtest

import (
	"context"
	"fmt"
	"strings"
)

// ClusterName is the name under which a private Cluster's config lists
// its shards (remote_servers).
const ClusterName = "flamediff_test"

// Cluster is ClickHouse servers on loopback that are each one shard of
// ClusterName, one replica per shard, without ZooKeeper or Keeper: what
// `flamediff migrate --cluster` and Distributed tables need.
type Cluster struct {
	Shards []*Server
}

// StartCluster starts n servers whose configs all name every one of them
// as a shard of ClusterName. The caller must call Stop.
func StartCluster(ctx context.Context, n int) (*Cluster, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, fmt.Errorf("start clickhouse cluster: %w", err)
	}
	var shards strings.Builder
	for i := range n {
		fmt.Fprintf(&shards, "<shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>", ports[2*i])
	}
	extra := "  <remote_servers><" + ClusterName + ">" + shards.String() + "</" + ClusterName + "></remote_servers>\n"
	c := &Cluster{}
	for i := range n {
		s, err := start(ctx, ports[2*i], ports[2*i+1], extra)
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("start shard %d: %w", i+1, err)
		}
		c.Shards = append(c.Shards, s)
	}
	return c, nil
}

// Stop stops every shard and removes their directories.
func (c *Cluster) Stop() error {
	var first error
	for _, s := range c.Shards {
		if err := s.Stop(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
