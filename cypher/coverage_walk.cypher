// Coverage walk: every component reachable from the alerting ones along business dependency
// edges (caller -> callee), bounded at 6 hops, with which alerting components reach it and how far
// (`depths[i]`: shortest hops from `covers[i]`).
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component)
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL) AND length(p) <= $hops
WITH c, a, min(length(p)) AS depth
RETURN c.name AS name, c.kind AS kind, c.client AS client,
       collect(a.name) AS covers, sum(depth) AS distance, collect(depth) AS depths
