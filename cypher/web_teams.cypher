// Every team with its channel, escalation note and policy (`policy`: the stored JSON, '' or
// null for none), whether it is the root route, its members, and its
// on-call shifts that have not ended by $now (ms UTC) and start before $until, oldest first.
MATCH (t:Team)
OPTIONAL MATCH (p:Person)-[:MEMBER_OF]->(t)
WITH t, collect(p.name) AS members
OPTIONAL MATCH (s:OnCallShift)-[:FOR_TEAM]->(t)
  WHERE s.ends_at > $now AND s.starts_at < $until
OPTIONAL MATCH (s)-[:ON_CALL]->(who:Person)
WITH t, members, s, who ORDER BY s.starts_at
RETURN t.name AS name, t.slack_channel AS channel, t.escalation AS escalation,
       t.escalation_policy_json AS policy, t.is_default AS is_default, members,
       collect(CASE WHEN s IS NULL THEN NULL
               ELSE {person: who.name, starts_at: s.starts_at, ends_at: s.ends_at} END) AS shifts
ORDER BY name
