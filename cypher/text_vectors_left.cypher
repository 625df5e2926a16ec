// Upgrade (TenantGraph.ensure_schema): up to $limit incidents that still hold their text vector
// themselves (`Incident.text_vec`, from before `IncidentText`), for `move_text_vectors`. A read:
// the scan of every incident holds no write.
MATCH (i:Incident)
WHERE i.text_vec IS NOT NULL
RETURN i.id AS id
LIMIT $limit
