/*
 * cluster.c - the placement model's nodes and the resource filter.
 * Invariants: 0 <= cpu_left <= cpu_cap, 0 <= mem_left <= mem_cap, each
 * gpu_left in 0..1000, ngpus <= GF_CNODE_MAX_GPUS, model < nmodels; a
 * held GPU (held_gpus bit g, g < ngpus) has gpu_left 0 and its free share
 * in held[i][g] (0..1000); an unheld one has held[i][g] 0.  Take and give
 * move a held GPU's share in held[i][g], so holding and giving back
 * commute with work coming and going.
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/cluster.h>
#include <gpufleet/err.h>
#include <gpufleet/gpu_topo.h>

#include "util/fmt.h"
#include "util/mem.h"

_Static_assert(sizeof(struct gf_cnode) == 120,
	       "a gf_cnode stays 120 bytes: the engine's scans stride it");

void gf_cluster_init(struct gf_cluster *c)
{
	memset(c, 0, sizeof(*c));
}

void gf_cluster_changed(struct gf_cluster *c, int i)
{
	c->changed[c->nchanged % GF_CLUSTER_LOG] = i;
	c->nchanged++;
}

void gf_cluster_release(struct gf_cluster *c)
{
	gf_free(c->nodes);
	gf_free(c->names);
	gf_free(c->held);
	gf_free(c->topos);
	c->n = c->cap = c->ntopos = 0;
}

int gf_cluster_find_model(const struct gf_cluster *c, const char *name)
{
	for (int i = 0; i < c->nmodels; i++)
		if (strcmp(c->models[i], name) == 0)
			return i;
	return -1;
}

int gf_cluster_model(struct gf_cluster *c, const char *name)
{
	int i = gf_cluster_find_model(c, name);
	if (i >= 0)
		return i;
	if (c->nmodels >= GF_MAX_MODELS || strlen(name) >= GF_MODEL_NAME_MAX)
		return GF_ETOOBIG;
	gf_note(c->models[c->nmodels], GF_MODEL_NAME_MAX, "%s", name);
	return c->nmodels++;
}

/* Node n empty with this shape; rank, flags and version kept. */
static void cnode_shape(struct gf_cnode *n, int32_t cpu, int64_t mem, int ngpus,
			int model)
{
	uint32_t rank = n->rank, version = n->version;
	uint8_t flags = n->flags;
	memset(n, 0, sizeof(*n));
	n->rank = rank;
	n->version = version + 1;
	n->flags = flags;
	n->cpu_cap = n->cpu_left = cpu;
	n->mem_cap = n->mem_left = mem;
	n->ngpus = (uint8_t)ngpus;
	n->model = (uint8_t)model;
	for (int i = 0; i < ngpus; i++)
		n->gpu_left[i] = GF_GPU_MILLI;
	gf_cnode_sync(n);
}

static bool shape_ok(int32_t cpu, int64_t mem, int ngpus, int model)
{
	return ngpus >= 0 && ngpus <= GF_CNODE_MAX_GPUS && cpu >= 0 &&
	       mem >= 0 && model >= 0 && model < GF_MAX_MODELS;
}

int gf_cluster_add(struct gf_cluster *c, const char *name, int32_t cpu,
		   int64_t mem, int ngpus, int model)
{
	if (!shape_ok(cpu, mem, ngpus, model))
		return GF_EINVAL;
	if (c->n >= GF_MAX_CNODES)
		return GF_ETOOBIG;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->nodes = gf_reallocarray(c->nodes, (size_t)c->cap,
					   sizeof(*c->nodes));
		c->names = gf_reallocarray(c->names, (size_t)c->cap,
					   sizeof(*c->names));
		c->held = gf_reallocarray(c->held, (size_t)c->cap,
					  sizeof(*c->held));
	}
	memset(c->held[c->n], 0, sizeof(c->held[0]));
	struct gf_cnode *n = &c->nodes[c->n];
	memset(n, 0, sizeof(*n));
	n->rank = (uint32_t)c->n;
	cnode_shape(n, cpu, mem, ngpus, model);
	n->version = 0;
	gf_note(c->names[c->n], GF_NODE_NAME_MAX, "%s", name);
	c->gpu_milli_total += (int64_t)ngpus * GF_GPU_MILLI;
	gf_cluster_changed(c, c->n);
	return c->n++;
}

int gf_cluster_reshape(struct gf_cluster *c, int i, int32_t cpu, int64_t mem,
		       int ngpus, int model)
{
	if (i < 0 || i >= c->n || !shape_ok(cpu, mem, ngpus, model))
		return GF_EINVAL;
	struct gf_cnode *n = &c->nodes[i];
	c->gpu_milli_total += (int64_t)(ngpus - n->ngpus) * GF_GPU_MILLI;
	cnode_shape(n, cpu, mem, ngpus, model);
	memset(c->held[i], 0, sizeof(c->held[i]));
	gf_cluster_changed(c, i);
	return 0;
}

