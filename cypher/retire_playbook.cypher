// A person retires a playbook (DELETE /api/v1/playbooks/{id}): it is kept with why, when and by
// whom, and never recalled again (recall matches status 'active' only). Retiring twice keeps
// the first reason. Null when no such playbook.
MATCH (pb:Playbook {id: $id})
WITH pb, pb.status AS was
SET pb.status = 'retired', pb.retired_at = coalesce(pb.retired_at, timestamp()),
    pb.retired_reason = coalesce(pb.retired_reason, $reason),
    pb.retired_by = coalesce(pb.retired_by, $by)
RETURN pb.id AS id, pb.status AS status, was, pb.retired_reason AS reason, pb.retired_by AS by,
       pb.retired_at AS retired_at
