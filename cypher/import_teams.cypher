// Create or update teams and what they own.
UNWIND $teams AS t
MERGE (tm:Team {name: t.name})
SET tm.slack_channel = t.slack_channel, tm.escalation = t.escalation, tm.is_default = t.is_default
WITH tm, t
UNWIND t.owns AS owned
MATCH (c:Component {name: owned})
MERGE (tm)-[:OWNS]->(c)
RETURN count(DISTINCT tm) AS teams
