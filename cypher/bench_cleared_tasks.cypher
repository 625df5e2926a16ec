// Tests and benchmarks only: how many `notify_cleared` tasks the graph holds.
MATCH (t:Task {kind: 'notify_cleared'})
RETURN count(t) AS n
