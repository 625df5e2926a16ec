// How many playbooks are active (world-file, API or learned; not retired or superseded):
// printed with what the world holds after `topology import` and `topology discover`.
OPTIONAL MATCH (pb:Playbook) WHERE pb.status = 'active'
RETURN count(pb) AS playbooks
