// Make $team own the given components (ownership from CODEOWNERS and component paths).
MATCH (tm:Team {name: $team})
UNWIND $components AS name
MATCH (c:Component {name: name})
MERGE (tm)-[:OWNS]->(c)
RETURN count(c) AS owned
