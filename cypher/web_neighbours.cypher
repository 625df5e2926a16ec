// The components one business dependency edge (either direction) away from the given ones: the
// context drawn around an incident (telemetry and config edges would bury the walk's edges).
MATCH (c:Component)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]-(n:Component)
WHERE c.name IN $names AND r.purpose = 'business'
RETURN DISTINCT n.name AS name
