// Traffic sources (client components) upstream of a component along business CALLS edges, the
// last hop into a datastore a READS_WRITES one, with the components in between (used when the
// evidence is a traffic surge, or a CPU alert that load arriving may raise: a database's CPU
// under a partner's flood is reached only through the service that reads it).
MATCH p = (src:Component {client: true})-[:CALLS|READS_WRITES*1..6]->(c:Component {name: $component})
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
RETURN src.name AS source, [n IN nodes(p) | n.name] AS path, length(p) AS hops
ORDER BY hops, source
