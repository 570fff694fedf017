/*
 * prepare.c - what gf_charge_run checks and builds before it prices
 * anything: the nodes and their asset rows (valid, priced where they
 * have capacity, never overlapping), each record's node and GPU units
 * (MIG profiles resolved by the rule), every record inside the window
 * covered by its node's asset rows, the telemetry index, and the
 * capacity check: at no instant do the records of a node hold more GPU
 * than its asset row says it has, nor the records naming a GPU more than
 * that one GPU.
 *
 * Invariants after gf__charge_prepare: rnode[r] is GF__NONE exactly for
 * records outside the window or skipped; units[r] >= 0; each node's
 * asset rows are sorted by start and disjoint.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/charge.h>

#include "core/charge/charge_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

#define EPS 1e-6 /* GPU units: capacity is exceeded by more than this */

int gf__charge_bad(struct gf__charge_run *x, size_t r, const char *fmt, ...)
{
	const struct gf_charge_record *rec = &x->in->rec[r];
	char where[GF_CHARGE_STR_MAX + 32], why[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	gf__charge_where(x->in, rec->src, rec->line, where, sizeof(where));
	if (!x->o->lenient)
		return gf_err_set(x->e, GF_EINVAL, "record %s: %s", where, why);
	struct gf_charge_result *out = x->out;
	x->skip[r] = 1;
	x->rnode[r] = GF__NONE;
	if (out->nskipped < GF_CHARGE_SKIPS_KEPT) {
		if (!out->skipped)
			out->skipped = gf_calloc(GF_CHARGE_SKIPS_KEPT,
						 sizeof(*out->skipped));
		struct gf_charge_skip *s = &out->skipped[out->nskipped++];
		s->src = rec->src;
		s->line = rec->line;
		gf_note(s->why, sizeof(s->why), "%s", why);
	}
	out->nskipped_total++;
	return 0;
}

static int asset_bad(struct gf__charge_run *x, const struct gf_charge_asset *a,
		     const char *why)
{
	char where[GF_CHARGE_STR_MAX + 32];
	gf__charge_where(x->in, a->src, a->line, where, sizeof(where));
	return gf_err_set(x->e, GF_EINVAL, "asset %s: node '%s': %s", where,
			  gf_charge_str(x->in, a->node), why);
}

static int check_asset(struct gf__charge_run *x,
		       const struct gf_charge_asset *a)
{
	char why[200];
	if (a->end_ms <= a->start_ms)
		return asset_bad(x, a, "'end' is not after 'start'");
	if (!(a->gpus >= 0) || !(a->cpu_cores >= 0) || !(a->ram_gib >= 0) ||
	    !isfinite(a->gpus + a->cpu_cores + a->ram_gib))
		return asset_bad(x, a,
				 "'gpus', 'cpu_cores' and 'ram_gib' must be "
				 "numbers >= 0");
	if (a->gpus > 0 && isnan(a->gpu_price_hr)) {
		gf_note(why, sizeof(why),
			"no GPU price for model '%s' (give gpu_price_hr, or "
			"a price for the model in the prices file)",
			a->gpu_model ? gf_charge_str(x->in, a->gpu_model)
				     : "(none)");
		return asset_bad(x, a, why);
	}
	if (a->cpu_cores > 0 && isnan(a->cpu_price_hr))
		return asset_bad(x, a, "no CPU core price");
	if (a->ram_gib > 0 && isnan(a->ram_price_hr))
		return asset_bad(x, a, "no RAM GiB price");
	if (a->gpu_price_hr < 0 || a->cpu_price_hr < 0 || a->ram_price_hr < 0 ||
	    isinf(a->gpu_price_hr + a->cpu_price_hr + a->ram_price_hr))
		return asset_bad(x, a, "a price is negative or not finite");
	return 0;
}

/* Insertion sort of one node's asset rows by start (few per node). */
static void sort_rows(const struct gf_charge_asset *a, uint32_t *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		uint32_t t = v[i], j = i;
		while (j > 0 && a[v[j - 1]].start_ms > a[t].start_ms) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = t;
	}
}

