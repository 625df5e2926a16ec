// Every component with what the world knows of its own dependencies, for the completeness
// report (`topology import`, `doctor`): its kind and, per business edge out of it that is not
// retired, the edge's basis (declared, environment, depends_on, catalog, traced; 'unknown' for
// edges written before bases were recorded) and whether its propagation was stated.
MATCH (c:Component)
OPTIONAL MATCH (c)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(:Component)
WHERE r.purpose = 'business' AND r.retired_at IS NULL
RETURN c.name AS name, c.kind AS kind,
       collect(CASE WHEN r IS NULL THEN null ELSE coalesce(r.basis, 'unknown') END) AS bases,
       sum(CASE WHEN r IS NOT NULL AND r.propagation IS NULL THEN 1 ELSE 0 END) AS unstated
ORDER BY name
