// The world's default team (the root route, `default_team:` in the world file) and the person on
// call for it now (database clock), if any.
MATCH (tm:Team {is_default: true})
OPTIONAL MATCH (s:OnCallShift)-[:FOR_TEAM]->(tm)
  WHERE s.starts_at <= timestamp() AND timestamp() < s.ends_at
OPTIONAL MATCH (s)-[:ON_CALL]->(p:Person)
RETURN tm.name AS team, tm.slack_channel AS channel, tm.escalation AS escalation,
       p.name AS person, p.email AS email, p.slack_user_id AS slack_user_id,
       s.ends_at AS shift_ends_at
ORDER BY p IS NULL, person LIMIT 1
