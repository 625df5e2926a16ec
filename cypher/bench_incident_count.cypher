// bench/memory.py only: how many incidents the graph holds (the rest are archived).
MATCH (i:Incident)
RETURN count(i) AS incidents
