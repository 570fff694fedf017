/*
 * sched_nodes.c - nodes that come, change and get sick while the engine
 * runs: a node added (the per-node arrays and the class-major score
 * cache grow), a node given a new shape once empty, a GPU held out of
 * placement and given back, a node cordoned and uncordoned.
 *
 * Why grow rather than rebuild: a controller whose agents register one
 * by one adds thousands of nodes to a live engine; rebuilding it and
 * committing every running placement again would cost O(nodes) per add,
 * O(nodes^2) over a registration storm.  Growing is amortized O(classes)
 * per node: the arrays double, and the cache, laid out [class][ncap], is
 * laid out again only when ncap doubles.
 *
 * Holding and cordoning are exact and reversible while work comes and
 * goes (cluster.h says how a held GPU's share is withheld): a hold moves
 * the GPU's free share out of the engine's idle total into held_milli
 * and back, leaving what is given out (alloc_milli) alone; a cordoned
 * node moves to a bucket no scan visits, so the filter never sees it,
 * and back to the bucket its state gives.  Placements keep going through
 * gf_sched_commit (a restart restoring what ran there) and
 * gf_sched_unplace.  Invariants: those of sched.c, which
 * gf_sched_check verifies, for every node after every call here.
 */
#include <string.h>

#include <gpufleet/err.h>

#include "core/place/sched_impl.h"
#include "util/mem.h"

/* Room for n nodes in the per-node arrays and the cache. */
static void reserve(struct gf_sched *s, int n)
{
	if (n <= s->ncap)
		return;
	int cap = s->ncap;
	while (cap < n)
		cap *= 2;
	size_t old = (size_t)s->ncap, nc = (size_t)cap;
	s->frag = gf_reallocarray(s->frag, nc, sizeof(*s->frag));
	s->scratch = gf_reallocarray(s->scratch, nc, sizeof(*s->scratch));
	s->bucket_of = gf_reallocarray(s->bucket_of, nc, sizeof(*s->bucket_of));
	s->pos = gf_reallocarray(s->pos, nc, sizeof(*s->pos));
	gf__la_reserve(s, cap);
	if (s->cache) {
		size_t k = (size_t)s->cache_classes;
		if (k * nc > GF_SCHED_CACHE_MAX) {
			/* too large now: scores are computed afresh
			 * (results unchanged); new shapes bypass it */
			gf_free(s->cache);
			gf_free(s->class_req);
			s->cache_classes = 0;
		} else {
			struct gf_score_slot *c = gf_calloc(k * nc, sizeof(*c));
			for (size_t cls = 0; cls < k; cls++)
				memcpy(c + cls * nc, s->cache + cls * old,
				       old * sizeof(*c));
			gf_free(s->cache);
			s->cache = c;
		}
	}
	s->ncap = cap;
}

/* Node i's cache slots: empty (its index may be new, its state too). */
static void slots_clear(struct gf_sched *s, int i)
{
	for (int k = 0; s->cache && k < s->cache_classes; k++)
		s->cache[(size_t)k * (size_t)s->ncap + (size_t)i].version = 0;
}

int gf_sched_add_node(struct gf_sched *s, const char *name, int32_t cpu,
		      int64_t mem, int ngpus, int model)
{
	int i = gf_cluster_add(s->c, name, cpu, mem, ngpus, model);
	if (i < 0)
		return i;
	reserve(s, s->c->n);
	const struct gf_cnode *n = &s->c->nodes[i];
	s->frag[i] = s->ntyp ? gf_frag_node(s->typ, s->ntyp, n) : 0;
	s->frag_q += gf__frag_fixed(s->frag[i]);
	s->idle_milli += gf_cnode_gpu_idle(n);
	gf__la_node_in(s, i);
	slots_clear(s, i);
	gf__bucket_put(s, i);
	gf__sched_debug_check(s, i);
	return i;
}

int gf_sched_reshape(struct gf_sched *s, int node, int32_t cpu, int64_t mem,
		     int ngpus, int model)
{
	if (node < 0 || node >= s->c->n)
		return GF_EINVAL;
	struct gf_cnode *n = &s->c->nodes[node];
	if (n->cpu_left != n->cpu_cap || n->mem_left != n->mem_cap ||
	    n->gpu_pods != 0)
		return GF_ECONFLICT;
	int64_t idle = gf_cnode_gpu_idle(n), held = gf_cluster_held(s->c, node);
	int64_t cap = (int64_t)n->ngpus * GF_GPU_MILLI;
	gf__la_node_out(s, node);
	int rc = gf_cluster_reshape(s->c, node, cpu, mem, ngpus, model);
	gf__la_node_in(s, node); /* its new group, or its old one back */
	if (rc)
		return rc;
	s->idle_milli += gf_cnode_gpu_idle(n) - idle;
	s->held_milli -= held;
	s->alloc_milli -= cap - idle - held; /* 0: it was empty */
	slots_clear(s, node);
	gf__sched_changed(s, node);
	gf__sched_debug_check(s, node);
	return 0;
}

int gf_sched_hold_gpu(struct gf_sched *s, int node, int gpu, bool hold)
{
	if (node < 0 || node >= s->c->n || gpu < 0 ||
	    gpu >= s->c->nodes[node].ngpus)
		return GF_EINVAL;
	struct gf_cnode *n = &s->c->nodes[node];
	if (hold == (bool)(n->held_gpus >> gpu & 1))
		return 0;
	int32_t idle = gf_cnode_gpu_idle(n), held = gf_cluster_held(s->c, node);
	gf_cluster_hold(s->c, node, gpu, hold);
	gf__sched_account(s, node, idle, held);
	gf__sched_changed(s, node);
	gf__sched_debug_check(s, node);
	return 0;
}

int gf_sched_cordon(struct gf_sched *s, int node, bool cordon)
{
	if (node < 0 || node >= s->c->n)
		return GF_EINVAL;
	struct gf_cnode *n = &s->c->nodes[node];
	if (cordon)
		n->flags |= GF_CNODE_CORDONED;
	else
		n->flags &= (uint8_t)~GF_CNODE_CORDONED;
	gf_cluster_changed(s->c, node);
	gf__bucket_move(s, node);
	gf__sched_debug_check(s, node);
	return 0;
}

bool gf_sched_is_cordoned(const struct gf_sched *s, int node)
{
	return node >= 0 && node < s->c->n &&
	       (s->c->nodes[node].flags & GF_CNODE_CORDONED);
}
