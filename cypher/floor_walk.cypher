// bench/floor.py only: one dependency walk, as the coverage walk does it for one alerting
// component: every component it reaches along business edges (caller -> callee), at most
// $hops hops (the bound is a literal 6: FalkorDB takes no parameter there), nearest first.
MATCH p = (a:Component {name: $component})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component)
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL) AND length(p) <= $hops
RETURN c.name AS name, min(length(p)) AS depth
ORDER BY depth, name
