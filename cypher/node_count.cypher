// How many nodes the graph holds (FalkorDB answers this from its node count, without a scan).
MATCH (n)
RETURN count(n) AS nodes
