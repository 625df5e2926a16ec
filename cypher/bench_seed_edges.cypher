// bench/memory.py only: component $prefix<k> (k in $from..$to) calls $prefix<k+1> and <k+2>.
UNWIND range($from, $to) AS k
UNWIND [1, 2] AS ahead
MATCH (c:Component {name: $prefix + toString(k)})
MATCH (d:Component {name: $prefix + toString(k + ahead)})
MERGE (c)-[r:CALLS]->(d)
  ON CREATE SET r.purpose = 'business', r.protocol = 'grpc', r.source = 'bench',
    r.sources = ['bench'], r.last_seen = timestamp()
WITH count(r) AS edges
// @include _topology_changed
RETURN edges
