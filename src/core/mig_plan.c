/*
 * mig_plan.c - the MIG planner: an integer program over layout patterns.
 *
 * GPUs with the same model and the same current layout form a group.  A
 * pattern is a multiset of instances some valid layout of the model can
 * hold (keeping the group's busy instances where they are).  Variables:
 * x[g][c], how many GPUs of group g take pattern c; y[d][m], instances of
 * demand d served by model m.  Rows: each group's GPUs take one pattern
 * each; y is bounded by the supply of the chosen patterns and, summed
 * over models, by the demand.  Objective, lexicographic through weights:
 *   W1 * (served memory slices) - W2 * (GPUs used) - (GPUs changed)
 * with W2 > #GPUs and W1 > W2 * #GPUs + #GPUs, so no amount of a later
 * term can buy a unit of an earlier one.  Patterns are limited to
 * demanded profiles (and the group's busy and current instances), which
 * keeps the program small: at most a few hundred columns per group.
 */
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpufleet/mig_plan.h>

#include "../util/mem.h"

struct pattern {
	int8_t counts[GF_MIG_MAX_PROFILES];
	int ninst;
};

struct group {
	const struct gf_mig_model *m;
	const struct gf_mig_layout *cur; /* of its first GPU */
	int *gpus;
	int n;
	struct pattern *pat;
	int npat, cap;
	int current; /* pattern index equal to the current layout, or -1 */
	int col0;    /* first GLPK column of x[g][*] */
	int *take;   /* solution: GPUs per pattern */
};

struct collect {
	struct group *g;
	const bool *useful; /* per profile */
};

static bool same_layout(const struct gf_mig_layout *a,
			const struct gf_mig_layout *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		bool found = false;
		for (int j = 0; j < b->n && !found; j++)
			found = a->inst[i].profile == b->inst[j].profile &&
				a->inst[i].start == b->inst[j].start &&
				a->inst[i].busy == b->inst[j].busy;
		if (!found)
			return false;
	}
	return true;
}

static void counts_of(const struct gf_mig_layout *l, int8_t *c)
{
	memset(c, 0, GF_MIG_MAX_PROFILES);
	for (int i = 0; i < l->n; i++)
		c[l->inst[i].profile]++;
}

static int add_pattern(struct group *g, const int8_t *counts)
{
	for (int i = 0; i < g->npat; i++)
		if (memcmp(g->pat[i].counts, counts, GF_MIG_MAX_PROFILES) == 0)
			return i;
	if (g->npat == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 32;
		g->pat = gf_reallocarray(g->pat, (size_t)g->cap,
					 sizeof(*g->pat));
	}
	struct pattern *p = &g->pat[g->npat];
	memcpy(p->counts, counts, GF_MIG_MAX_PROFILES);
	p->ninst = 0;
	for (int i = 0; i < GF_MIG_MAX_PROFILES; i++)
		p->ninst += counts[i];
	return g->npat++;
}

static int collect_layout(const struct gf_mig_layout *l, void *arg)
{
	struct collect *c = arg;
	const struct gf_mig_layout *cur = c->g->cur;
	/* keep every busy instance where it is */
	for (int i = 0; i < cur->n; i++) {
		if (!cur->inst[i].busy)
			continue;
		bool kept = false;
		for (int j = 0; j < l->n && !kept; j++)
			kept = l->inst[j].profile == cur->inst[i].profile &&
			       l->inst[j].start == cur->inst[i].start;
		if (!kept)
			return 0;
	}
	int8_t counts[GF_MIG_MAX_PROFILES];
	counts_of(l, counts);
	int8_t busy[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < cur->n; i++)
		busy[cur->inst[i].profile] += cur->inst[i].busy;
	for (int p = 0; p < GF_MIG_MAX_PROFILES; p++)
		if (counts[p] > busy[p] && !c->useful[p])
			return 0;
	add_pattern(c->g, counts);
	return 0;
}

static void build_patterns(struct group *g, const struct gf_mig_demand *d,
			   int nd)
{
	bool useful[GF_MIG_MAX_PROFILES] = { false };
	for (int k = 0; k < nd; k++) {
		int p = gf_mig_profile_find(g->m, d[k].profile);
		if (p >= 0 && d[k].count > 0)
			useful[p] = true;
	}
	int8_t zero[GF_MIG_MAX_PROFILES] = { 0 };
	bool busy = false;
	for (int i = 0; i < g->cur->n; i++)
		busy |= g->cur->inst[i].busy;
	if (!busy)
		add_pattern(g, zero);
	struct collect c = { g, useful };
	gf_mig_enumerate(g->m, collect_layout, &c);
	int8_t cur[GF_MIG_MAX_PROFILES];
	counts_of(g->cur, cur);
	g->current = add_pattern(g, cur); /* a valid current layout */
}

