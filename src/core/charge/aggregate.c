/*
 * aggregate.c - gf_charge_run: each step of the window priced, then
 * aggregated as OpenCost's AllocationSet.AggregateBy does it
 * (core/pkg/opencost/allocation.go at 5f6533303e38; the steps below
 * carry its numbers).
 *
 * Records are priced piece by piece (a record clipped to the step, then
 * to each asset row of its node that it overlaps): CPU core-hours are
 * max(request, usage) x hours, RAM likewise, GPU hours are GPU units x
 * hours; each at its asset row's prices.  Idle per idle id (a cluster,
 * or a cluster's node with idle_by_node) per resource is the asset cost
 * less what records on it were allocated.
 *
 * Everything OpenCost computes per allocation is linear in the
 * allocation's costs, so records are summed into groups first, one per
 * (aggregation key, idle id, shared?, passes the filter?), and the
 * rules run on the groups: an idle coefficient cost_r / total_r summed
 * over a group's records is the group's cost_r / total_r.  That keeps a
 * run over 10 million records one pass plus work on a few groups.
 *
 * Invariant: each step's rows are sorted by name, and without a filter
 * or overheads their costs sum to the step's asset cost plus the
 * records' other costs (nothing lost, nothing counted twice).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/charge.h>

#include "core/charge/charge_impl.h"
#include "util/mem.h"

#define MS_PER_H 3600000.0

enum { R_CPU = 0, R_GPU, R_RAM, NRES };

struct grp {
	uint32_t key, idle;
	bool shared, pass;
	double cost[NRES];
	double cpu_ch, cpu_req_min, cpu_use_min;
	double gpu_h, gpu_req_min;
	double ram_gh, ram_req_min, ram_use_min;
	double other;
	double tele_h, active_h;
	unsigned signals;
	double waste[GF_CHARGE_NWASTE];
	int64_t start, end;
};

/* An idle id: (cluster, node) with idle_by_node, else (cluster, 0). */
struct idl {
	double asset[NRES], alloc[NRES];
	bool present; /* its node(s) have asset rows in the step */
	int64_t start, end;
};

struct step {
	struct gf__charge_run *x;
	int64_t ws, we;
	struct gf__tab keys, groups, idles;
	struct grp *g;
	size_t galloc;
	struct idl *id;
	size_t ialloc;
	double asset_cost;
};

static void span(int64_t *start, int64_t *end, int64_t s, int64_t t)
{
	if (*end <= *start) { /* empty */
		*start = s;
		*end = t;
		return;
	}
	if (s < *start)
		*start = s;
	if (t > *end)
		*end = t;
}

static struct idl *idle_of(struct step *st, uint32_t cluster, uint32_t node,
			   uint32_t *id)
{
	uint32_t k[2] = { cluster, st->x->o->idle_by_node ? node : 0 };
	*id = gf__tab_get(&st->idles, k, true);
	if (*id >= st->ialloc) {
		size_t was = st->ialloc;
		st->ialloc = st->ialloc ? st->ialloc * 2 : 64;
		st->id = gf_reallocarray(st->id, st->ialloc, sizeof(*st->id));
		memset(st->id + was, 0, (st->ialloc - was) * sizeof(*st->id));
	}
	return &st->id[*id];
}

/* Does record r (or an idle row: r NULL, with its cluster and node)
 * match term m? */
static bool term_matches(const struct gf__charge_run *x,
			 const struct gf_charge_record *r, uint32_t cluster,
			 uint32_t node, const struct gf_charge_match *m)
{
	if (r)
		return gf__charge_value(
			       x->in, r, &m->key,
			       x->node[x->rnode[r - x->in->rec]].model) ==
		       m->value;
	switch (m->key.kind) {
	case GF_CHARGE_KEY_CLUSTER:
		return cluster == m->value;
	case GF_CHARGE_KEY_NODE:
		return node == m->value;
	case GF_CHARGE_KEY_LABEL:
	case GF_CHARGE_KEY_ANNOTATION:
		return false; /* idle has no labels */
	default:
		return m->value == 0;
	}
}

static bool same_key(const struct gf_charge_key *a,
		     const struct gf_charge_key *b)
{
	return a->kind == b->kind && ((a->kind != GF_CHARGE_KEY_LABEL &&
				       a->kind != GF_CHARGE_KEY_ANNOTATION) ||
				      a->label == b->label);
}

