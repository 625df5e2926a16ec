// Replace a team's on-call shifts with the given ones (times in ms since the epoch, UTC).
MATCH (tm:Team {name: $team})
OPTIONAL MATCH (old:OnCallShift)-[:FOR_TEAM]->(tm)
DETACH DELETE old
WITH DISTINCT tm
UNWIND $shifts AS s
MATCH (p:Person {name: s.person})
CREATE (sh:OnCallShift {team: $team, starts_at: s.starts_at, ends_at: s.ends_at})
CREATE (sh)-[:FOR_TEAM]->(tm), (sh)-[:ON_CALL]->(p)
RETURN count(sh) AS shifts