static int find_demand_mem(const struct group *g, int ng,
			   const struct gf_mig_demand *d, int *mem_max)
{
	int found = 0;
	*mem_max = 0;
	for (int i = 0; i < ng; i++) {
		int p = gf_mig_profile_find(g[i].m, d->profile);
		if (p < 0)
			continue;
		found = 1;
		if (g[i].m->profiles[p].mem > *mem_max)
			*mem_max = g[i].m->profiles[p].mem;
	}
	return found;
}

/* Distinct models of the fleet, for y[d][m]. */
static int fleet_models(const struct group *g, int ng,
			const struct gf_mig_model **out)
{
	int n = 0;
	for (int i = 0; i < ng; i++) {
		bool seen = false;
		for (int k = 0; k < n; k++)
			seen |= out[k] == g[i].m;
		if (!seen)
			out[n++] = g[i].m;
	}
	return n;
}

struct lp {
	glp_prob *p;
	int *ia, *ja;
	double *ar;
	int nz, cap;
};

static void nz(struct lp *lp, int row, int col, double v)
{
	if (lp->nz + 1 >= lp->cap) {
		lp->cap = lp->cap ? lp->cap * 2 : 1024;
		lp->ia = gf_reallocarray(lp->ia, (size_t)lp->cap, sizeof(int));
		lp->ja = gf_reallocarray(lp->ja, (size_t)lp->cap, sizeof(int));
		lp->ar = gf_reallocarray(lp->ar, (size_t)lp->cap,
					 sizeof(double));
	}
	lp->nz++;
	lp->ia[lp->nz] = row;
	lp->ja[lp->nz] = col;
	lp->ar[lp->nz] = v;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Final layout of one GPU for pattern `pat`, keeping what it can. */
static void realise(const struct group *g, const struct gf_mig_gpu *gpu,
		    const struct pattern *pat, bool unchanged,
		    struct gf_mig_gpu_plan *out)
{
	const struct gf_mig_model *m = g->m;
	const struct gf_mig_layout *cur = &gpu->current;
	memset(out, 0, sizeof(*out));
	if (unchanged) {
		out->layout = *cur;
	} else {
		/* try busy + idle instances the pattern still wants, then
		 * busy only */
		for (int attempt = 0; attempt < 2; attempt++) {
			struct gf_mig_layout l = { .n = 0 };
			int want[GF_MIG_MAX_PROFILES];
			for (int p = 0; p < GF_MIG_MAX_PROFILES; p++)
				want[p] = p < m->nprofiles ? pat->counts[p] : 0;
			for (int i = 0; i < cur->n; i++) {
				const struct gf_mig_instance *in =
					&cur->inst[i];
				if ((in->busy || attempt == 0) &&
				    want[in->profile] > 0) {
					l.inst[l.n++] = *in;
					want[in->profile]--;
				}
			}
			if (gf_mig_place(m, want, &l) == 0) {
				out->layout = l;
				break;
			}
		}
	}
	gf_mig_creation_order(m, &out->layout);
	out->used = out->layout.n > 0;
	out->changed = !same_layout(&out->layout, cur);
	for (int i = 0; i < cur->n; i++) {
		bool kept = false;
		for (int j = 0; j < out->layout.n && !kept; j++)
			kept = out->layout.inst[j].profile ==
				       cur->inst[i].profile &&
			       out->layout.inst[j].start == cur->inst[i].start;
		if (!kept)
			out->destroy[out->ndestroy++] = cur->inst[i];
	}
	for (int j = 0; j < out->layout.n; j++) {
		bool existed = false;
		for (int i = 0; i < cur->n && !existed; i++)
			existed =
				out->layout.inst[j].profile ==
					cur->inst[i].profile &&
				out->layout.inst[j].start == cur->inst[i].start;
		if (!existed)
			out->create[out->ncreate++] = out->layout.inst[j];
	}
}

static int group_gpus(const struct gf_mig_gpu *gpus, int ngpus, struct group *g)
{
	int ng = 0;
	for (int i = 0; i < ngpus; i++) {
		int k;
		for (k = 0; k < ng; k++)
			if (g[k].m == gpus[i].model &&
			    same_layout(g[k].cur, &gpus[i].current))
				break;
		if (k == ng) {
			memset(&g[ng], 0, sizeof(g[ng]));
			g[ng].m = gpus[i].model;
			g[ng].cur = &gpus[i].current;
			g[ng].gpus = gf_calloc((size_t)ngpus, sizeof(int));
			ng++;
		}
		g[k].gpus[g[k].n++] = i;
	}
	return ng;
}

int gf_mig_plan(const struct gf_mig_gpu *gpus, int ngpus,
		const struct gf_mig_demand *d, int nd, struct gf_mig_plan *p,
		struct gf_err *e)
{
	memset(p, 0, sizeof(*p));
	if (ngpus <= 0 || ngpus > GF_MIG_MAX_GPUS)
		return gf_err_set(e, GF_EINVAL, "%d GPUs: expected 1 to %d",
				  ngpus, GF_MIG_MAX_GPUS);
	if (nd > GF_MIG_MAX_DEMANDS)
		return gf_err_set(e, GF_EINVAL, "more than %d demands",
				  GF_MIG_MAX_DEMANDS);
	for (int i = 0; i < ngpus; i++) {
		char msg[160];
		if (gpus[i].model == NULL)
			return gf_err_set(e, GF_EINVAL, "GPU %d: no MIG model",
					  i);
		if (gf_mig_layout_check(gpus[i].model, &gpus[i].current, msg,
					sizeof(msg)) != 0)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %d: current layout: %s", i, msg);
	}
	struct group *g = gf_calloc((size_t)ngpus, sizeof(*g));
	int ng = group_gpus(gpus, ngpus, g);
	int rc = 0;
	int dmem[GF_MIG_MAX_DEMANDS];
	for (int k = 0; k < nd; k++) {
		if (d[k].count < 0) {
			rc = gf_err_set(e, GF_EINVAL,
					"demand '%s': negative count",
					d[k].profile);
			goto out;
		}
		if (!find_demand_mem(g, ng, &d[k], &dmem[k])) {
			rc = gf_err_set(e, GF_EINVAL,
					"no GPU of this fleet has profile "
					"'%s' (models: %s%s)",
					d[k].profile, g[0].m->id,
					ng > 1 ? ", ..." : "");
			goto out;
		}
	}
	for (int i = 0; i < ng; i++)
		build_patterns(&g[i], d, nd);
	const struct gf_mig_model *models[32]; /* distinct: < model table */
	int nm = fleet_models(g, ng, models);

	double t0 = now_ms();
	glp_term_out(GLP_OFF);
	struct lp lp = { .p = glp_create_prob() };
	glp_set_obj_dir(lp.p, GLP_MAX);
	double W2 = ngpus + 1.0, W1 = W2 * (ngpus + 1.0) + 1.0;
	int ncol = 0;
	for (int i = 0; i < ng; i++) {
		g[i].col0 = ncol + 1;
		glp_add_cols(lp.p, g[i].npat);
		for (int c = 0; c < g[i].npat; c++) {
			int col = g[i].col0 + c;
			glp_set_col_kind(lp.p, col, GLP_IV);
			glp_set_col_bnds(lp.p, col, GLP_DB, 0, g[i].n);
			double cost = (g[i].pat[c].ninst > 0 ? W2 : 0) +
				      (c != g[i].current ? 1 : 0);
			glp_set_obj_coef(lp.p, col, -cost);
		}
		ncol += g[i].npat;
	}
	/* y[k][m] */
	int ycol0 = ncol + 1;
	if (nd * nm > 0) /* GLPK aborts on zero columns */
		glp_add_cols(lp.p, nd * nm);
	for (int k = 0; k < nd; k++)
		for (int m = 0; m < nm; m++) {
			int col = ycol0 + k * nm + m;
			int pi = gf_mig_profile_find(models[m], d[k].profile);
			double mem = pi >= 0 ? models[m]->profiles[pi].mem : 0;
			glp_set_col_kind(lp.p, col, GLP_CV);
			/* GLPK wants GLP_FX, not GLP_DB, for equal bounds */
			bool open = pi >= 0 && d[k].count > 0;
			glp_set_col_bnds(lp.p, col, open ? GLP_DB : GLP_FX, 0,
					 open ? d[k].count : 0);
			glp_set_obj_coef(lp.p, col, W1 * mem);
		}
	/* rows: groups, supply per (k, m), demand per k */
	int row = glp_add_rows(lp.p, ng + nd * nm + nd);
	for (int i = 0; i < ng; i++, row++) {
		glp_set_row_bnds(lp.p, row, GLP_FX, g[i].n, g[i].n);
		for (int c = 0; c < g[i].npat; c++)
			nz(&lp, row, g[i].col0 + c, 1.0);
	}
	for (int k = 0; k < nd; k++)
		for (int m = 0; m < nm; m++, row++) {
			glp_set_row_bnds(lp.p, row, GLP_UP, 0, 0);
			nz(&lp, row, ycol0 + k * nm + m, 1.0);
			for (int i = 0; i < ng; i++) {
				if (g[i].m != models[m])
					continue;
				int pi = gf_mig_profile_find(g[i].m,
							     d[k].profile);
				if (pi < 0)
					continue;
				for (int c = 0; c < g[i].npat; c++)
					if (g[i].pat[c].counts[pi])
						nz(&lp, row, g[i].col0 + c,
						   -(double)g[i]
							    .pat[c]
							    .counts[pi]);
			}
		}
	for (int k = 0; k < nd; k++, row++) {
		glp_set_row_bnds(lp.p, row, GLP_UP, 0, d[k].count);
		for (int m = 0; m < nm; m++)
			nz(&lp, row, ycol0 + k * nm + m, 1.0);
	}
	glp_load_matrix(lp.p, lp.nz, lp.ia, lp.ja, lp.ar);

	/* the LP relaxation of served slices alone: an upper bound */
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	double *saved = gf_calloc((size_t)ncol + 1, sizeof(double));
	for (int c = 1; c <= ncol; c++) {
		saved[c] = glp_get_obj_coef(lp.p, c);
		glp_set_obj_coef(lp.p, c, 0);
	}
	if (glp_simplex(lp.p, &sm) == 0 && glp_get_status(lp.p) == GLP_OPT)
		p->bound_slices = glp_get_obj_val(lp.p) / W1;
	for (int c = 1; c <= ncol; c++)
		glp_set_obj_coef(lp.p, c, saved[c]);
	gf_free(saved);

	glp_iocp io;
	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.presolve = GLP_ON;
	io.tm_lim = 20000;
	if (getenv("GF_MIG_LP_DUMP"))
		glp_write_lp(lp.p, NULL, getenv("GF_MIG_LP_DUMP"));
	int sr = glp_intopt(lp.p, &io);
	int st = glp_mip_status(lp.p);
	p->solve_ms = now_ms() - t0;
	if ((sr != 0 && sr != GLP_ETMLIM) ||
	    (st != GLP_OPT && st != GLP_FEAS)) {
		rc = gf_err_set(e, GF_ENOTSUP,
				"MIG planner: the solver found no solution "
				"(GLPK status %d, code %d)",
				st, sr);
		goto out_lp;
	}
	p->optimal = st == GLP_OPT;

	/* per-GPU plans: GPUs that can keep their layout do so first */
	p->ngpus = ngpus;
	p->gpus = gf_calloc((size_t)ngpus, sizeof(*p->gpus));
	for (int i = 0; i < ng; i++) {
		/* unchanged GPUs first, then used ones (low indexes get the
		 * work), free ones last */
		int next = 0, norder = 0;
		int *order = gf_calloc((size_t)g[i].npat, sizeof(*order));
		bool cur_empty = g[i].pat[g[i].current].ninst == 0;
		if (!cur_empty)
			order[norder++] = g[i].current;
		for (int c = 0; c < g[i].npat; c++)
			if (c != g[i].current && g[i].pat[c].ninst > 0)
				order[norder++] = c;
		for (int c = 0; c < g[i].npat; c++)
			if ((c == g[i].current && cur_empty) ||
			    (c != g[i].current && g[i].pat[c].ninst == 0))
				order[norder++] = c;
		for (int o = 0; o < norder; o++) {
			int c = order[o];
			int take = (int)lround(
				glp_mip_col_val(lp.p, g[i].col0 + c));
			for (int t = 0; t < take && next < g[i].n; t++) {
				int gi = g[i].gpus[next++];
				realise(&g[i], &gpus[gi], &g[i].pat[c],
					c == g[i].current, &p->gpus[gi]);
			}
		}
		gf_free(order);
	}
	/* totals, from the layouts themselves */
	p->ndemands = nd;
	for (int k = 0; k < nd; k++) {
		long supply = 0;
		for (int i = 0; i < ngpus; i++) {
			const struct gf_mig_layout *l = &p->gpus[i].layout;
			for (int j = 0; j < l->n; j++)
				if (strcmp(gpus[i].model
						   ->profiles[l->inst[j]
								      .profile]
						   .name,
					   d[k].profile) == 0)
					supply++;
		}
		p->served[k] = (int)(supply < d[k].count ? supply : d[k].count);
		p->unserved[k] = d[k].count - p->served[k];
		p->demand_slices += (long)d[k].count * dmem[k];
		for (int m = 0; m < nm; m++) {
			int pi = gf_mig_profile_find(models[m], d[k].profile);
			if (pi >= 0)
				p->served_slices +=
					lround(glp_mip_col_val(
						lp.p, ycol0 + k * nm + m)) *
					models[m]->profiles[pi].mem;
		}
	}
	for (int i = 0; i < ngpus; i++) {
		p->used_gpus += p->gpus[i].used;
		p->changed_gpus += p->gpus[i].changed;
	}
out_lp:
	gf_free(lp.ia);
	gf_free(lp.ja);
	gf_free(lp.ar);
	glp_delete_prob(lp.p);
out:
	for (int i = 0; i < ng; i++) {
		gf_free(g[i].gpus);
		gf_free(g[i].pat);
	}
	gf_free(g);
	return rc;
}

void gf_mig_plan_release(struct gf_mig_plan *p)
{
	gf_free(p->gpus);
	p->ngpus = 0;
}
