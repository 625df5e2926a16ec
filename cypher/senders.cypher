// Who sends each of $components its requests or messages: callers along business CALLS and
// READS_WRITES edges, and the producers of the topics it consumes. A component that receives
// no requests is starved by these.
MATCH (u:Component)-[r:CALLS|READS_WRITES]->(v:Component)
WHERE v.name IN $components AND r.purpose = 'business' AND r.retired_at IS NULL
RETURN v.name AS component, u.name AS sender
UNION
MATCH (u:Component)-[p:PUBLISHES]->(:Component)<-[c:CONSUMES]-(v:Component)
WHERE v.name IN $components AND p.purpose = 'business' AND c.purpose = 'business'
  AND p.retired_at IS NULL AND c.retired_at IS NULL
RETURN v.name AS component, u.name AS sender
