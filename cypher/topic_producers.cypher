// Producers of the given topics (business PUBLISHES edges): data flows producer -> topic ->
// consumer, so a consumer depends on the producers of the topics it consumes.
MATCH (p:Component)-[r:PUBLISHES]->(t:Component)
WHERE t.name IN $topics AND r.purpose = 'business'
RETURN t.name AS topic, p.name AS producer
ORDER BY topic, producer
