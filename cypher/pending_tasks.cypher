// How many tasks are not finished yet (open, claimed, or paused: until a model is back, or a
// held page's hold is over), for burst mode and the demo.
MATCH (t:Task) WHERE t.status IN ['open', 'claimed', 'paused']
RETURN count(t) AS pending
