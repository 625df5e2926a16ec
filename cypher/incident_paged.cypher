// Who the page of an incident names now: the stored result (JSON) of the respond task's (or
// the `page` task's, sent before a late diagnosis) `response_context` step, or of a later
// `route_new_cause` step (the cause turned out another team's: its on-call was paged in their
// own channel), the latest (`result`, at `at`); later edits of the page name them. `first`: the
// route the page itself went to (the latest `response_context` step: the one that paged).
// A `route_new_cause` step counts only when its task paged that route (an Action
// `incident:<id>:repage:<task id>`): a cause named only as a lead tells its owner's on-call in
// the thread and pages nobody, so the team paged stays the incident's route (a refused message
// goes to that team's channel first). The same route paged again (no repage) changes nothing.
MATCH (:Incident {id: $incident_id})<-[:FOR]-(t:Task) WHERE t.kind IN ['respond', 'page', 'notify_update']
WITH t  // else the planner starts from every Step
MATCH (s:Step)-[:OF]->(t)
WHERE s.tool IN ['response_context', 'route_new_cause']
OPTIONAL MATCH (x:Action {intent_id: 'incident:' + $incident_id + ':repage:' + t.id})
WITH s, x WHERE s.tool = 'response_context' OR x IS NOT NULL
WITH s ORDER BY s.at
WITH collect(s) AS routes
WHERE size(routes) > 0
WITH routes, [r IN routes WHERE r.tool = 'response_context'] AS paging
RETURN routes[size(routes) - 1].result AS result, routes[size(routes) - 1].at AS at,
       CASE WHEN size(paging) = 0 THEN null ELSE paging[size(paging) - 1].result END AS first
