// Owning team and the person on call now (database clock) for each of the given components.
MATCH (tm:Team)-[o:OWNS]->(c:Component) WHERE c.name IN $components
OPTIONAL MATCH (s:OnCallShift)-[:FOR_TEAM]->(tm)
  WHERE s.starts_at <= timestamp() AND timestamp() < s.ends_at
OPTIONAL MATCH (s)-[:ON_CALL]->(p:Person)
RETURN c.name AS component, tm.name AS team, tm.slack_channel AS channel,
       tm.escalation AS escalation, p.name AS person, p.email AS email,
       p.slack_user_id AS slack_user_id, s.ends_at AS shift_ends_at,
       any(x IN coalesce(o.sources, []) WHERE x STARTS WITH 'world:') AS by_world_file