static int build_nodes(struct gf__charge_run *x)
{
	const struct gf_charge_input *in = x->in;
	uint32_t *of = gf_reallocarray(NULL, in->nasset + 1, sizeof(*of));
	int rc = 0;
	for (size_t i = 0; i < in->nasset && rc == 0; i++) {
		const struct gf_charge_asset *a = &in->asset[i];
		uint32_t k[2] = { a->cluster, a->node };
		of[i] = gf__tab_get(&x->nodes, k, true);
		rc = check_asset(x, a);
	}
	size_t nn = x->nodes.n;
	x->node = gf_calloc(nn + 1, sizeof(*x->node));
	x->arow = gf_reallocarray(NULL, in->nasset + 1, sizeof(*x->arow));
	for (size_t i = 0; i < in->nasset && rc == 0; i++)
		x->node[of[i]].n++;
	uint32_t sum = 0;
	for (size_t k = 0; k < nn && rc == 0; k++) {
		const uint32_t *t = gf__tab_tuple(&x->nodes, (uint32_t)k);
		x->node[k].cluster = t[0];
		x->node[k].node = t[1];
		x->node[k].first = sum;
		sum += x->node[k].n;
		x->node[k].n = 0;
	}
	for (size_t i = 0; i < in->nasset && rc == 0; i++) {
		struct gf__charge_node *n = &x->node[of[i]];
		x->arow[n->first + n->n++] = (uint32_t)i;
		if (!n->model)
			n->model = in->asset[i].gpu_model;
	}
	for (size_t k = 0; k < nn && rc == 0; k++) {
		struct gf__charge_node *n = &x->node[k];
		uint32_t *v = x->arow + n->first;
		sort_rows(in->asset, v, n->n);
		for (uint32_t j = 1; j < n->n && rc == 0; j++)
			if (in->asset[v[j]].start_ms <
			    in->asset[v[j - 1]].end_ms) {
				char w[GF_CHARGE_STR_MAX + 32], why[400];
				gf__charge_where(in, in->asset[v[j - 1]].src,
						 in->asset[v[j - 1]].line, w,
						 sizeof(w));
				gf_note(why, sizeof(why),
					"overlaps asset %s of the same node",
					w);
				rc = asset_bad(x, &in->asset[v[j]], why);
			}
	}
	gf_free(of);
	return rc;
}

/* Milliseconds of [s, t) that node n's asset rows cover. */
static int64_t covered(const struct gf__charge_run *x,
		       const struct gf__charge_node *n, int64_t s, int64_t t)
{
	int64_t sum = 0;
	struct gf__charge_cut c;
	for (uint32_t j = 0; gf__charge_cut(x, n, s, t, &j, &c);)
		sum += c.t - c.s;
	return sum;
}

/* Record r's GPU units; 0 or the record rejected. */
static int record_units(struct gf__charge_run *x, size_t r, uint32_t node)
{
	const struct gf_charge_input *in = x->in;
	const struct gf_charge_record *rec = &in->rec[r];
	const struct gf_charge_extra *xe = &in->extra[rec->extra];
	if (!xe->mig_profile) {
		x->units[r] = isnan(rec->gpus) ? 0 : rec->gpus;
		return 0;
	}
	uint32_t model = xe->gpu_model
				 ? xe->gpu_model
				 : (node != GF__NONE ? x->node[node].model : 0);
	const char *prof = gf_charge_str(in, xe->mig_profile);
	if (!model)
		return gf__charge_bad(x, r,
				      "MIG profile '%s' needs a GPU model (a "
				      "gpu_model column, or the node's asset "
				      "row)",
				      prof);
	struct gf_err e;
	double count = isnan(rec->gpus) ? 1 : rec->gpus;
	if (gf_charge_mig_units(gf_charge_str(in, model), prof, count,
				x->o->mig_rule, &x->units[r], &e))
		return gf__charge_bad(x, r, "%s", e.msg);
	return 0;
}

static bool bad_qty(double v)
{
	return !isnan(v) && !(v >= 0 && isfinite(v));
}

