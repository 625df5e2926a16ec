// Who each incident's page went to: the latest `response_context` step of its respond task.
UNWIND $incident_ids AS incident_id
MATCH (s:Step {task_id: 'respond:' + incident_id, tool: 'response_context'})
WITH incident_id, s ORDER BY s.at DESC
RETURN incident_id, collect(s.result)[0] AS result