/* The filter: for every key it names, one of its values matches. */
static bool passes(const struct gf__charge_run *x,
		   const struct gf_charge_record *r, uint32_t cluster,
		   uint32_t node)
{
	const struct gf_charge_opts *o = x->o;
	for (int i = 0; i < o->nfilter; i++) {
		bool ok = false;
		for (int j = 0; j < o->nfilter && !ok; j++)
			if (same_key(&o->filter[i].key, &o->filter[j].key))
				ok = term_matches(x, r, cluster, node,
						  &o->filter[j]);
		if (!ok)
			return false;
	}
	return true;
}

static bool is_shared(const struct gf__charge_run *x,
		      const struct gf_charge_record *r)
{
	for (int i = 0; i < x->o->nshare; i++)
		if (term_matches(x, r, 0, 0, &x->o->share[i]))
			return true;
	return false;
}

static struct grp *group_of(struct step *st, size_t r, uint32_t idle)
{
	const struct gf__charge_run *x = st->x;
	const struct gf_charge_record *rec = &x->in->rec[r];
	uint32_t kv[GF_CHARGE_MAX_KEYS + 1] = { 0 };
	uint32_t model = x->node[x->rnode[r]].model;
	for (int i = 0; i < x->o->nagg; i++)
		kv[i] = gf__charge_value(x->in, rec, &x->o->agg[i], model);
	uint32_t g3[3];
	g3[0] = gf__tab_get(&st->keys, kv, true);
	g3[1] = idle;
	g3[2] = (is_shared(x, rec) ? 1u : 0u) |
		(passes(x, rec, 0, 0) ? 2u : 0u);
	uint32_t gid = gf__tab_get(&st->groups, g3, true);
	if (gid >= st->galloc) {
		size_t was = st->galloc;
		st->galloc = st->galloc ? st->galloc * 2 : 64;
		st->g = gf_reallocarray(st->g, st->galloc, sizeof(*st->g));
		memset(st->g + was, 0, (st->galloc - was) * sizeof(*st->g));
	}
	struct grp *g = &st->g[gid];
	g->key = g3[0];
	g->idle = idle;
	g->shared = g3[2] & 1;
	g->pass = (g3[2] & 2) != 0;
	return g;
}

/* max(request, usage) of the sides present (OpenCost's allocation). */
static double alloc_of(double req, double use)
{
	if (isnan(req))
		return isnan(use) ? 0 : use;
	if (isnan(use))
		return req;
	return req > use ? req : use;
}

static double nz(double v)
{
	return isnan(v) ? 0 : v;
}

/* Telemetry of record r's GPUs over [s, t) at price p into g. */
static void telemetry(struct step *st, size_t r, int64_t s, int64_t t,
		      double price, struct grp *g)
{
	const struct gf__charge_run *x = st->x;
	const struct gf_charge_input *in = x->in;
	const struct gf_charge_record *rec = &in->rec[r];
	const struct gf__extra_parts *p = &in->extra_ix->parts[rec->extra];
	if (!p->nids || !x->slots.n)
		return;
	double up = x->units[r] / p->nids;
	for (uint32_t i = 0; i < p->nids; i++) {
		uint32_t k[2] = { rec->node, in->extra_ix->ids[p->id_off + i] };
		uint32_t slot = gf__tab_find(&x->slots, k);
		if (slot == GF__NONE)
			continue;
		const uint32_t *v = x->trow + x->tfirst[slot];
		uint32_t lo = 0, hi = x->tcount[slot];
		while (lo < hi) { /* first row ending after s */
			uint32_t mid = (lo + hi) / 2;
			if (in->tele[v[mid]].end_ms <= s)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < x->tcount[slot]; lo++) {
			const struct gf_charge_tele *te = &in->tele[v[lo]];
			if (te->start_ms >= t)
				break;
			int64_t s2 = te->start_ms > s ? te->start_ms : s;
			int64_t t2 = te->end_ms < t ? te->end_ms : t;
			if (t2 <= s2)
				continue;
			double h = up * (double)(t2 - s2) / MS_PER_H;
			if (te->activity >= 0) {
				g->tele_h += h;
				g->active_h += h * te->activity / 100.0;
				g->signals |= 1u << te->signal;
			}
			if (te->waste >= 0 && te->waste < GF_CHARGE_NWASTE)
				g->waste[te->waste] += h * price;
		}
	}
}