static int check_record(struct gf__charge_run *x, size_t r)
{
	const struct gf_charge_input *in = x->in;
	const struct gf_charge_opts *o = x->o;
	const struct gf_charge_record *rec = &in->rec[r];
	x->rnode[r] = GF__NONE;
	x->units[r] = 0;
	if (rec->end_ms < rec->start_ms)
		return gf__charge_bad(x, r, "'end' is before 'start'");
	if (bad_qty(rec->gpus))
		return gf__charge_bad(x, r, "'gpus' must be a number >= 0");
	if (bad_qty(rec->cpu_req) || bad_qty(rec->cpu_use))
		return gf__charge_bad(x, r,
				      "'cpu_req' and 'cpu_use' must be "
				      "numbers >= 0");
	if (bad_qty(rec->ram_req) || bad_qty(rec->ram_use))
		return gf__charge_bad(x, r,
				      "'ram_req_gib' and 'ram_use_gib' must be "
				      "numbers >= 0");
	if (bad_qty(rec->other_cost))
		return gf__charge_bad(x, r, "'other_cost' must be >= 0");
	int64_t s = rec->start_ms > o->start_ms ? rec->start_ms : o->start_ms;
	int64_t t = rec->end_ms < o->end_ms ? rec->end_ms : o->end_ms;
	uint32_t k[2] = { rec->cluster, rec->node };
	uint32_t node = gf__tab_find(&x->nodes, k);
	int rc = record_units(x, r, node);
	if (rc || x->skip[r] || t <= s)
		return rc;
	if (node == GF__NONE)
		return gf__charge_bad(x, r,
				      "node '%s' of cluster '%s' has no asset "
				      "row",
				      gf_charge_str(in, rec->node),
				      gf_charge_str(in, rec->cluster));
	if (covered(x, &x->node[node], s, t) != t - s) {
		char ts[40], te[40];
		gf_charge_time_str(s, ts, sizeof(ts));
		gf_charge_time_str(t, te, sizeof(te));
		return gf__charge_bad(
			x, r,
			"runs on node '%s' between %s and %s, "
			"where its asset rows do not cover it all",
			gf_charge_str(in, rec->node), ts, te);
	}
	x->rnode[r] = node;
	return 0;
}

struct tele_key {
	int64_t start;
	uint32_t idx;
};

