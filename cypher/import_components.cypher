// Create or update components of the world (topology import); never deletes.
UNWIND $components AS row
MERGE (c:Component {name: row.name})
SET c.kind = row.kind, c.tech = row.tech, c.client = row.client, c.aliases = row.aliases,
    c.criticality = row.criticality
RETURN count(c) AS components
