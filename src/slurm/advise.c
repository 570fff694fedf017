/*
 * advise.c - fragmentation and placement advice for a Slurm snapshot
 * through the placement engine (advise.h says what is computed).
 *
 * Invariants: the engine's cluster holds the snapshot's nodes of at most
 * GF_CNODE_MAX_GPUS GPUs, in snapshot order (cn[] and sn[] map them);
 * what runs is committed before any proposal; a request shape leaves the
 * engine as it found it (placed, then unplaced), a pending job stays
 * placed for the jobs after it.
 */
#include "slurm/advise.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/cluster.h>
#include <gpufleet/link.h>
#include <gpufleet/sched.h>

#include "util/fmt.h"
#include "util/mem.h"

struct ctx {
	const struct gf_slurm_snapshot *s;
	const struct gf_slurm_advise_opts *o;
	struct gf_slurm_advice *a;
	struct gf_cluster c;
	struct gf_sched *sched;
	int *cn; /* snapshot node -> cluster node, or -1 */
	int *sn; /* cluster node -> snapshot node */
	uint8_t *allowed;
};

__attribute__((format(printf, 2, 3))) static void
note(struct gf_slurm_advice *a, const char *fmt, ...)
{
	if (a->nnotes >= 4)
		return;
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(a->notes[a->nnotes++], sizeof(a->notes[0]), fmt, ap);
	va_end(ap);
}

void gf_slurm_quality_name(int q, char *out, unsigned size)
{
	if (q >= GF_GQ_NVLINK)
		gf_note(out, size, "NV%d", q - GF_GQ_NVLINK);
	else if (q >= GF_GQ_SYS && q <= GF_GQ_PIX)
		gf_note(out, size, "%s",
			gf_link_class_name((enum gf_link_class)(
				GF_LINK_SYS + GF_GQ_SYS - q)));
	else
		gf_note(out, size, "-");
}

static int build_cluster(struct ctx *x, struct gf_err *e)
{
	const struct gf_slurm_snapshot *s = x->s;
	x->cn = gf_calloc((size_t)s->nnodes, sizeof(int));
	x->sn = gf_calloc((size_t)s->nnodes, sizeof(int));
	gf_cluster_init(&x->c);
	for (int i = 0; i < s->nnodes; i++) {
		const struct gf_slurm_node *n = &s->nodes[i];
		x->cn[i] = -1;
		if (n->ngpus > GF_CNODE_MAX_GPUS) {
			note(x->a,
			     "node %s left out: %d GPUs, the engine holds %d "
			     "per node",
			     n->name, n->ngpus, GF_CNODE_MAX_GPUS);
			continue;
		}
		int m = gf_cluster_model(&x->c,
					 n->gpu_type[0] ? n->gpu_type : "gpu");
		int k = m < 0 ? m
			      : gf_cluster_add(&x->c, n->name,
					       (int32_t)n->cpus * 1000, 0,
					       n->ngpus, m);
		if (k < 0)
			return gf_err_set(e, k,
					  "cannot add node %s (%d GPUs, "
					  "%d CPUs)",
					  n->name, n->ngpus, n->cpus);
		x->cn[i] = k;
		x->sn[k] = i;
		if (x->o->topo && x->o->topo->ngpus == n->ngpus && n->ngpus)
			/* the sizes are equal */
			(void)!gf_cluster_set_topo(&x->c, k, x->o->topo);
	}
	if (x->c.n == 0)
		return gf_err_set(e, GF_EINVAL, "no node to advise on");
	x->allowed = gf_calloc((size_t)x->c.n, 1);
	return 0;
}

static uint32_t spec_of(const struct gf_cluster *c, const char *type)
{
	int m = type[0] ? gf_cluster_find_model(c, type) : -1;
	return m >= 0 ? UINT32_C(1) << m : 0;
}

static void req_of(const struct gf_cluster *c, const struct gf_slurm_job *j,
		   struct gf_req *r)
{
	memset(r, 0, sizeof(*r));
	r->cpu = (int32_t)(j->cpus_per_node > 0 ? j->cpus_per_node : 1) * 1000;
	r->ngpus = (uint16_t)j->gpus_per_node;
	r->gpu_milli = j->gpus_per_node ? GF_GPU_MILLI : 0;
	r->spec = spec_of(c, j->gpu_type);
	if (j->nodes > 1)
		r->flags = GF_REQ_MULTINODE;
}

