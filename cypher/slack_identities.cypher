// Every team's Slack channel and its members' Slack identities (email, user id), for `doctor`:
// one row per team, `people` a list of maps (empty for a team without members).
MATCH (t:Team)
OPTIONAL MATCH (p:Person)-[:MEMBER_OF]->(t)
RETURN t.name AS team, t.slack_channel AS channel,
       collect(CASE WHEN p IS NULL THEN null ELSE {name: p.name, email: p.email,
               slack_user_id: p.slack_user_id} END) AS people
ORDER BY team
