// The whole topology with owners: every component, its owning teams and its outgoing
// dependency edges as [target, type, purpose] (bounded by $limit components, for the world page).
MATCH (c:Component)
WITH c ORDER BY c.name LIMIT $limit
OPTIONAL MATCH (t:Team)-[:OWNS]->(c)
WITH c, collect(t.name) AS owners
OPTIONAL MATCH (c)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(d:Component)
RETURN c.name AS name, c.kind AS kind, c.tech AS tech, c.criticality AS criticality, owners,
       [e IN collect([d.name, type(r), r.purpose]) WHERE e[0] IS NOT NULL] AS edges
ORDER BY name
