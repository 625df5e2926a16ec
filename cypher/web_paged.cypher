// Who each incident's page names now, as `incident_paged.cypher` says for one incident: the
// latest stored result (JSON) of a `response_context` step (the respond or page task) or a
// `route_new_cause` step (the new cause's on-call, paged in their own channel), and `first`,
// the route the page itself went to (the latest `response_context` step). A `route_new_cause`
// step counts only when its task paged that route (`incident:<id>:repage:<task id>`): a lead's
// owner is told, not paged.
UNWIND $incident_ids AS incident_id
MATCH (:Incident {id: incident_id})<-[:FOR]-(t:Task) WHERE t.kind IN ['respond', 'page', 'notify_update']
WITH incident_id, t  // else the planner starts from every Step
MATCH (s:Step)-[:OF]->(t)
WHERE s.tool IN ['response_context', 'route_new_cause']
OPTIONAL MATCH (x:Action {intent_id: 'incident:' + incident_id + ':repage:' + t.id})
WITH incident_id, s, x WHERE s.tool = 'response_context' OR x IS NOT NULL
WITH incident_id, s ORDER BY s.at
WITH incident_id, collect(s) AS routes
WITH incident_id, routes, [r IN routes WHERE r.tool = 'response_context'] AS paging
RETURN incident_id, routes[size(routes) - 1].result AS result,
       CASE WHEN size(paging) = 0 THEN null ELSE paging[size(paging) - 1].result END AS first
