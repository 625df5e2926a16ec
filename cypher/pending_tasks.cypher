// How many tasks are not finished yet (open or claimed), for burst mode and the demo.
MATCH (t:Task) WHERE t.status IN ['open', 'claimed']
RETURN count(t) AS pending
