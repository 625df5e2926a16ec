// Team -OWNS-> Component for each row {team, component, sources} (a world file's or a
// catalog's `owns`, CODEOWNERS over component paths). Provenance: the edge's `sources` gains
// every source that said it; drop_owners removes a source and, with none left, the edge.
UNWIND $owners AS o
MATCH (tm:Team {name: o.team}), (c:Component {name: o.component})
MERGE (tm)-[r:OWNS]->(c)
SET r.sources = coalesce(r.sources, []) + [s IN o.sources WHERE NOT s IN coalesce(r.sources, [])]
RETURN count(r) AS owned
