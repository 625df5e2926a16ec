// Benchmarks only (bench/latency.py): for each incident paged, the ms from the webhook's write
// (received_at) to the first notification sent for it (the page's Action updated_at).
MATCH (a:Action {kind: 'notification', status: 'sent'})-[:FOR]->(i:Incident)
WITH i, min(a.updated_at) AS paged
RETURN i.id AS incident_id, paged - i.received_at AS ms
