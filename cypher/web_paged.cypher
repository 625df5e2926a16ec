// Who each incident's page names now, as `incident_paged.cypher` says for one incident: the
// latest stored result (JSON) of a `response_context` step (the respond or page task) or a
// `route_new_cause` step (a notify_update task that re-paged for a changed cause).
UNWIND $incident_ids AS incident_id
MATCH (:Incident {id: incident_id})<-[:FOR]-(t:Task) WHERE t.kind IN ['respond', 'page', 'notify_update']
WITH incident_id, t  // else the planner starts from every Step
MATCH (s:Step)-[:OF]->(t)
WHERE s.tool IN ['response_context', 'route_new_cause']
WITH incident_id, s ORDER BY s.at DESC
RETURN incident_id, collect(s.result)[0] AS result
