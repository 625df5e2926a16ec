// bench/durability.py: the key of every write the server holds after its restart.
MATCH (a:Alert)
RETURN a.key AS key
