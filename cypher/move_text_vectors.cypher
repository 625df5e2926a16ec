// Upgrade (TenantGraph.ensure_schema): the incidents $ids (from `text_vectors_left`) get their
// text vector on an `IncidentText` of their own, (:IncidentText {text_vec})-[:OF]->(:Incident),
// and lose it themselves. An incident that has its `IncidentText` already (another process
// moved it in between) only loses its own copy. Returns how many incidents were moved.
UNWIND $ids AS id
MATCH (i:Incident {id: id})
WHERE i.text_vec IS NOT NULL
OPTIONAL MATCH (i)<-[:OF]-(had:IncidentText)
WITH i, i.text_vec AS vec, count(had) AS had
FOREACH (_ IN CASE WHEN had = 0 THEN [1] ELSE [] END | CREATE (:IncidentText {text_vec: vec})-[:OF]->(i))
SET i.text_vec = null
RETURN count(i) AS moved
