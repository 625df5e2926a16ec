// One shortest business-dependency path per [alerting component, suspected cause] pair of
// $pairs, in one round trip (walk_path.cypher for all of them). Pairs with no path give no row.
UNWIND $pairs AS pair
MATCH p = (a:Component {name: pair[0]})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component {name: pair[1]})
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
WITH pair, p ORDER BY length(p)
WITH pair, collect([n IN nodes(p) | n.name]) AS paths
RETURN pair[0] AS source, pair[1] AS target, paths[0] AS path
