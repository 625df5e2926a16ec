// Every component's owning teams (an import compares CODEOWNERS against them).
MATCH (tm:Team)-[:OWNS]->(c:Component)
RETURN c.name AS component, tm.name AS team
