// Why each alert is part of an incident: every property recorded on its HAS_ALERT edge (whatever
// triage writes there), with the alert's key and when it arrived.
MATCH (:Incident {id: $incident_id})-[h:HAS_ALERT]->(a:Alert)
RETURN a.key AS key, a.received_at AS received_at, properties(h) AS joined
ORDER BY received_at, key
