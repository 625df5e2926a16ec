// Who the page of an incident went to: the stored result (JSON) of the respond task's
// `response_context` step, so later edits of the page name the person paged then.
MATCH (s:Step {task_id: 'respond:' + $incident_id, tool: 'response_context'})
RETURN s.result AS result, s.at AS at
ORDER BY at DESC LIMIT 1
