"""Operations: starting and supervising the database, gateway and workers, background upkeep,
archive, systemd readiness.
"""
