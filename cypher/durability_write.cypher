// bench/durability.py: one answered write per call, keyed as an accepted alert is (its own graph).
CREATE (:Alert {key: $key})
