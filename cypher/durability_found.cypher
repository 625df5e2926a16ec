// bench/durability.py: every write the server holds after its restart.
MATCH (p:DurabilityProbe)
RETURN p.writer AS writer, p.n AS n
