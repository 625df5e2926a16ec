// Record a change (deploy or merged PR) to a component; the id makes a re-post harmless. One
// change may modify several components (a pull request touching several: gateway/world/
// pulls.py). An id that already names another change (other kind, ref or time) matches no
// row; the caller says why (422).
MATCH (c:Component {name: $component})
OPTIONAL MATCH (old:Change {id: $id})
WITH c, old
WHERE old IS NULL OR (old.kind = $kind AND old.ref = $ref AND old.at = $at)
MERGE (ch:Change {id: $id})
  ON CREATE SET ch.kind = $kind, ch.ref = $ref, ch.at = $at, ch.author = $author
MERGE (ch)-[:MODIFIES]->(c)
RETURN ch.id AS id
