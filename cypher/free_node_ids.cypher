// Create $count nodes and delete them in the same query, so that the graph holds at least
// $count free node ids below its end (TenantGraph.free_node_ids says why). The nodes have no
// label, property or relationship: no query can match them, and they are gone before anyone
// could read them (writes to one graph are serialised).
UNWIND range(1, $count) AS k
CREATE (n)
WITH n
DELETE n
RETURN count(*) AS freed
