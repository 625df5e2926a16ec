// Every team with its on-call shifts overlapping [$from, $to) (ms since the epoch, UTC) and
// who is on call in each, and its escalation policy (`policy`: the stored JSON, '' or null for
// none): coverage checks and `blast-radius oncall`.
MATCH (tm:Team)
OPTIONAL MATCH (s:OnCallShift)-[:FOR_TEAM]->(tm) WHERE s.ends_at > $from AND s.starts_at < $to
OPTIONAL MATCH (s)-[:ON_CALL]->(p:Person)
RETURN tm.name AS team, coalesce(tm.is_default, false) AS is_default,
       tm.escalation_policy_json AS policy,
       collect(CASE WHEN s IS NULL THEN null ELSE [s.starts_at, s.ends_at, p.name] END) AS shifts
ORDER BY team
