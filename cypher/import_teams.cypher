// Create or update teams and what they own. A value a source does not give (null) keeps the
// stored one: `is_default` is only set by a source that names a default team, `oncall_json`
// (the rotation or calendar on-call shifts are expanded from) only by one that gives on-call.
UNWIND $teams AS t
MERGE (tm:Team {name: t.name})
SET tm.slack_channel = coalesce(t.slack_channel, tm.slack_channel),
    tm.escalation = coalesce(t.escalation, tm.escalation),
    tm.is_default = coalesce(t.is_default, tm.is_default, false),
    tm.oncall_json = coalesce(t.oncall_json, tm.oncall_json)
WITH tm, t
UNWIND t.owns AS owned
MATCH (c:Component {name: owned})
MERGE (tm)-[:OWNS]->(c)
RETURN count(DISTINCT tm) AS teams
