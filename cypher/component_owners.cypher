// Every component's owning teams, and the sources that said each ownership (null: imported
// before sources were kept); an import compares CODEOWNERS against them.
MATCH (tm:Team)-[r:OWNS]->(c:Component)
RETURN c.name AS component, tm.name AS team, r.sources AS sources
