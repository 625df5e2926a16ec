// tests/triage/test_triage_lone.py only: every Alert with all its properties, the edge it
// joined its incident by, the component it is ON, its incident's properties and the properties
// of that incident's tasks (kind, then id order); null where there is none.
MATCH (a:Alert)
OPTIONAL MATCH (i:Incident)-[h:HAS_ALERT]->(a)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
OPTIONAL MATCH (t:Task)-[:FOR]->(i)
WITH a, h, c, i, t ORDER BY t.kind, t.id
RETURN properties(a) AS alert, CASE WHEN h IS NULL THEN null ELSE properties(h) END AS joined,
       c.name AS component, CASE WHEN i IS NULL THEN null ELSE properties(i) END AS incident,
       collect(properties(t)) AS tasks
