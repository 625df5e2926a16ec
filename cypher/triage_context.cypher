// What triage reads before it writes a delivery, in one round trip: `topology`, the graph's
// topology version (`(:Topology)`, changed by every query that changes a component or a
// dependency edge: _topology_changed.cypher); `matched`, the components named by any of
// $candidates (by name or alias, as match_components.cypher), one row per candidate and
// component, {candidate, name, aliases};
// `links`, the components linked to each matched one (`origin`) along a business dependency
// path within $hops (0-6), either way: those it depends on ('down', itself at 0 hops) and those
// that depend on it ('up'), one row per path written caller -> callee (triage keeps the shortest
// per component, and only the origins it picks). A shared neighbour is not a link: two callers
// of one database are not linked. Telemetry, config and retired edges are skipped. `known`:
// which of $keys are stored alerts already (a resend, a resolve: written in batches).
// `grouped`: the components of open incidents that hold one of $group_keys (an Alertmanager
// group an earlier delivery started), walked like the matched ones, so a later alert of the
// group is linked to them through a shared dependency as if it had come in the same delivery.
// `open`: the open incidents opened within [$lo, $hi] (ms), ordered by id, each as [id, opened_at,
// components, group_keys, root cause or ''], `refired`: which of $fingerprints some stored
// alert has (an earlier episode: flapping), and `episodes`: those alerts' keys (triage passes
// no $keys with $fingerprints: a stored key is among them): what `Triage.fast` decides a
// storm's new alerts from (an empty range and lists when it will not try).
// With $topology still the graph's version, only $fresh of $candidates are matched, and the
// components in $walked are not walked: the caller has their rows (agents/triage/link_cache.py).
// Read only; every part is a subquery that returns one row (collect), so an empty part is [].
// Lookups go through the Component name and aliases indexes and the walks start from the
// matched components: a scan of every component cost 45 ms per delivery in a 1,000-component
// world (tests/test_query_plans.py keeps it so).
// @include _triage_read
RETURN topology, matched, grouped, links, known, open, refired, episodes