/* The typical mix: the snapshot's jobs, per node; else 1, 2, 4, 8. */
static int build_typical(struct ctx *x)
{
	const struct gf_slurm_snapshot *s = x->s;
	struct gf_req *r = gf_calloc((size_t)s->njobs + 4, sizeof(*r));
	int n = 0, maxg = 0;
	for (int i = 0; i < s->njobs; i++)
		if (s->jobs[i].gpus_per_node <= GF_CNODE_MAX_GPUS)
			req_of(&x->c, &s->jobs[i], &r[n++]);
	x->a->typ_jobs = n;
	for (int i = 0; i < x->c.n; i++)
		if (x->c.nodes[i].ngpus > maxg)
			maxg = x->c.nodes[i].ngpus;
	if (n == 0)
		for (int g = 1; g <= 8 && g <= (maxg ? maxg : 1); g *= 2) {
			r[n].cpu = 1000;
			r[n].ngpus = (uint16_t)g;
			r[n++].gpu_milli = GF_GPU_MILLI;
		}
	double cov = x->o->coverage > 0 ? x->o->coverage : 0.95;
	int nt = gf_typical_build(r, n, cov, &x->a->typ);
	gf_free(r);
	if (nt < 0)
		return nt;
	x->a->ntyp = nt;
	return 0;
}

/* What runs: each node's allocated GPUs and CPUs as one placement. */
static int commit_running(struct ctx *x, struct gf_err *e)
{
	for (int k = 0; k < x->c.n; k++) {
		const struct gf_slurm_node *n = &x->s->nodes[x->sn[k]];
		struct gf_req r;
		struct gf_placement p;
		memset(&r, 0, sizeof(r));
		memset(&p, 0, sizeof(p));
		int cpus = n->cpus_alloc < n->cpus ? n->cpus_alloc : n->cpus;
		r.cpu = (int32_t)cpus * 1000;
		p.node = k;
		for (int g = 0; g < n->ngpus; g++)
			if (n->used >> g & 1)
				p.gpus[p.ngpus++] = g;
		r.ngpus = (uint16_t)p.ngpus;
		r.gpu_milli = p.ngpus ? GF_GPU_MILLI : 0;
		if (r.cpu || r.ngpus) {
			gf_sched_classify(x->sched, &r);
			if (gf_sched_commit(x->sched, &r, &p) != 0)
				return gf_err_set(e, GF_EINVAL,
						  "node %s: its allocation "
						  "does not fit it",
						  n->name);
		}
		if (n->unusable)
			(void)!gf_sched_cordon(x->sched, k, true);
	}
	return 0;
}

static int part_index(struct gf_slurm_advice *a, const char *name, size_t len)
{
	for (int i = 0; i < a->nparts; i++)
		if (strlen(a->parts[i].name) == len &&
		    strncmp(a->parts[i].name, name, len) == 0)
			return i;
	a->parts = gf_reallocarray(a->parts, (size_t)a->nparts + 1,
				   sizeof(*a->parts));
	struct gf_slurm_part_frag *p = &a->parts[a->nparts];
	memset(p, 0, sizeof(*p));
	/* a longer name is kept cut, marked: it is shown, and matches none */
	gf_note(p->name, sizeof(p->name), "%.*s", (int)len, name);
	return a->nparts++;
}

static void measure(struct ctx *x)
{
	struct gf_slurm_advice *a = x->a;
	const struct gf_slurm_snapshot *s = x->s;
	a->node_frag = gf_calloc((size_t)s->nnodes, sizeof(double));
	a->node_free = gf_calloc((size_t)s->nnodes, sizeof(int));
	for (int i = 0; i < s->nnodes; i++) {
		const struct gf_slurm_node *n = &s->nodes[i];
		int k = x->cn[i];
		a->node_frag[i] = NAN;
		a->gpus += n->ngpus;
		if (k < 0 || n->unusable)
			continue;
		a->node_frag[i] = gf_sched_frag_node(x->sched, k) / 1000.0;
		a->node_free[i] = x->c.nodes[k].nfree;
		a->frag += a->node_frag[i];
		a->free += a->node_free[i];
		for (const char *p = n->partitions; *p;) {
			size_t len = strcspn(p, ",");
			if (len) {
				int pi = part_index(a, p, len); /* grows */
				struct gf_slurm_part_frag *pf = &a->parts[pi];
				pf->nodes++;
				pf->gpus += n->ngpus;
				pf->free += a->node_free[i];
				pf->frag += a->node_frag[i];
			}
			p += len;
			if (*p)
				p++;
		}
	}
}

