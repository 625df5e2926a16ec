// Who the page of an incident names now: the stored result (JSON) of the respond task's (or
// the `page` task's, sent before a late diagnosis) `response_context` step, or of a later `route_new_cause` step (a re-investigation changed the
// cause and its on-call was paged in the thread), the latest; later edits of the page name them.
MATCH (:Incident {id: $incident_id})<-[:FOR]-(t:Task) WHERE t.kind IN ['respond', 'page', 'notify_update']
WITH t  // else the planner starts from every Step
MATCH (s:Step)-[:OF]->(t)
WHERE s.tool IN ['response_context', 'route_new_cause']
RETURN s.result AS result, s.at AS at
ORDER BY at DESC LIMIT 1
