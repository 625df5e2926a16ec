// Retire the playbooks a world file listed before and no longer lists ($keep: the ids it lists
// now): kept with the reason ($reason starts with "no longer in "), never recalled again,
// until the file lists them again (import_playbooks.cypher). Returns each one retired now.
MATCH (pb:Playbook {world_source: $source})
WHERE NOT pb.id IN $keep AND pb.status <> 'retired'
SET pb.status = 'retired', pb.retired_at = $now, pb.retired_reason = $reason,
    pb.retired_by = null
RETURN pb.id AS id
