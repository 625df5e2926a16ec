// Keep what similarity needs on the incident (fenced): its text vector (float32, under the
// Incident text vector index) and the similar incidents found when it was investigated
// (`similar_json`), so the page, the ticket and the model read what memory offered then.
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
SET i.text_vec = vecf32($vector), i.similar_json = $similar_json
RETURN i.id AS id