int gf_cluster_set_topo(struct gf_cluster *c, int i,
			const struct gf_gpu_topo *t)
{
	if (i < 0 || i >= c->n || (t && t->ngpus != c->nodes[i].ngpus))
		return GF_EINVAL;
	if (t == NULL) {
		c->nodes[i].topo = 0;
		c->nodes[i].version++;
		gf_cluster_changed(c, i);
		return 0;
	}
	int k = 0;
	while (k < c->ntopos && memcmp(&c->topos[k], t, sizeof(*t)) != 0)
		k++;
	if (k == c->ntopos) {
		if (c->ntopos >= UINT16_MAX - 1)
			return GF_ETOOBIG;
		c->topos = gf_reallocarray(c->topos, (size_t)c->ntopos + 1,
					   sizeof(*c->topos));
		c->topos[c->ntopos++] = *t;
	}
	c->nodes[i].topo = (uint16_t)(k + 1);
	c->nodes[i].version++;
	gf_cluster_changed(c, i);
	return 0;
}

void gf_cluster_reset(struct gf_cluster *c)
{
	c->nchanged += GF_CLUSTER_LOG + 1; /* every node: past the log */
	for (int i = 0; i < c->n; i++) {
		struct gf_cnode *n = &c->nodes[i];
		n->cpu_left = n->cpu_cap;
		n->mem_left = n->mem_cap;
		n->tags = 0;
		n->gpu_pods = 0;
		n->flags = 0;
		n->held_gpus = 0;
		memset(n->tag_pods, 0, sizeof(n->tag_pods));
		memset(c->held[i], 0, sizeof(c->held[i]));
		n->version++;
		for (int g = 0; g < n->ngpus; g++)
			n->gpu_left[g] = GF_GPU_MILLI;
		gf_cnode_sync(n);
	}
}

void gf_cnode_sync(struct gf_cnode *n)
{
	n->idle = 0;
	n->max_left = 0;
	n->nfree = 0;
	for (int g = 0; g < n->ngpus; g++) {
		n->idle += n->gpu_left[g];
		if (n->gpu_left[g] > n->max_left)
			n->max_left = n->gpu_left[g];
		n->nfree =
			(uint8_t)(n->nfree + (n->gpu_left[g] == GF_GPU_MILLI));
	}
}

int32_t gf_cluster_held(const struct gf_cluster *c, int i)
{
	int32_t sum = 0;
	for (uint32_t m = c->nodes[i].held_gpus; m; m &= m - 1)
		sum += c->held[i][__builtin_ctz(m)];
	return sum;
}

void gf_cluster_hold(struct gf_cluster *c, int i, int g, bool hold)
{
	struct gf_cnode *n = &c->nodes[i];
	uint16_t bit = (uint16_t)(1u << g);
	if (hold == ((n->held_gpus & bit) != 0))
		return;
	if (hold) {
		c->held[i][g] = n->gpu_left[g];
		n->gpu_left[g] = 0;
		n->held_gpus |= bit;
	} else {
		n->gpu_left[g] = c->held[i][g];
		c->held[i][g] = 0;
		n->held_gpus &= (uint16_t)~bit;
	}
	gf_cnode_sync(n);
	n->version++;
	gf_cluster_changed(c, i);
}

int gf_cnode_gpus_with(const struct gf_cnode *n, int milli)
{
	int k = 0;
	for (int g = 0; g < n->ngpus; g++)
		k += n->gpu_left[g] >= milli;
	return k;
}

uint32_t gf_cnode_free_mask(const struct gf_cnode *n)
{
	uint32_t m = 0;
	for (int g = 0; g < n->ngpus; g++)
		if (n->gpu_left[g] == GF_GPU_MILLI)
			m |= UINT32_C(1) << g;
	return m;
}

/* GpuClustering's tag: "share" (0) or "<k>-gpu" (k, at most 16). */
static int tag_of(const struct gf_req *r)
{
	return r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI ? 0 : r->ngpus;
}

/* The share of GPU g that a take or give moves: gpu_left, or on a held
 * GPU what the node withholds (held, NULL for a copy: nothing). */
static int16_t *share_of(struct gf_cnode *n, int16_t *held, int g)
{
	if (!(n->held_gpus >> g & 1))
		return &n->gpu_left[g];
	return held ? &held[g] : NULL;
}

static void take(struct gf_cnode *n, int16_t *held, const struct gf_req *r,
		 const int *gpus)
{
	n->cpu_left -= r->cpu;
	n->mem_left -= r->mem;
	for (int i = 0; i < r->ngpus; i++) {
		int16_t *left = share_of(n, held, gpus[i]);
		if (left)
			*left = (int16_t)(*left - r->gpu_milli);
	}
	if (r->ngpus > 0) {
		int tag = tag_of(r);
		n->tag_pods[tag]++;
		n->tags |= UINT32_C(1) << tag;
		n->gpu_pods++;
	}
	gf_cnode_sync(n);
	n->version++;
}

void gf_cnode_take(struct gf_cnode *n, const struct gf_req *r, const int *gpus)
{
	take(n, NULL, r, gpus);
}

