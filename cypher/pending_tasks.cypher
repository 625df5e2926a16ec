// How many tasks are not finished yet (open, claimed, or paused until a model is back), for
// burst mode and the demo.
MATCH (t:Task) WHERE t.status IN ['open', 'claimed', 'paused']
RETURN count(t) AS pending
