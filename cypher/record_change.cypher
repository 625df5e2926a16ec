// Record a change (deploy or merged PR) to a component; the id makes a re-post harmless.
MATCH (c:Component {name: $component})
MERGE (ch:Change {id: $id})
  ON CREATE SET ch.kind = $kind, ch.ref = $ref, ch.at = $at, ch.author = $author
MERGE (ch)-[:MODIFIES]->(c)
RETURN ch.id AS id