/* One piece: record r over [s, t) on asset row a. */
static void piece(struct step *st, size_t r, const struct gf_charge_asset *a,
		  int64_t s, int64_t t, struct grp *g, struct idl *il)
{
	const struct gf_charge_record *rec = &st->x->in->rec[r];
	double min = (double)(t - s) / 60000.0, h = min / 60.0;
	double cpu = alloc_of(rec->cpu_req, rec->cpu_use);
	double ram = alloc_of(rec->ram_req, rec->ram_use);
	double gpu = st->x->units[r];
	double c[NRES] = { cpu * h * a->cpu_price_hr, gpu * h * a->gpu_price_hr,
			   ram * h * a->ram_price_hr };
	for (int k = 0; k < NRES; k++) {
		if (isnan(c[k]))
			c[k] = 0; /* nothing of it on a node without */
		g->cost[k] += c[k];
		il->alloc[k] += c[k];
	}
	g->cpu_ch += cpu * h;
	g->cpu_req_min += nz(rec->cpu_req) * min;
	g->cpu_use_min += nz(rec->cpu_use) * min;
	g->gpu_h += gpu * h;
	g->gpu_req_min += gpu * min;
	g->ram_gh += ram * h;
	g->ram_req_min += nz(rec->ram_req) * min;
	g->ram_use_min += nz(rec->ram_use) * min;
	span(&g->start, &g->end, s, t);
	telemetry(st, r, s, t, a->gpu_price_hr, g);
}

static void price_record(struct step *st, size_t r)
{
	const struct gf__charge_run *x = st->x;
	const struct gf_charge_record *rec = &x->in->rec[r];
	int64_t s = rec->start_ms > st->ws ? rec->start_ms : st->ws;
	int64_t t = rec->end_ms < st->we ? rec->end_ms : st->we;
	if (t <= s)
		return;
	const struct gf__charge_node *n = &x->node[x->rnode[r]];
	uint32_t idle;
	struct idl *il = idle_of(st, n->cluster, n->node, &idle);
	struct grp *g = group_of(st, r, idle);
	il = &st->id[idle]; /* idle_of's array may not move after */
	struct gf__charge_cut c;
	for (uint32_t j = 0; gf__charge_cut(x, n, s, t, &j, &c);)
		piece(st, r, c.a, c.s, c.t, g, il);
	double whole = (double)(rec->end_ms - rec->start_ms);
	if (!isnan(rec->other_cost) && rec->other_cost > 0)
		g->other += whole > 0
				    ? rec->other_cost * (double)(t - s) / whole
				    : rec->other_cost;
}

static void price_assets(struct step *st)
{
	const struct gf__charge_run *x = st->x;
	for (size_t k = 0; k < x->nodes.n; k++) {
		const struct gf__charge_node *n = &x->node[k];
		for (uint32_t j = 0; j < n->n; j++) {
			const struct gf_charge_asset *a =
				&x->in->asset[x->arow[n->first + j]];
			int64_t s = a->start_ms > st->ws ? a->start_ms : st->ws;
			int64_t t = a->end_ms < st->we ? a->end_ms : st->we;
			if (t <= s)
				continue;
			double h = (double)(t - s) / MS_PER_H;
			uint32_t id;
			struct idl *il = idle_of(st, n->cluster, n->node, &id);
			double c[NRES] = { a->cpu_cores * a->cpu_price_hr * h,
					   a->gpus * a->gpu_price_hr * h,
					   a->ram_gib * a->ram_price_hr * h };
			for (int r = 0; r < NRES; r++) {
				il->asset[r] += isnan(c[r]) ? 0 : c[r];
				st->asset_cost += isnan(c[r]) ? 0 : c[r];
			}
			il->present = true;
			span(&il->start, &il->end, s, t);
		}
	}
}

/* --- AggregateBy over the groups -------------------------------------- */

