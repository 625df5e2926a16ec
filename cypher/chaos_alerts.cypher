// bench/chaos.py: which of the alert keys a sender got 200 for are in the graph, and in which incident.
MATCH (a:Alert) WHERE a.key IN $keys
OPTIONAL MATCH (i:Incident)-[:HAS_ALERT]->(a)
RETURN a.key AS key, i.id AS incident_id