/* Nodes a job may use: usable, in one of its partitions, not taken by
 * its own earlier nodes. */
static int allow(struct ctx *x, const char *parts, const int *taken, int nt)
{
	int n = 0;
	for (int k = 0; k < x->c.n; k++) {
		const struct gf_slurm_node *sn = &x->s->nodes[x->sn[k]];
		bool in = !parts || !*parts;
		for (const char *p = parts; !in && p && *p;) {
			size_t len = strcspn(p, ",");
			char one[GF_SLURM_NAME_MAX];
			gf_note(one, sizeof(one), "%.*s", (int)len, p);
			in = gf_slurm_list_has(sn->partitions, one);
			p += len;
			if (*p)
				p++;
		}
		for (int t = 0; t < nt; t++)
			in &= taken[t] != k;
		x->allowed[k] = in && !sn->unusable;
		n += x->allowed[k];
	}
	return n;
}

static void score_set(struct ctx *x, int k, const struct gf_placement *p,
		      struct gf_slurm_proposal *pr)
{
	const struct gf_cnode *cn = &x->c.nodes[k];
	if (!cn->topo || p->ngpus == 0 || pr->min_pair < 0) {
		pr->min_pair = -1; /* unknown on one node: unknown */
		return;
	}
	struct gf_gpu_set_score sc;
	gf_gpu_topo_score(&x->c.topos[cn->topo - 1], p->gpus, p->ngpus, &sc);
	if (sc.min_pair < pr->min_pair)
		pr->min_pair = sc.min_pair;
	pr->sum_pair += sc.sum_pair;
}

/* Place one request (nodes times); keep or undo it. */
static void propose(struct ctx *x, const struct gf_slurm_job *j, bool keep,
		    struct gf_slurm_proposal *pr)
{
	memset(pr, 0, sizeof(*pr));
	pr->job = j->id;
	memcpy(pr->partition, j->partition, sizeof(pr->partition));
	pr->gpus_per_node = j->gpus_per_node;
	pr->nodes = j->nodes;
	pr->cpus_per_node = j->cpus_per_node > 0 ? j->cpus_per_node : 1;
	pr->min_pair = INT_MAX;
	struct gf_req r;
	req_of(&x->c, j, &r);
	gf_sched_classify(x->sched, &r);
	struct gf_placement p[GF_SLURM_PROP_NODES];
	int taken[GF_SLURM_PROP_NODES], done = 0;
	double f0 = gf_sched_frag_total(x->sched);
	for (; done < j->nodes && done < GF_SLURM_PROP_NODES; done++) {
		if (allow(x, j->partition, taken, done) == 0 ||
		    gf_sched_place_in(x->sched, &r, x->allowed, &p[done]) != 0)
			break;
		taken[done] = p[done].node;
		pr->node[done] = x->sn[p[done].node];
		memcpy(pr->gpu[done], p[done].gpus, sizeof(pr->gpu[done]));
		score_set(x, p[done].node, &p[done], pr);
	}
	pr->placed = done == j->nodes;
	if (pr->min_pair == INT_MAX || !pr->placed)
		pr->min_pair = -1;
	pr->dfrag = (gf_sched_frag_total(x->sched) - f0) / 1000.0;
	if (!pr->placed)
		gf_note(pr->why, sizeof(pr->why),
			j->nodes > GF_SLURM_PROP_NODES
				? "more than %d nodes"
				: "no usable node of its partition has room "
				  "now (%d of %d nodes found)",
			j->nodes > GF_SLURM_PROP_NODES ? GF_SLURM_PROP_NODES
						       : done,
			j->nodes);
	if (!keep || !pr->placed)
		for (int i = done - 1; i >= 0; i--)
			(void)!gf_sched_unplace(x->sched, &r, &p[i]);
	if (!pr->placed)
		pr->dfrag = 0;
}