struct agg {
	struct step *st;
	size_t ng, nidle;
	double (*tot)[NRES];	   /* [idle id][r]: all groups' costs */
	bool *has;		   /* [idle id]: some group has it */
	double *coeff;		   /* [key id], then [nkeys] = __filtered__ */
	bool *in_share;		   /* even split: names counted */
	struct gf_charge_row *row; /* [key id] */
	bool *row_used;
	struct gf_charge_row *idle_rows;
	size_t nidle_rows;
	/* the shared groups' costs by key id (cpu, gpu, ram, other), with
	 * the idle they got; the hourly overheads */
	double (*sk)[NRES + 1];
	bool *sk_used;
	double hourly;
};

static double idle_cost(const struct idl *il, int r)
{
	return il->asset[r] - il->alloc[r];
}

/* (2e) share coefficients over the main groups; the hourly overheads
 * and shared groups' total are then spread by them (8). */
static void share_coeffs(struct agg *A)
{
	const struct gf_charge_opts *o = A->st->x->o;
	size_t nk = A->st->keys.n;
	double total = 0;
	for (size_t i = 0; i < A->ng; i++) {
		const struct grp *g = &A->st->g[i];
		if (g->shared)
			continue;
		size_t k = g->pass ? g->key : nk;
		if (o->share_split == GF_CHARGE_SPLIT_EVEN) {
			A->coeff[k] = 1;
			if (!A->in_share[k])
				total += 1;
			A->in_share[k] = true;
		} else {
			double w = g->cost[R_CPU] + g->cost[R_GPU] +
				   g->cost[R_RAM] + g->other;
			A->coeff[k] += w;
			total += w;
		}
	}
	for (size_t k = 0; k <= nk; k++)
		A->coeff[k] =
			A->coeff[k] > 0 && total > 0 ? A->coeff[k] / total : 0;
}

/* The idle group g gets of its idle id's idle, per resource (4, 6). */
static void idle_share(const struct agg *A, const struct grp *g,
		       double add[NRES])
{
	const struct idl *il = &A->st->id[g->idle];
	for (int r = 0; r < NRES; r++) {
		double t = A->tot[g->idle][r];
		double c =
			g->cost[r] > 0 && t > 0 ? g->cost[r] / t : g->cost[r];
		add[r] = il->present ? idle_cost(il, r) * c : 0;
	}
}

static void row_add_group(struct gf_charge_row *w, const struct grp *g)
{
	w->cpu_cost += g->cost[R_CPU];
	w->gpu_cost += g->cost[R_GPU];
	w->ram_cost += g->cost[R_RAM];
	w->cpu_core_hours += g->cpu_ch;
	w->cpu_req_min += g->cpu_req_min;
	w->cpu_use_min += g->cpu_use_min;
	w->gpu_hours += g->gpu_h;
	w->gpu_req_min += g->gpu_req_min;
	w->ram_gib_hours += g->ram_gh;
	w->ram_req_min += g->ram_req_min;
	w->ram_use_min += g->ram_use_min;
	w->other_cost += g->other;
	w->gpu_tele_hours += g->tele_h;
	w->gpu_active_hours += g->active_h;
	w->signals |= g->signals;
	for (int i = 0; i < GF_CHARGE_NWASTE; i++)
		w->waste[i] += g->waste[i];
	span(&w->start_ms, &w->end_ms, g->start, g->end);
}

/* Steps 3-9: main groups into rows, idle and shared spread. */
static double main_rows(struct agg *A)
{
	const struct gf_charge_opts *o = A->st->x->o;
	bool share_idle = o->share_idle && A->nidle > 0;
	double pool = 0;
	for (size_t i = 0; i < A->ng; i++) {
		const struct grp *g = &A->st->g[i];
		double add[NRES] = { 0, 0, 0 };
		if (share_idle)
			idle_share(A, g, add);
		if (g->shared) {
			pool += g->cost[R_CPU] + g->cost[R_GPU] +
				g->cost[R_RAM] + g->other + add[R_CPU] +
				add[R_GPU] + add[R_RAM];
			for (int r = 0; r < NRES; r++)
				A->sk[g->key][r] += g->cost[r] + add[r];
			A->sk[g->key][NRES] += g->other;
			A->sk_used[g->key] = true;
			continue;
		}
		if (!g->pass)
			continue;
		struct gf_charge_row *w = &A->row[g->key];
		A->row_used[g->key] = true;
		row_add_group(w, g);
		w->cpu_cost += add[R_CPU];
		w->gpu_cost += add[R_GPU];
		w->ram_cost += add[R_RAM];
		w->cpu_cost_idle += add[R_CPU];
		w->gpu_cost_idle += add[R_GPU];
		w->ram_cost_idle += add[R_RAM];
	}
	return pool;
}

