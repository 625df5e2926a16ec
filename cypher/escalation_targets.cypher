// Whom one escalation level reaches now (database clock): each named person ($people) with
// their Slack id and email, and each named team's ($teams) channel and person on call now (null
// when nobody is). Unknown names give no row. Read only; lookups by the unique name indexes.
CALL {
  UNWIND $people AS name
  OPTIONAL MATCH (p:Person {name: name})
  RETURN collect(CASE WHEN p IS NULL THEN null ELSE {
       person: p.name, email: p.email, slack_user_id: p.slack_user_id} END) AS people
}
CALL {
  UNWIND $teams AS name
  OPTIONAL MATCH (tm:Team {name: name})
  OPTIONAL MATCH (s:OnCallShift)-[:FOR_TEAM]->(tm)
    WHERE s.starts_at <= timestamp() AND timestamp() < s.ends_at
  OPTIONAL MATCH (s)-[:ON_CALL]->(p:Person)
  RETURN collect(CASE WHEN tm IS NULL THEN null ELSE {
       team: tm.name, channel: tm.slack_channel, person: p.name, email: p.email,
       slack_user_id: p.slack_user_id} END) AS teams
}
RETURN people, teams
