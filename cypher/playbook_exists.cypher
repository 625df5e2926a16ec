// Whether a playbook with this id is stored (read only): tells "the id names another playbook"
// from "unknown component" when plant_playbook matched no row.
MATCH (pb:Playbook {id: $id})
RETURN pb.id AS id