/* Hours of the hourly overheads: the step, less any part after now. */
static double overhead_hours(const struct step *st)
{
	double h = (double)(st->we - st->ws) / MS_PER_H;
	int64_t now = st->x->o->now_ms;
	if (now > 0 && now < st->we)
		h += (double)(now - st->we) / MS_PER_H;
	return h > 0 ? h : 0;
}

static void add_idle_row(struct agg *A, uint32_t id, const double c[NRES])
{
	const struct idl *il = &A->st->id[id];
	struct gf_charge_row *w = &A->idle_rows[A->nidle_rows++];
	memset(w, 0, sizeof(*w));
	w->kind = GF_CHARGE_ROW_IDLE;
	w->keyval[0] = id; /* the idle id until named */
	w->cpu_cost = c[R_CPU];
	w->gpu_cost = c[R_GPU];
	w->ram_cost = c[R_RAM];
	w->start_ms = il->start;
	w->end_ms = il->end;
}

/* Steps 7, 10, 11: the idle rows left. */
static void idle_rows(struct agg *A)
{
	const struct gf__charge_run *x = A->st->x;
	const struct gf_charge_opts *o = x->o;
	A->idle_rows = gf_calloc(A->nidle + 1, sizeof(*A->idle_rows));
	double(*ifc)[NRES] = NULL;
	if (o->nfilter && !o->share_idle) { /* (2c) idle filtration */
		ifc = gf_calloc(A->nidle + 1, sizeof(*ifc));
		for (size_t i = 0; i < A->ng; i++) {
			const struct grp *g = &A->st->g[i];
			if (!g->shared && !g->pass)
				continue;
			for (int r = 0; r < NRES; r++) {
				double t = A->tot[g->idle][r];
				ifc[g->idle][r] += g->cost[r] > 0 && t > 0
							   ? g->cost[r] / t
							   : g->cost[r];
			}
		}
	}
	for (uint32_t id = 0; id < A->nidle; id++) {
		const struct idl *il = &A->st->id[id];
		if (!il->present)
			continue;
		const uint32_t *k = gf__tab_tuple(&A->st->idles, id);
		double c[NRES];
		bool keep = !o->share_idle;
		for (int r = 0; r < NRES; r++) {
			c[r] = idle_cost(il, r);
			if (!o->share_idle) {
				if (ifc && A->has[id])
					c[r] *= ifc[id][r];
			} else if (c[r] > 0 && A->tot[id][r] == 0) {
				keep = true; /* undistributable */
			} else {
				c[r] = 0;
			}
		}
		if (o->share_idle && !passes(x, NULL, k[0], k[1]))
			keep = false;
		if (keep)
			add_idle_row(A, id, c);
	}
	gf_free(ifc);
}

static char *join_name(const struct gf_charge_input *in, const uint32_t *kv,
		       int n)
{
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(gf_charge_str(in, kv[i])) + 1;
	char *s = gf_malloc(len), *p = s;
	*p = '\0';
	for (int i = 0; i < n; i++) {
		const char *v = gf_charge_str(in, kv[i]);
		size_t l = strlen(v);
		if (i)
			*p++ = '/';
		memcpy(p, v, l);
		p += l;
		*p = '\0';
	}
	return s;
}

static char *idle_name(const struct gf__charge_run *x, const struct step *st,
		       uint32_t id)
{
	if (!x->o->split_idle)
		return gf_strdup(GF_CHARGE_IDLE);
	const uint32_t *k = gf__tab_tuple(&st->idles, id);
	uint32_t kv[3] = { k[0], k[1], x->in->extra_ix->idle };
	if (!x->o->idle_by_node) {
		kv[1] = kv[2];
		return join_name(x->in, kv, 2);
	}
	return join_name(x->in, kv, 3);
}