static int cmp_tele(const void *a, const void *b)
{
	const struct tele_key *p = a, *q = b;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/* Telemetry rows by (node name, GPU id), each slot's by start. */
static void index_tele(struct gf__charge_run *x)
{
	const struct gf_charge_input *in = x->in;
	uint32_t *slot = gf_reallocarray(NULL, in->ntele + 1, sizeof(*slot));
	for (size_t i = 0; i < in->ntele; i++) {
		uint32_t k[2] = { in->tele[i].node, in->tele[i].gpu };
		slot[i] = gf__tab_get(&x->slots, k, true);
	}
	size_t ns = x->slots.n;
	x->tfirst = gf_calloc(ns + 1, sizeof(*x->tfirst));
	x->tcount = gf_calloc(ns + 1, sizeof(*x->tcount));
	x->trow = gf_reallocarray(NULL, in->ntele + 1, sizeof(*x->trow));
	for (size_t i = 0; i < in->ntele; i++)
		x->tcount[slot[i]]++;
	uint32_t sum = 0;
	for (size_t k = 0; k < ns; k++) {
		x->tfirst[k] = sum;
		sum += x->tcount[k];
		x->tcount[k] = 0;
	}
	struct tele_key *tk = gf_reallocarray(NULL, in->ntele + 1, sizeof(*tk));
	for (size_t i = 0; i < in->ntele; i++) {
		uint32_t at = x->tfirst[slot[i]] + x->tcount[slot[i]]++;
		tk[at].start = in->tele[i].start_ms;
		tk[at].idx = (uint32_t)i;
	}
	for (size_t k = 0; k < ns; k++)
		qsort(tk + x->tfirst[k], x->tcount[k], sizeof(*tk), cmp_tele);
	for (size_t i = 0; i < in->ntele; i++)
		x->trow[i] = tk[i].idx;
	gf_free(tk);
	gf_free(slot);
}

int gf__charge_prepare(struct gf__charge_run *x)
{
	const struct gf_charge_input *in = x->in;
	gf__tab_init(&x->nodes, 2);
	gf__tab_init(&x->slots, 2);
	x->rnode = gf_reallocarray(NULL, in->nrec + 1, sizeof(*x->rnode));
	x->units = gf_reallocarray(NULL, in->nrec + 1, sizeof(*x->units));
	x->skip = gf_calloc(in->nrec + 1, 1);
	int rc = build_nodes(x);
	for (size_t r = 0; r < in->nrec && rc == 0; r++)
		rc = check_record(x, r);
	if (rc == 0)
		index_tele(x);
	return rc;
}

void gf__charge_run_release(struct gf__charge_run *x)
{
	gf__tab_release(&x->nodes);
	gf__tab_release(&x->slots);
	gf_free(x->node);
	gf_free(x->arow);
	gf_free(x->rnode);
	gf_free(x->units);
	gf_free(x->skip);
	gf_free(x->tfirst);
	gf_free(x->tcount);
	gf_free(x->trow);
}

/* --- capacity ------------------------------------------------------------ */

/* What one sweep checks: records recs[0..n) holding u[i] each, against
 * a fixed capacity (cap >= 0) or their node's asset GPUs (cap < 0). */
struct sweep {
	const uint32_t *recs;
	const double *u;
	size_t n;
	uint32_t node;
	double cap;
	const char *what; /* "node 'n1'", "GPU '3' of node 'n1'" */
};

static double cap_at(const struct gf__charge_run *x, uint32_t node, int64_t t)
{
	const struct gf__charge_node *n = &x->node[node];
	for (uint32_t j = 0; j < n->n; j++) {
		const struct gf_charge_asset *a =
			&x->in->asset[x->arow[n->first + j]];
		if (a->start_ms <= t && t < a->end_ms)
			return a->gpus;
	}
	return 0;
}

static int64_t clip_s(const struct gf__charge_run *x, uint32_t r)
{
	int64_t s = x->in->rec[r].start_ms;
	return s > x->o->start_ms ? s : x->o->start_ms;
}

static int64_t clip_t(const struct gf__charge_run *x, uint32_t r)
{
	int64_t t = x->in->rec[r].end_ms;
	return t < x->o->end_ms ? t : x->o->end_ms;
}

/* The strict failure: name the records holding the GPU at t. */
static int over(struct gf__charge_run *x, const struct sweep *w, size_t i,
		int64_t t, double load, double cap)
{
	char list[900] = "", where[GF_CHARGE_STR_MAX + 32], ts[40];
	size_t len = 0, named = 0, more = 0;
	for (size_t j = 0; j <= w->n; j++) {
		size_t k = j < w->n ? j : i; /* the newcomer last */
		if (j < w->n &&
		    (j == i || x->skip[w->recs[j]] ||
		     clip_s(x, w->recs[j]) > t || clip_t(x, w->recs[j]) <= t))
			continue;
		if (named >= 4 && k != i) {
			more++;
			continue;
		}
		const struct gf_charge_record *rec = &x->in->rec[w->recs[k]];
		gf__charge_where(x->in, rec->src, rec->line, where,
				 sizeof(where));
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					named ? ", " : "", where);
		if (len >= sizeof(list))
			len = sizeof(list) - 1;
		named++;
	}
	gf_charge_time_str(t, ts, sizeof(ts));
	if (more)
		gf_note(list + len, sizeof(list) - len, " and %zu more", more);
	return gf_err_set(x->e, GF_EINVAL,
			  "records %s overlap on %s at %s: they hold %.6g GPUs "
			  "of %.6g",
			  list, w->what, ts, load, cap);
}

static int sweep_run(struct gf__charge_run *x, const struct sweep *w,
		     uint64_t *a, uint64_t *b, uint64_t *tmp)
{
	int64_t ws = x->o->start_ms;
	for (size_t i = 0; i < w->n; i++) {
		a[i] = ((uint64_t)(clip_s(x, w->recs[i]) - ws) << 24) | i;
		b[i] = ((uint64_t)(clip_t(x, w->recs[i]) - ws) << 24) | i;
	}
	gf__charge_sort_u64(a, tmp, w->n);
	gf__charge_sort_u64(b, tmp, w->n);
	double load = 0;
	size_t j = 0;
	for (size_t k = 0; k < w->n; k++) {
		uint64_t ts = a[k] >> 24;
		while (j < w->n && (b[j] >> 24) <= ts) {
			size_t e = b[j++] & 0xffffff;
			if (!x->skip[w->recs[e]])
				load -= w->u[e];
		}
		size_t i = a[k] & 0xffffff;
		int64_t t = (int64_t)ts + ws;
		double cap = w->cap >= 0 ? w->cap : cap_at(x, w->node, t);
		if (load + w->u[i] <= cap + EPS) {
			load += w->u[i];
			continue;
		}
		if (!x->o->lenient)
			return over(x, w, i, t, load + w->u[i], cap);
		char ts_s[40];
		gf_charge_time_str(t, ts_s, sizeof(ts_s));
		gf__charge_bad(x, w->recs[i],
			       "with the records before it, holds %.6g GPUs of "
			       "%.6g on %s at %s",
			       load + w->u[i], cap, w->what, ts_s);
	}
	return 0;
}

