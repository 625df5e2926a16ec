// Each team's stored on-call definition (JSON: a rotation or an iCalendar source) and members,
// for the scheduled expansion of shifts (gateway/world/oncall.py).
MATCH (tm:Team)
OPTIONAL MATCH (p:Person)-[:MEMBER_OF]->(tm)
RETURN tm.name AS team, tm.oncall_json AS oncall_json,
       collect(CASE WHEN p IS NULL THEN null ELSE {name: p.name, email: p.email} END) AS members
ORDER BY team
