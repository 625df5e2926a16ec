// The given components and the dependency edges between them (caller -> callee) as
// [target, type, purpose], for drawing.
MATCH (c:Component) WHERE c.name IN $names
OPTIONAL MATCH (c)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(d:Component)
WHERE d.name IN $names
RETURN c.name AS name, c.kind AS kind, c.tech AS tech,
       [e IN collect([d.name, type(r), r.purpose]) WHERE e[0] IS NOT NULL] AS edges
ORDER BY name