void gf_cluster_take(struct gf_cluster *c, int i, const struct gf_req *r,
		     const int *gpus)
{
	take(&c->nodes[i], c->held[i], r, gpus);
	gf_cluster_changed(c, i);
}

static int give(struct gf_cnode *n, int16_t *held, const struct gf_req *r,
		const int *gpus)
{
	if (r->ngpus > n->ngpus || n->cpu_left + (int64_t)r->cpu > n->cpu_cap ||
	    n->mem_left + r->mem > n->mem_cap ||
	    (r->ngpus > 0 && (n->gpu_pods == 0 || n->tag_pods[tag_of(r)] == 0)))
		return GF_EINVAL;
	for (int i = 0; i < r->ngpus; i++) {
		if (gpus[i] < 0 || gpus[i] >= n->ngpus)
			return GF_EINVAL;
		const int16_t *left = share_of(n, held, gpus[i]);
		if (left == NULL)
			continue;
		int back = *left + r->gpu_milli;
		for (int j = 0; j < i; j++) /* a GPU named twice */
			if (gpus[j] == gpus[i])
				back += r->gpu_milli;
		if (back > GF_GPU_MILLI)
			return GF_EINVAL;
	}
	n->cpu_left += r->cpu;
	n->mem_left += r->mem;
	for (int i = 0; i < r->ngpus; i++) {
		int16_t *left = share_of(n, held, gpus[i]);
		if (left)
			*left = (int16_t)(*left + r->gpu_milli);
	}
	if (r->ngpus > 0) {
		int tag = tag_of(r);
		if (--n->tag_pods[tag] == 0)
			n->tags &= ~(UINT32_C(1) << tag);
		n->gpu_pods--;
	}
	gf_cnode_sync(n);
	n->version++;
	return 0;
}

int gf_cnode_give(struct gf_cnode *n, const struct gf_req *r, const int *gpus)
{
	return give(n, NULL, r, gpus);
}

int gf_cluster_give(struct gf_cluster *c, int i, const struct gf_req *r,
		    const int *gpus)
{
	int rc = give(&c->nodes[i], c->held[i], r, gpus);
	if (rc == 0)
		gf_cluster_changed(c, i);
	return rc;
}

/* A held GPU shows 0 and keeps its share in held[g]; others hold 0. */
static int check_held(const struct gf_cluster *c, int i, char *msg,
		      unsigned size)
{
	const struct gf_cnode *n = &c->nodes[i];
	if (n->held_gpus >> n->ngpus) {
		gf_note(msg, size, "node %s: a GPU it lacks is held",
			c->names[i]);
		return GF_EINVAL;
	}
	for (int g = 0; g < GF_CNODE_MAX_GPUS; g++) {
		bool held = n->held_gpus >> g & 1;
		int16_t w = c->held[i][g];
		if (held ? n->gpu_left[g] != 0 || w < 0 || w > GF_GPU_MILLI
			 : w != 0) {
			gf_note(msg, size,
				"node %s: GPU %d: %s, free %d, withheld %d",
				c->names[i], g, held ? "held" : "not held",
				n->gpu_left[g], w);
			return GF_EINVAL;
		}
	}
	return 0;
}

int gf_cluster_check(const struct gf_cluster *c, char *msg, unsigned size)
{
	for (int i = 0; i < c->n; i++) {
		const struct gf_cnode *n = &c->nodes[i];
		if (n->cpu_left < 0 || n->cpu_left > n->cpu_cap ||
		    n->mem_left < 0 || n->mem_left > n->mem_cap) {
			gf_note(msg, size,
				"node %s: CPU or memory out of range",
				c->names[i]);
			return GF_EINVAL;
		}
		if (n->model >= c->nmodels && n->ngpus > 0) {
			gf_note(msg, size, "node %s: unknown model",
				c->names[i]);
			return GF_EINVAL;
		}
		uint32_t tags = 0;
		int pods = 0;
		for (int t = 0; t <= GF_CNODE_MAX_GPUS; t++) {
			pods += n->tag_pods[t];
			if (n->tag_pods[t])
				tags |= UINT32_C(1) << t;
		}
		if (tags != n->tags || pods != n->gpu_pods) {
			gf_note(msg, size, "node %s: GPU pod tags out of date",
				c->names[i]);
			return GF_EINVAL;
		}
		struct gf_cnode k = *n;
		gf_cnode_sync(&k);
		if (k.idle != n->idle || k.nfree != n->nfree ||
		    k.max_left != n->max_left) {
			gf_note(msg, size, "node %s: GPU totals out of date",
				c->names[i]);
			return GF_EINVAL;
		}
		for (int g = 0; g < n->ngpus; g++)
			if (n->gpu_left[g] < 0 ||
			    n->gpu_left[g] > GF_GPU_MILLI) {
				gf_note(msg, size,
					"node %s: GPU %d share %d out of "
					"range",
					c->names[i], g, n->gpu_left[g]);
				return GF_EINVAL;
			}
		int rc = check_held(c, i, msg, size);
		if (rc)
			return rc;
	}
	if (size)
		msg[0] = '\0';
	return 0;
}