static int cmp_row(const void *a, const void *b)
{
	const struct gf_charge_row *p = a, *q = b;
	return strcmp(p->name, q->name);
}

/* Merge rows of one name (idle rows when not split). */
static size_t merge_rows(struct gf_charge_row *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_row);
	size_t out = 0;
	for (size_t i = 1; i < n; i++) {
		if (strcmp(v[out].name, v[i].name) != 0) {
			v[++out] = v[i];
			continue;
		}
		struct grp g;
		memset(&g, 0, sizeof(g));
		g.cost[R_CPU] = v[i].cpu_cost;
		g.cost[R_GPU] = v[i].gpu_cost;
		g.cost[R_RAM] = v[i].ram_cost;
		g.start = v[i].start_ms;
		g.end = v[i].end_ms;
		row_add_group(&v[out], &g);
		gf_free(v[i].name);
		gf_free(v[i].shares); /* rows of one name: idle, never shared */
	}
	return out + 1;
}

static int cmp_share(const void *a, const void *b)
{
	const struct gf_charge_share *p = a, *q = b;
	return strcmp(p->name, q->name);
}

/* Row w's sharedCostBreakdown: what each shared key and the overheads
 * gave it at coefficient c (OpenCost's step 8), sorted by name. */
static void breakdown(const struct agg *A, struct gf_charge_row *w, double c)
{
	const struct gf__charge_run *x = A->st->x;
	size_t nk = A->st->keys.n;
	w->shares = gf_calloc(nk + 1, sizeof(*w->shares));
	for (size_t k = 0; k <= nk; k++) {
		bool over = k == nk;
		if (over ? A->hourly == 0 : !A->sk_used[k])
			continue;
		struct gf_charge_share *s = &w->shares[w->nshares++];
		if (over) {
			s->name = gf_strdup("overheadCost");
			s->other_cost = A->hourly * c;
			s->total_cost = s->other_cost;
			continue;
		}
		s->name = join_name(x->in,
				    gf__tab_tuple(&A->st->keys, (uint32_t)k),
				    x->o->nagg);
		s->cpu_cost = A->sk[k][R_CPU] * c;
		s->gpu_cost = A->sk[k][R_GPU] * c;
		s->ram_cost = A->sk[k][R_RAM] * c;
		s->other_cost = A->sk[k][NRES] * c;
		s->total_cost =
			s->cpu_cost + s->gpu_cost + s->ram_cost + s->other_cost;
	}
	qsort(w->shares, w->nshares, sizeof(*w->shares), cmp_share);
}

static void finish_rows(struct agg *A, double pool, struct gf_charge_step *out)
{
	const struct gf__charge_run *x = A->st->x;
	size_t nk = A->st->keys.n, n = 0;
	out->rows = gf_calloc(nk + A->nidle_rows + 1, sizeof(*out->rows));
	for (size_t k = 0; k < nk; k++) {
		if (!A->row_used[k])
			continue;
		struct gf_charge_row *w = &out->rows[n++];
		*w = A->row[k];
		w->shared_cost += pool * A->coeff[k];
		const uint32_t *kv = gf__tab_tuple(&A->st->keys, (uint32_t)k);
		memcpy(w->keyval, kv, (size_t)x->o->nagg * sizeof(*kv));
		w->name = join_name(x->in, kv, x->o->nagg);
		if (x->o->shared_breakdown && pool != 0)
			breakdown(A, w, A->coeff[k]);
	}
	for (size_t i = 0; i < A->nidle_rows; i++) {
		struct gf_charge_row *w = &out->rows[n++];
		*w = A->idle_rows[i];
		w->name = idle_name(x, A->st, w->keyval[0]);
		w->keyval[0] = 0;
	}
	out->nrows = merge_rows(out->rows, n);
	out->rows_cost = 0;
	for (size_t i = 0; i < out->nrows; i++)
		out->rows_cost += gf_charge_row_total(&out->rows[i]);
}

