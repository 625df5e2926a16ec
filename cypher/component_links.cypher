// The components linked to each of $components along a business dependency path within $hops
// (0-6), in either direction: those it depends on ('down', itself at 0 hops) and those that depend on it
// ('up'). Each row is one path, written caller -> callee; triage keeps the shortest per
// component. A shared neighbour is not a link: two callers of one database are not linked.
// Telemetry and config edges, and edges no source reports any more (retired), are skipped.
// Each row names the component it belongs to (`origin`): one query for a whole delivery.
UNWIND $components AS origin
MATCH p = (c:Component {name: origin})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(d:Component)
WHERE length(p) <= $hops AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
RETURN origin, d.name AS name, [n IN nodes(p) | n.name] AS path, length(p) AS hops, 'down' AS way
UNION ALL
UNWIND $components AS origin
MATCH p = (d:Component)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*1..6]->(c:Component {name: origin})
WHERE length(p) <= $hops AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
RETURN origin, d.name AS name, [n IN nodes(p) | n.name] AS path, length(p) AS hops, 'up' AS way
