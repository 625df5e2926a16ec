// One shortest business-dependency path from an alerting component to the suspected cause.
MATCH p = (a:Component {name: $from})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component {name: $to})
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
RETURN [n IN nodes(p) | n.name] AS path, [r IN relationships(p) | type(r)] AS edges, length(p) AS hops
ORDER BY hops LIMIT 1
