// Create or update typed dependency edges, caller -> callee (dependent -> dependency).
UNWIND $edges AS e
MATCH (a:Component {name: e.from}), (b:Component {name: e.to})
FOREACH (_ IN CASE WHEN e.type = 'CALLS' THEN [1] ELSE [] END |
  MERGE (a)-[r:CALLS]->(b) SET r.protocol = e.protocol, r.purpose = e.purpose, r.propagation = e.propagation)
FOREACH (_ IN CASE WHEN e.type = 'READS_WRITES' THEN [1] ELSE [] END |
  MERGE (a)-[r:READS_WRITES]->(b) SET r.protocol = e.protocol, r.purpose = e.purpose, r.propagation = e.propagation)
FOREACH (_ IN CASE WHEN e.type = 'PUBLISHES' THEN [1] ELSE [] END |
  MERGE (a)-[r:PUBLISHES]->(b) SET r.protocol = e.protocol, r.purpose = e.purpose, r.propagation = e.propagation)
FOREACH (_ IN CASE WHEN e.type = 'CONSUMES' THEN [1] ELSE [] END |
  MERGE (a)-[r:CONSUMES]->(b) SET r.protocol = e.protocol, r.purpose = e.purpose, r.propagation = e.propagation)
FOREACH (_ IN CASE WHEN e.type = 'HOSTED_ON' THEN [1] ELSE [] END |
  MERGE (a)-[r:HOSTED_ON]->(b) SET r.protocol = e.protocol, r.purpose = e.purpose, r.propagation = e.propagation)
RETURN count(e) AS edges