static int cmp_prio(const void *pa, const void *pb)
{
	const struct gf_slurm_job *a = *(const struct gf_slurm_job *const *)pa;
	const struct gf_slurm_job *b = *(const struct gf_slurm_job *const *)pb;
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int propose_jobs(struct ctx *x, struct gf_err *e)
{
	const struct gf_slurm_snapshot *s = x->s;
	const struct gf_slurm_job **q =
		gf_calloc((size_t)s->njobs + 1, sizeof(*q));
	int nq = 0;
	bool found = x->o->job == 0;
	for (int i = 0; i < s->njobs; i++) {
		const struct gf_slurm_job *j = &s->jobs[i];
		if (x->o->job && j->id == x->o->job) {
			found = true;
			if (!j->pending) {
				gf_free(q);
				return gf_err_set(e, GF_EINVAL,
						  "job %u is running, not "
						  "pending",
						  j->id);
			}
		}
		if (j->pending && j->gpus_per_node > 0)
			q[nq++] = j;
	}
	if (!found) {
		gf_free(q);
		return gf_err_set(e, GF_ENOTFOUND,
				  "job %u is neither pending nor running",
				  x->o->job);
	}
	qsort(q, (size_t)nq, sizeof(*q), cmp_prio);
	for (int i = 0; i < nq; i++) {
		struct gf_slurm_proposal pr;
		propose(x, q[i], true, &pr);
		/* a job asked about alone still waits behind those before */
		if (!x->o->job || q[i]->id == x->o->job)
			x->a->props[x->a->nprops++] = pr;
		if (x->o->job && q[i]->id == x->o->job)
			break;
	}
	gf_free(q);
	return 0;
}

static int propose_shapes(struct ctx *x, struct gf_err *e)
{
	const struct gf_slurm_advise_opts *o = x->o;
	for (int i = 0; i < o->nshapes && i < GF_SLURM_SHAPES_MAX; i++) {
		struct gf_slurm_job j;
		memset(&j, 0, sizeof(j));
		j.nodes = 1;
		j.gpus_per_node = o->shape_gpus[i];
		j.cpus_per_node = o->shape_cpus > 0 ? o->shape_cpus : 1;
		if (o->shape_partition &&
		    gf_fmt(j.partition, sizeof(j.partition), "%s",
			   o->shape_partition))
			return gf_err_set(e, GF_ETOOBIG,
					  "--partition '%.40s...' longer than "
					  "%zu bytes",
					  o->shape_partition,
					  sizeof(j.partition) - 1);
		propose(x, &j, false, &x->a->props[x->a->nprops++]);
	}
	return 0;
}

int gf_slurm_advise(const struct gf_slurm_snapshot *s,
		    const struct gf_slurm_advise_opts *o,
		    struct gf_slurm_advice *out, struct gf_err *e)
{
	memset(out, 0, sizeof(*out));
	struct ctx x = { .s = s, .o = o, .a = out };
	out->props = gf_calloc((size_t)s->njobs + GF_SLURM_SHAPES_MAX + 1,
			       sizeof(*out->props));
	int rc = build_cluster(&x, e);
	if (rc == 0 && (rc = build_typical(&x)) != 0)
		gf_err_set(e, rc, "cannot build the typical mix");
	if (rc == 0 && (rc = gf_sched_new(&x.c, GF_POLICY_FGD, out->typ,
					  out->ntyp, 1, 1, &x.sched)) != 0)
		gf_err_set(e, rc, "cannot start the placement engine");
	if (rc == 0)
		rc = commit_running(&x, e);
	if (rc == 0)
		measure(&x);
	/* shapes first: each is tried on what runs now */
	if (rc == 0)
		rc = propose_shapes(&x, e);
	if (rc == 0 && !o->shapes_only)
		rc = propose_jobs(&x, e);
	if (x.sched)
		gf_sched_free(x.sched);
	gf_cluster_release(&x.c);
	gf_free(x.cn);
	gf_free(x.sn);
	gf_free(x.allowed);
	if (rc)
		gf_slurm_advice_release(out);
	return rc;
}

void gf_slurm_advice_release(struct gf_slurm_advice *a)
{
	gf_free(a->node_frag);
	gf_free(a->node_free);
	gf_free(a->parts);
	gf_free(a->props);
	free(a->typ);
	memset(a, 0, sizeof(*a));
}
