// Traffic sources (client components) upstream of a component along business CALLS edges,
// with the components in between (used when the evidence is a traffic surge).
MATCH p = (src:Component {client: true})-[:CALLS*1..6]->(c:Component {name: $component})
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
RETURN src.name AS source, [n IN nodes(p) | n.name] AS path, length(p) AS hops
ORDER BY hops, source