/* The records (of a node, or naming a GPU) with their units. */
struct list {
	uint32_t *rec;
	double *u;
	size_t n, alloc;
};

static void list_add(struct list *l, uint32_t r, double u)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 64;
		l->rec = gf_reallocarray(l->rec, l->alloc, sizeof(*l->rec));
		l->u = gf_reallocarray(l->u, l->alloc, sizeof(*l->u));
	}
	l->rec[l->n] = r;
	l->u[l->n++] = u;
}

static int run_lists(struct gf__charge_run *x, struct list *l, size_t nl,
		     const struct gf__tab *gpus)
{
	size_t most = 0;
	for (size_t k = 0; k < nl; k++)
		most = l[k].n > most ? l[k].n : most;
	if (most >= (1u << 24))
		return gf_err_set(x->e, GF_ETOOBIG,
				  "more than 16777215 records on one node in "
				  "the window");
	uint64_t *buf = gf_reallocarray(NULL, 3 * most + 3, sizeof(*buf));
	int rc = 0;
	for (size_t k = 0; k < nl && rc == 0; k++) {
		char what[2 * GF_CHARGE_STR_MAX + 40];
		struct sweep w = { l[k].rec, l[k].u, l[k].n, 0, -1, what };
		if (gpus) {
			const uint32_t *t = gf__tab_tuple(gpus, (uint32_t)k);
			w.node = t[0];
			w.cap = 1;
			gf_note(what, sizeof(what), "GPU '%s' of node '%s'",
				gf_charge_str(x->in, t[1]),
				gf_charge_str(x->in, x->node[t[0]].node));
		} else {
			w.node = (uint32_t)k;
			gf_note(what, sizeof(what), "node '%s'",
				gf_charge_str(x->in, x->node[k].node));
		}
		rc = sweep_run(x, &w, buf, buf + most + 1, buf + 2 * most + 2);
	}
	gf_free(buf);
	return rc;
}

int gf__charge_capacity(struct gf__charge_run *x)
{
	const struct gf_charge_input *in = x->in;
	size_t nn = x->nodes.n;
	struct list *byn = gf_calloc(nn + 1, sizeof(*byn));
	struct gf__tab gpus;
	gf__tab_init(&gpus, 2);
	struct list *byg = NULL;
	size_t ng_alloc = 0;
	for (size_t r = 0; r < in->nrec; r++) {
		uint32_t node = x->rnode[r];
		if (node == GF__NONE || !(x->units[r] > 0))
			continue;
		list_add(&byn[node], (uint32_t)r, x->units[r]);
		const struct gf__extra_parts *p =
			&in->extra_ix->parts[in->rec[r].extra];
		for (uint32_t i = 0; i < p->nids; i++) {
			uint32_t k[2] = { node,
					  in->extra_ix->ids[p->id_off + i] };
			uint32_t g = gf__tab_get(&gpus, k, true);
			if (g >= ng_alloc) {
				size_t was = ng_alloc;
				ng_alloc = ng_alloc ? ng_alloc * 2 : 64;
				byg = gf_reallocarray(byg, ng_alloc,
						      sizeof(*byg));
				memset(byg + was, 0,
				       (ng_alloc - was) * sizeof(*byg));
			}
			list_add(&byg[g], (uint32_t)r, x->units[r] / p->nids);
		}
	}
	int rc = run_lists(x, byn, nn, NULL);
	if (rc == 0)
		rc = run_lists(x, byg, gpus.n, &gpus);
	for (size_t k = 0; k < nn; k++) {
		gf_free(byn[k].rec);
		gf_free(byn[k].u);
	}
	for (size_t k = 0; k < gpus.n; k++) {
		gf_free(byg[k].rec);
		gf_free(byg[k].u);
	}
	gf_free(byn);
	gf_free(byg);
	gf__tab_release(&gpus);
	return rc;
}
