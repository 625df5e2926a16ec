// The components one dependency edge (either direction) away from the given ones: the context
// drawn around an incident.
MATCH (c:Component)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]-(n:Component)
WHERE c.name IN $names
RETURN DISTINCT n.name AS name
