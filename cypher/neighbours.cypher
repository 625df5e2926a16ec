// Direct dependency neighbours of a component, both ways, with the edge's type and attributes:
// direction 'out' = the component depends on the neighbour, 'in' = the neighbour depends on it.
MATCH (c:Component {name: $component})-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(n:Component)
RETURN n.name AS name, n.kind AS kind, coalesce(n.client, false) AS client, type(r) AS edge,
       'out' AS direction, r.purpose AS purpose, r.protocol AS protocol, r.propagation AS propagation,
       r.basis AS basis
UNION ALL
MATCH (n:Component)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(c:Component {name: $component})
RETURN n.name AS name, n.kind AS kind, coalesce(n.client, false) AS client, type(r) AS edge,
       'in' AS direction, r.purpose AS purpose, r.protocol AS protocol, r.propagation AS propagation,
       r.basis AS basis