static void aggregate(struct step *st, struct gf_charge_step *out)
{
	const struct gf_charge_opts *o = st->x->o;
	struct agg A;
	memset(&A, 0, sizeof(A));
	A.st = st;
	A.ng = st->groups.n;
	A.nidle = st->idles.n;
	out->asset_cost = st->asset_cost;
	bool any_main = false;
	for (size_t i = 0; i < A.ng; i++)
		any_main |= !st->g[i].shared;
	if (!any_main) /* OpenCost returns an empty set (step 1) */
		return;
	size_t nk = st->keys.n;
	A.tot = gf_calloc(A.nidle + 1, sizeof(*A.tot));
	A.has = gf_calloc(A.nidle + 1, sizeof(*A.has));
	A.coeff = gf_calloc(nk + 1, sizeof(*A.coeff));
	A.in_share = gf_calloc(nk + 1, sizeof(*A.in_share));
	A.row = gf_calloc(nk + 1, sizeof(*A.row));
	A.row_used = gf_calloc(nk + 1, sizeof(*A.row_used));
	A.sk = gf_calloc(nk + 1, sizeof(*A.sk));
	A.sk_used = gf_calloc(nk + 1, sizeof(*A.sk_used));
	for (size_t i = 0; i < A.ng; i++) {
		const struct grp *g = &st->g[i];
		for (int r = 0; r < NRES; r++)
			A.tot[g->idle][r] += g->cost[r];
		A.has[g->idle] = true;
	}
	double pool = 0;
	for (int i = 0; i < o->nshared_hourly; i++)
		if (o->shared_hourly[i].cost_hr > 0)
			pool += o->shared_hourly[i].cost_hr *
				overhead_hours(st);
	A.hourly = pool;
	pool += main_rows(&A);
	bool any_shared = pool != 0;
	for (size_t i = 0; i < A.ng && !any_shared; i++)
		any_shared = st->g[i].shared;
	if (any_shared)
		share_coeffs(&A);
	idle_rows(&A);
	finish_rows(&A, any_shared ? pool : 0, out);
	gf_free(A.tot);
	gf_free(A.has);
	gf_free(A.coeff);
	gf_free(A.in_share);
	gf_free(A.row);
	gf_free(A.row_used);
	gf_free(A.sk);
	gf_free(A.sk_used);
	gf_free(A.idle_rows);
}

/* --- steps ------------------------------------------------------------- */

static void step_init(struct step *st, struct gf__charge_run *x, int64_t ws,
		      int64_t we)
{
	memset(st, 0, sizeof(*st));
	st->x = x;
	st->ws = ws;
	st->we = we;
	gf__tab_init(&st->keys, x->o->nagg > 0 ? x->o->nagg : 1);
	gf__tab_init(&st->groups, 3);
	gf__tab_init(&st->idles, 2);
}

static void step_release(struct step *st)
{
	gf__tab_release(&st->keys);
	gf__tab_release(&st->groups);
	gf__tab_release(&st->idles);
	gf_free(st->g);
	gf_free(st->id);
}

static void run_step(struct gf__charge_run *x, int k, const uint32_t *recs,
		     size_t n)
{
	struct gf_charge_step *out = &x->out->steps[k];
	struct step st;
	step_init(&st, x, out->start_ms, out->end_ms);
	price_assets(&st);
	if (recs) {
		for (size_t i = 0; i < n; i++)
			price_record(&st, recs[i]);
	} else {
		for (size_t r = 0; r < x->in->nrec; r++)
			if (x->rnode[r] != GF__NONE)
				price_record(&st, r);
	}
	aggregate(&st, out);
	step_release(&st);
}

/* Several steps: the records sorted by start, a sweep keeps those that
 * overlap the step at hand. */
static void run_steps(struct gf__charge_run *x)
{
	const struct gf_charge_input *in = x->in;
	int64_t ws = x->o->start_ms;
	size_t n = 0;
	uint64_t *key = gf_reallocarray(NULL, in->nrec + 1, sizeof(*key));
	for (size_t r = 0; r < in->nrec; r++) {
		if (x->rnode[r] == GF__NONE)
			continue;
		int64_t s = in->rec[r].start_ms > ws ? in->rec[r].start_ms : ws;
		key[n++] = ((uint64_t)((s - ws) / 1000) << 28) | r;
	}
	uint64_t *tmp = gf_reallocarray(NULL, n + 1, sizeof(*tmp));
	gf__charge_sort_u64(key, tmp, n);
	gf_free(tmp);
	uint32_t *act = gf_reallocarray(NULL, n + 1, sizeof(*act));
	size_t na = 0, next = 0;
	for (int k = 0; k < x->out->nsteps; k++) {
		int64_t a = x->out->steps[k].start_ms;
		int64_t b = x->out->steps[k].end_ms;
		while (next < n && in->rec[key[next] & 0xfffffff].start_ms < b)
			act[na++] = (uint32_t)(key[next++] & 0xfffffff);
		size_t keep = 0;
		for (size_t i = 0; i < na; i++)
			if (in->rec[act[i]].end_ms > a)
				act[keep++] = act[i];
		na = keep;
		run_step(x, k, act, na);
	}
	gf_free(act);
	gf_free(key);
}

