// Producers of the given topics (business PUBLISHES edges), each row with the topic's consumers
// (business CONSUMES edges): data flows producer -> topic -> consumer, so a consumer depends on
// the producers of the topics it consumes; a producer does not depend on the topic's other
// producers (agents/investigate/tools/graph.py, `coverage_walk`).
MATCH (p:Component)-[r:PUBLISHES]->(t:Component)
WHERE t.name IN $topics AND r.purpose = 'business'
RETURN t.name AS topic, p.name AS producer,
       [(c:Component)-[k:CONSUMES]->(t) WHERE k.purpose = 'business' | c.name] AS consumers
ORDER BY topic, producer
