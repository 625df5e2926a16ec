// Sign out: delete the web session, so its cookie opens nothing from now on, on every gateway.
MATCH (s:WebSession {id: $id})
DELETE s
RETURN 1 AS closed