int gf__charge_steps(struct gf__charge_run *x)
{
	if (x->out->nsteps == 1)
		run_step(x, 0, NULL, 0);
	else
		run_steps(x);
	return 0;
}

static int check_opts(const struct gf_charge_opts *o, size_t nrec,
		      struct gf_err *e)
{
	if (o->end_ms <= o->start_ms)
		return gf_err_set(e, GF_EINVAL,
				  "the window is empty: its end is not after "
				  "its start");
	if (o->end_ms - o->start_ms >= (1LL << 39))
		return gf_err_set(e, GF_EINVAL,
				  "the window is longer than 17 years");
	if (o->step_ms < 0 ||
	    (o->step_ms > 0 &&
	     (o->end_ms - o->start_ms + o->step_ms - 1) / o->step_ms >
		     GF_CHARGE_STEPS_MAX))
		return gf_err_set(e, GF_EINVAL,
				  "the window holds more than %d steps",
				  GF_CHARGE_STEPS_MAX);
	if (o->nagg < 0 || o->nagg > GF_CHARGE_MAX_KEYS || o->nshare < 0 ||
	    o->nshare > GF_CHARGE_MAX_MATCH || o->nfilter < 0 ||
	    o->nfilter > GF_CHARGE_MAX_MATCH || o->nshared_hourly < 0 ||
	    o->nshared_hourly > GF_CHARGE_MAX_SHARED)
		return gf_err_set(e, GF_EINVAL, "too many keys or terms");
	if (nrec >= (1u << 28))
		return gf_err_set(e, GF_ETOOBIG, "more than %u records",
				  (1u << 28) - 1);
	return 0;
}

int gf_charge_run(const struct gf_charge_input *in,
		  const struct gf_charge_opts *o, struct gf_charge_result *out,
		  struct gf_err *e)
{
	memset(out, 0, sizeof(*out));
	int rc = check_opts(o, in->nrec, e);
	if (rc)
		return rc;
	struct gf__charge_run x;
	memset(&x, 0, sizeof(x));
	x.in = in;
	x.o = o;
	x.out = out;
	x.e = e;
	rc = gf__charge_prepare(&x);
	if (rc == 0)
		rc = gf__charge_capacity(&x);
	if (rc == 0) {
		int64_t len = o->end_ms - o->start_ms;
		int64_t step = o->step_ms > 0 ? o->step_ms : len;
		out->nsteps = (int)((len + step - 1) / step);
		out->steps =
			gf_calloc((size_t)out->nsteps, sizeof(*out->steps));
		for (int k = 0; k < out->nsteps; k++) {
			out->steps[k].start_ms = o->start_ms + step * k;
			out->steps[k].end_ms = o->start_ms + step * (k + 1);
			if (out->steps[k].end_ms > o->end_ms)
				out->steps[k].end_ms = o->end_ms;
		}
		rc = gf__charge_steps(&x);
	}
	gf__charge_run_release(&x);
	if (rc)
		gf_charge_result_release(out);
	return rc;
}

void gf_charge_result_release(struct gf_charge_result *r)
{
	for (int k = 0; k < r->nsteps; k++) {
		for (size_t i = 0; i < r->steps[k].nrows; i++) {
			struct gf_charge_row *w = &r->steps[k].rows[i];
			for (size_t j = 0; j < w->nshares; j++)
				gf_free(w->shares[j].name);
			gf_free(w->name);
			gf_free(w->shares);
		}
		gf_free(r->steps[k].rows);
	}
	gf_free(r->steps);
	gf_free(r->skipped);
	memset(r, 0, sizeof(*r));
}
