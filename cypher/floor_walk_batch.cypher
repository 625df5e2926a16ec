// bench/floor.py --batch only: floor_walk from each of $components in one query (rows carry
// the component they start from), nearest first.
UNWIND $components AS start
MATCH p = (a:Component {name: start})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component)
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL) AND length(p) <= $hops
RETURN start, c.name AS name, min(length(p)) AS depth
ORDER BY start, depth, name
