// bench/memory.py only: components $prefix<k> for k in $from..$to (services), as a
// 10,000-component world would hold (edges: `bench_seed_edges`).
UNWIND range($from, $to) AS k
MERGE (c:Component {name: $prefix + toString(k)})
  ON CREATE SET c.kind = 'service', c.tech = 'go', c.client = false, c.aliases = [], c.paths = [],
    c.source = 'bench', c.sources = ['bench'], c.declared = true, c.last_seen = timestamp()
WITH count(c) AS components
// @include _topology_changed
RETURN components
