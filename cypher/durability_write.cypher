// bench/durability.py: one acknowledged write per call (writer k's n-th), as an accepted alert is.
CREATE (:DurabilityProbe {writer: $writer, n: $n})
